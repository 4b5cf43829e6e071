"""The robustness table's real-model columns: each headline finding re-tested on a recorded real model. For each
recorded sweep (:data:`RECORDED_SWEEPS`: a shipped sweep file whose backend names a cassette) a finding's
two-candidate sweep is built on its questions and base config and replayed from the cassette: the cell is tested
like every other, says *not recorded* where the cassette lacks a call, and is *not applicable* to a finding that
rests on a simulator knob or, for a finding that names its own datasets (a claim on unanswerable questions), to a
recording that holds none of its questions. Where the cassette lacks the finding's reference arm because the
recording ran that setting at other values (the v3 study ran the round cap at 1 and 3, not 2), the cell is measured
on the recording's own arms and says so (``measured_as``); when a study declared that very contrast
(:mod:`tools.course.robustness_study`), the cell is the study's declared claim, with its verdict, not tested again.
``python -m tools.course robustness --recorded-only`` recomputes these columns alone. The method: docs/decisions.md, "The
robustness table"."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lessons.robustness import CELL_DATASETS, FAMILIES, HEADLINE_FINDINGS, HeadlineFinding, RobustnessTable
from rag_lab.errors import CassetteMiss
from rag_lab.paths import SWEEPS_DIR
from rag_lab.stats.significance import holm
from tools.course.robustness_run import add_detectable, holds, tested_cell
from tools.course.robustness_study import declared_cell

#: Each real-model column: its label and the recorded sweep file it replays.
RECORDED_SWEEPS: dict[str, Path] = {
    "Qwen2.5-Coder-1.5B, hotpotqa_sample (recorded)": SWEEPS_DIR / "real_qwen_hotpotqa.yaml",
    "Qwen2.5-Coder-1.5B, prompts v2, hotpotqa_sample (recorded)": SWEEPS_DIR / "real_qwen_hotpotqa_v2.yaml",
    "Qwen2.5-Coder-1.5B, prompts v2, musique_sample (recorded)": SWEEPS_DIR / "real_qwen_musique_v2.yaml",
    "Qwen2.5-Coder-1.5B, prompts v2, world (recorded)": SWEEPS_DIR / "real_qwen_world_v2.yaml",
    "Qwen2.5-Coder-1.5B, prompts v3, hotpotqa_sample (recorded)": SWEEPS_DIR / "real_qwen_hotpotqa_v3.yaml",
    "Qwen2.5-Coder-1.5B, prompts v3, musique_sample (recorded)": SWEEPS_DIR / "real_qwen_musique_v3.yaml",
}


def recorded_spec(finding: HeadlineFinding, sweep_file: Path) -> dict[str, Any] | None:
    """The finding's two-candidate sweep on the recorded sweep's questions and base, replayed; None when the
    finding rests on simulator settings (a profile other than ``typical`` or knob overrides)."""
    from rag_lab.experiments.engine.sweep_file import load_sweep_spec

    if finding.knobs or finding.profile != "typical":
        return None
    recorded = load_sweep_spec(sweep_file)
    spec = finding.spec(recorded.dataset, recorded.seeds[0], 2)
    base = recorded.base if isinstance(recorded.base, dict) else {}
    types = recorded.types
    if tuple(finding.datasets) != CELL_DATASETS and recorded.dataset == "world" and finding.world_types:
        types = [t for t in (recorded.types or finding.world_types) if t in finding.world_types]  # its own questions
    spec.update({"name": f"robustness_{finding.key}_{recorded.name}", "types": types,
                 "per_type": recorded.per_type, "limit": recorded.limit, "split": recorded.split,
                 "base": {**base, **finding.base},
                 "backend": {**recorded.backend.model_dump(), "replay": True}})
    return spec


def outside(finding: HeadlineFinding, sweep_file: Path) -> str | None:
    """Why the recorded sweep holds none of the questions of a finding that names its own datasets (a claim on
    unanswerable questions): its dataset is not one of them, or, on the world, none of its types is the finding's.
    None when it holds some, or the finding runs on the default datasets (every recording applies to those)."""
    from rag_lab.experiments.engine.sweep_file import load_sweep_spec

    if tuple(finding.datasets) == CELL_DATASETS:
        return None
    recorded = load_sweep_spec(sweep_file)
    if recorded.dataset not in finding.datasets:
        return f"the finding is tested on {', '.join(finding.datasets)}; the recording is on {recorded.dataset}"
    if recorded.dataset == "world" and finding.world_types and recorded.types is not None \
            and not set(recorded.types) & set(finding.world_types):
        return (f"the finding is on the world's {', '.join(finding.world_types)} questions; the recording holds "
                f"{', '.join(recorded.types)}")
    return None


def recorded_arms(finding: HeadlineFinding, sweep_file: Path) -> HeadlineFinding | None:
    """The finding on the recording's own arms, where it ran the finding's reference setting at other values: each
    reference value the recording never ran, of a setting its grid varies, becomes the recording's base value (its
    reference arm), the candidate kept (it must be one the recording ran). None when nothing needs mapping or the
    candidate was not run."""
    from rag_lab.experiments.engine.sweep_file import load_sweep_spec

    recorded = load_sweep_spec(sweep_file)
    base = recorded.base if isinstance(recorded.base, dict) else {}
    grids = recorded.grid if isinstance(recorded.grid, list) else [recorded.grid]
    varied: dict[str, list[Any]] = {}
    for grid in grids:
        for key, values in (grid or {}).items():
            varied.setdefault(key, []).extend(values if isinstance(values, list) else [values])
    reference = dict(finding.reference)
    for key, value in finding.reference.items():
        ran = varied.get(key, []) + ([base[key]] if key in base else [])
        if key in varied and key in base and value not in ran and finding.candidate.get(key, base[key]) in ran:
            reference[key] = base[key]
    return None if reference == dict(finding.reference) else dataclasses.replace(finding, reference=reference)


def measured_label(mapped: HeadlineFinding) -> str:
    """The arms a cell was measured on, short: ``max_rounds 1 vs 3`` (each setting by its last name)."""
    return ", ".join(f"{key.rsplit('.', 1)[-1]} {mapped.candidate.get(key)} vs {value}"
                     for key, value in mapped.reference.items())


def recorded_cell(finding: HeadlineFinding, label: str, sweep_file: Path, work_dir: Path,
                  studies: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """One real-model cell: tested, ``not recorded`` (a call the cassette lacks) or ``not applicable``; where the
    cassette lacks the finding's reference arm, measured on the recording's arms (:func:`recorded_arms`), and taken
    from the study row of ``studies`` that declared that contrast on this column, if any (``declared``)."""
    from rag_lab.experiments.sweep_runner import run_sweep

    spec = recorded_spec(finding, sweep_file)
    if spec is None:
        return {"dataset": label, "status": "not applicable",
                "why": "the finding rests on simulator settings (profile or knobs); a real model has none"}
    why = outside(finding, sweep_file)
    if why is not None:
        return {"dataset": label, "status": "not applicable", "why": why}
    try:
        result = run_sweep(spec, work_dir / spec["name"], progress="quiet", overwrite=True)
    except CassetteMiss as miss:
        missed = {"dataset": label, "status": "not recorded",
                  "why": f"the cassette holds no {miss.role} call for {miss.question[:80]!r}"}
        mapped = recorded_arms(finding, sweep_file)
        if mapped is None:
            return missed
        measured_as = measured_label(mapped)
        found = declared_cell(studies, label, mapped.metric, mapped.candidate, mapped.reference, mapped.direction,
                              mapped.margin)
        if found is not None:
            return {**found[1], "measured_as": measured_as, "declared": found[0]}
        try:
            result = run_sweep(recorded_spec(mapped, sweep_file), work_dir / f"{spec['name']}_as_recorded",
                               progress="quiet", overwrite=True)
        except CassetteMiss:
            return missed
        return {**tested_cell(mapped, result, label, spec["seeds"][0]), "status": "tested", "measured_as": measured_as}
    cell = tested_cell(finding, result, label, spec["seeds"][0])
    return {**cell, "status": "tested"}


def add_recorded_columns(table: RobustnessTable, work_dir: str | Path | None = None,
                         sweeps: Mapping[str, Path] = RECORDED_SWEEPS) -> RobustnessTable:
    """``table`` with a ``recorded`` list of real-model cells on every finding row (replacing any), Holm over
    the tested ones within each family (but a study's declared claim, corrected within its declared family: the
    study rows of ``table.studies``), and the sweeps' labels in ``table.recorded``."""
    from rag_lab.paths import cache_dir

    work = Path(work_dir) if work_dir is not None else cache_dir() / "robustness_recorded"
    by_key = {f.key: f for f in HEADLINE_FINDINGS}
    for row in table.findings:
        finding = by_key[row["key"]]
        row["recorded"] = [recorded_cell(finding, label, Path(path), work, table.studies)
                           for label, path in sweeps.items()]
    for family in FAMILIES:
        tested = [(row, c) for row in table.findings if row.get("family") == family
                  for c in row["recorded"] if c["status"] == "tested" and "declared" not in c]
        for (row, cell), p_holm in zip(tested, holm([c["p"] for _, c in tested]), strict=True):
            cell["p_holm"] = p_holm
            cell["holds"] = holds(row, cell, table.alpha)
        for row, cell in tested:
            add_detectable(row, [cell], table.alpha, len(tested))
    table.recorded = list(sweeps)
    return table
