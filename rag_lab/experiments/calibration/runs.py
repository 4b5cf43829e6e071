"""The traces a calibration reads (:mod:`rag_lab.experiments.calibration.calibrate`): every candidate's traces of a
sweep run directory, or the ``traces.jsonl`` of an ``rag-lab eval --out`` folder, with the question types
(for the gold cross-check) and what the run was (backend, model, the simulator profile of a simulated run)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_lab.errors import ConfigError, DataFormatError
from rag_lab.llm.sim.profile import SimulatorProfile
from rag_lab.pipeline.trace import Trace

#: The files ``rag-lab eval --out`` writes (:mod:`rag_lab.cli.pipeline_commands`) and a calibration reads.
EVAL_TRACES, EVAL_QUESTIONS, EVAL_SUMMARY = "traces.jsonl", "questions.jsonl", "summary.json"


@dataclass
class CalibrationSource:
    """The traces of one run: ``runs`` of ``(run key, trace)`` (the key tells seeds apart: the same
    prompt on another seed is another draw), question types by id, and what the run was."""

    runs: list[tuple[str, Trace]]
    types: dict[str, str] = field(default_factory=dict)
    description: str = "traces"
    backend: dict[str, Any] = field(default_factory=dict)

    @property
    def sim_profile(self) -> SimulatorProfile | None:
        """The simulator profile the run was made with, when it was a simulated run (for a check column)."""
        profile = self.backend.get("profile")
        if self.backend.get("kind") == "sim" and isinstance(profile, dict):
            return SimulatorProfile.model_validate(profile)
        return None


def read_run(path: str | Path) -> CalibrationSource:
    """The traces of a sweep run directory (``run.sqlite``: every candidate's) or of an ``eval --out``
    folder (``traces.jsonl``, with ``questions.jsonl`` and ``summary.json``)."""
    from rag_lab.experiments.engine.store import RUN_FILE  # (the store loads pandas: not before it is read)

    path = Path(path)
    if (path / RUN_FILE).is_file():
        return _read_sweep(path)
    if (path / EVAL_TRACES).is_file():
        return _read_eval(path)
    if (path / EVAL_QUESTIONS).is_file():
        raise ConfigError(f"{path}: an eval output without traces.jsonl (written by rag-lab eval --out since "
                          "calibration was added): run the eval again with --out")
    raise ConfigError(f"{path}: neither a sweep run directory (run.sqlite) nor an eval output (traces.jsonl)")


def _read_sweep(path: Path) -> CalibrationSource:
    from rag_lab.experiments.engine.results import CandidateTraces
    from rag_lab.experiments.engine.store import RunStore

    store = RunStore.read(path)
    description = store.sweep_description()
    runs: list[tuple[str, Trace]] = []
    types: dict[str, str] = {}
    candidates = store.candidates()
    for cand in candidates:
        for qid, row in store.rows(cand["candidate_id"]).items():
            types[qid] = str(row.get("type", ""))
        traces = CandidateTraces(store, cand["candidate_id"])
        runs += [(f"seed{cand['seed']}", traces[q]) for q in traces]
    backend = description.get("backend", {})
    what = backend.get("model") or (backend.get("profile", {}) or {}).get("name", "")
    description = (f"sweep {path} ({backend.get('kind', '?')} {what}; {len(candidates)} runs, "
                   f"{len(types)} questions, {len(runs)} traces)")
    return CalibrationSource(runs, types, description, backend)


def _read_eval(path: Path) -> CalibrationSource:
    runs = []
    with (path / EVAL_TRACES).open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                runs.append(("eval", Trace.model_validate_json(line)))
            except ValueError as exc:
                raise DataFormatError(path / EVAL_TRACES, f"not a trace: {str(exc).splitlines()[0]}",
                                      line=line_no) from None
    types: dict[str, str] = {}
    if (path / EVAL_QUESTIONS).is_file():
        for line in (path / EVAL_QUESTIONS).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                types[str(row.get("qid"))] = str(row.get("type", ""))
    summary = json.loads((path / EVAL_SUMMARY).read_text(encoding="utf-8")) if (path / EVAL_SUMMARY).is_file() else {}
    backend = {"kind": summary.get("backend", "?"), "model": summary.get("model")}
    if isinstance(summary.get("sim_profile"), dict):
        backend["profile"] = summary["sim_profile"]
    what = summary.get("model") or summary.get("profile") or ""
    description = (f"eval {path} ({backend['kind']} {what}; {summary.get('dataset', '?')}, "
                   f"{len(runs)} questions)")
    return CalibrationSource(runs, types, description, backend)
