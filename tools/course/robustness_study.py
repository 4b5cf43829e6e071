"""The robustness table's study rows: the contrasts a recorded real-model study declared, as the study tested them.
Each study (:data:`STUDIES`: its sweep files, by the real-model column they sit in) is replayed from its cassettes
and its declared claims tested by :func:`~rag_lab.experiments.engine.findings.sweep_findings` — on the questions
outside its ``pilot:`` (:func:`~rag_lab.experiments.engine.findings.claim_qids`), each p corrected within its file's
declared family (fixed sequence) — so a cell's verdict is the one its study page and ``data/recorded/*_claims.json``
give; beside it, Holm's p over every claim of the study. One row per contrast (the same claim in two files is one
row with two cells). A part still being recorded (:data:`RECORDING`) is tested on what its cassette holds at its sweep file's
``per_type``, and its cells say so. The method: docs/decisions.md, "The robustness table"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rag_lab.errors import CassetteMiss, ConfigError
from rag_lab.paths import SWEEPS_DIR
from rag_lab.stats.significance import holm

#: Each study: the real-model column (a label as in :data:`~tools.course.robustness_recorded.RECORDED_SWEEPS`)
#: → the sweep files of its parts recorded on that column's data.
STUDIES: dict[str, dict[str, tuple[Path, ...]]] = {
    "v3": {
        "Qwen2.5-Coder-1.5B, prompts v3, hotpotqa_sample (recorded)": (
            SWEEPS_DIR / "real_qwen_hotpotqa_v3.yaml", SWEEPS_DIR / "real_qwen_hotpotqa_v3_answer.yaml"),
        "Qwen2.5-Coder-1.5B, prompts v3, musique_sample (recorded)": (
            SWEEPS_DIR / "real_qwen_musique_v3.yaml", SWEEPS_DIR / "real_qwen_musique_disclosure.yaml"),
    },
    "twins": {
        "Qwen2.5-Coder-1.5B, prompts v3, hotpotqa_sample_twins (recorded)": (
            SWEEPS_DIR / "real_qwen_hotpotqa_twins.yaml",),
        "Qwen2.5-Coder-1.5B, prompts v3, musique_sample_twins (recorded)": (
            SWEEPS_DIR / "real_qwen_musique_twins.yaml",),
    },
    "disclosure": {
        "Qwen2.5-Coder-1.5B, prompts v4, hotpotqa_sample (recorded)": (
            SWEEPS_DIR / "real_qwen_hotpotqa_disclosure.yaml",),
    },
}
#: The parts (sweep names) still being recorded, below their declared size: their cells are provisional.
RECORDING: frozenset[str] = frozenset()


def _settings(settings: Mapping[str, Any] | str | None, base: Mapping[str, Any]) -> dict[str, Any]:
    """A claim's arm as dotted settings; ``None`` (the base config) as the base's values of ``base``'s keys."""
    if settings is None:
        return dict(base)
    if isinstance(settings, str):
        raise ConfigError(f"a study row needs each arm as dotted settings, not the candidate id {settings!r}")
    return dict(settings)


def arms(claim: Any, result: Any, base: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A declared claim's (candidate, reference) as dotted settings; a reference left to the sweep (its base config)
    as that config's values of the candidate's keys (from the replayed ``result``; without one, the sweep's base)."""
    candidate = _settings(claim.candidate, {})
    if claim.reference is None and result is not None:
        config = result.config_of(result.reference()["config_id"])
        return candidate, {k: config.get(k) for k in candidate}
    return candidate, _settings(claim.reference, {k: base.get(k) for k in candidate})


def contrast(claim: Any, candidate: Mapping[str, Any], reference: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two declared claims the same contrast: metric, arms, direction, margin and what a value is (a
    question or a pair)."""
    return (claim.metric, tuple(sorted(candidate.items())), tuple(sorted(reference.items())), claim.direction,
            claim.margin, claim.over)


def row_key(study: str, claim: Any) -> str:
    """A study row's key: ``v3_max_rounds_1_calls`` (the study, the candidate's settings, the metric's last word)."""
    arm = "_".join(f"{k.rsplit('.', 1)[-1]}_{v}" for k, v in _settings(claim.candidate, {}).items())
    return f"{study}_{arm}_{claim.metric.rsplit('_', 1)[-1]}".lower().replace(".", "_")


def replay(path: Path) -> Any:
    """The sweep file ``path`` replayed from its cassette (its other half too, for a sweep of pairs)."""
    from lessons.notebook import lesson_sweep

    return lesson_sweep(path, replay=True)


def _cell(label: str, spec: Any, index: int, finding: Any, n_questions: int) -> dict[str, Any]:
    """One declared claim's cell (``index``: its place in its file's family, from 1)."""
    agrees = (abs(finding.delta) < finding.margin if finding.direction == "none" else
              (finding.delta > 0) == (finding.direction == "above") and finding.delta != 0)
    cell = {"dataset": label, "status": "tested", "part": spec.name, "index": index, "claim": finding.claim,
            "n": finding.n, "delta": finding.delta, "lo": finding.lo, "hi": finding.hi, "p": finding.p,
            "test": finding.method, "n_better": finding.n_better, "n_worse": finding.n_worse,
            "p_family": finding.p_adjusted, "correction": f"fixed sequence within {spec.name}, as declared",
            "holds": bool(finding.holds), "agrees": bool(agrees),
            "detectable": None if finding.detectable is None else {"text": finding.detectable.text},
            "pilot_left_out": len(spec.pilot or ()), "questions": n_questions}
    if spec.name in RECORDING:
        cell["provisional"] = (f"the study is still being recorded: tested on what the cassette holds at the sweep "
                               f"file's per_type ({spec.per_type} a type, {n_questions} questions)")
    return cell


def _unrecorded(label: str, spec: Any, index: int, claim: Any, miss: CassetteMiss) -> dict[str, Any]:
    return {"dataset": label, "status": "not recorded", "part": spec.name, "index": index, "claim": claim.claim,
            "why": f"the cassette holds no {miss.role} call for {miss.question[:80]!r} at per_type {spec.per_type}"}


def study_rows(studies: Mapping[str, Mapping[str, Sequence[Path]]] = STUDIES) -> list[dict[str, Any]]:
    """Every declared claim of every study as a cell of its contrast's row (in the order declared), with Holm's p
    over the study's claims (``p_study``) beside its family's."""
    from rag_lab.experiments.engine.findings import sweep_findings
    from rag_lab.experiments.engine.sweep_file import load_sweep_spec

    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    for study, columns in studies.items():
        cells = []
        for label, paths in columns.items():
            for path in paths:
                spec = load_sweep_spec(path)
                base = spec.base if isinstance(spec.base, dict) else {}
                result = None
                try:
                    result = replay(Path(path))
                    found: list[Any] = sweep_findings(result)
                    n_questions = len(result.qids)
                except CassetteMiss as miss:
                    found, n_questions = [miss] * len(spec.findings), 0
                for index, (claim, finding) in enumerate(zip(spec.findings, found, strict=True), start=1):
                    cell = (_unrecorded(label, spec, index, claim, finding) if isinstance(finding, CassetteMiss)
                            else _cell(label, spec, index, finding, n_questions))
                    candidate, reference = arms(claim, result, base)
                    row = rows.setdefault((study, *contrast(claim, candidate, reference)),
                                          _row(study, claim, candidate, reference))
                    if any(c["dataset"] == label for c in row["recorded"]):
                        raise ConfigError(f"{row['key']}: two claims of one contrast on one column ({label})")
                    row["recorded"].append(cell)
                    cells.append(cell)
        tested = [c for c in cells if c["status"] == "tested"]
        for cell, p in zip(tested, holm([c["p"] for c in tested]), strict=True):
            cell["p_study"] = p
    keys = [row["key"] for row in rows.values()]
    if len(set(keys)) != len(keys):
        raise ConfigError(f"two study rows share a key: {sorted(k for k in keys if keys.count(k) > 1)}")
    return list(rows.values())


def _row(study: str, claim: Any, candidate: Mapping[str, Any], reference: Mapping[str, Any]) -> dict[str, Any]:
    return {"key": row_key(study, claim), "study": study, "notebook": f"study {study}", "claim": claim.claim,
            "metric": claim.metric, "candidate": dict(candidate), "reference": dict(reference),
            "direction": claim.direction, "margin": claim.margin, "kind": claim.kind, "over": claim.over,
            "family": "declared", "cells": [], "recorded": []}


def declared_cell(rows: Sequence[Mapping[str, Any]], label: str, metric: str, candidate: Mapping[str, Any],
                  reference: Mapping[str, Any], direction: str, margin: float | None) -> tuple[str, dict[str, Any]] | None:
    """The study row and cell on column ``label`` that declared this very contrast (metric, arms, direction,
    margin), if one did: a headline cell measured there takes the study's verdict."""
    for row in rows:
        if (row["metric"], row["candidate"], row["reference"], row["direction"], row["margin"]) == (
                metric, dict(candidate), dict(reference), direction, margin):
            for cell in row["recorded"]:
                if cell["dataset"] == label and cell["status"] == "tested":
                    return row["key"], cell
    return None
