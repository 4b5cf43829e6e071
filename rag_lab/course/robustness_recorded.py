"""The robustness table's real-model columns: each headline finding re-tested on a recorded real model. For each
recorded sweep (:data:`RECORDED_SWEEPS`: a shipped sweep file whose backend names a cassette) a finding's
two-candidate sweep is built on its questions and base config and replayed from the cassette: the cell is tested
like every other, says *not recorded* where the cassette lacks a call, and does not exist for a finding that rests
on a simulator knob. ``rag-lab robustness --recorded-only`` recomputes these columns alone (seconds). The method:
docs/decisions.md, "The robustness table"."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_lab.course.robustness import (
    FAMILIES,
    HEADLINE_FINDINGS,
    HeadlineFinding,
    RobustnessTable,
    add_detectable,
    holds,
    tested_cell,
)
from rag_lab.errors import CassetteMiss
from rag_lab.paths import SWEEPS_DIR
from rag_lab.stats.significance import holm

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
    spec.update({"name": f"robustness_{finding.key}_{recorded.name}", "types": recorded.types,
                 "per_type": recorded.per_type, "limit": recorded.limit, "split": recorded.split,
                 "base": {**base, **finding.base},
                 "backend": {**recorded.backend.model_dump(), "replay": True}})
    return spec


def recorded_cell(finding: HeadlineFinding, label: str, sweep_file: Path, work_dir: Path) -> dict[str, Any]:
    """One real-model cell: tested, ``not recorded`` (a call the cassette lacks) or ``not applicable``."""
    from rag_lab.experiments.sweep_runner import run_sweep

    spec = recorded_spec(finding, sweep_file)
    if spec is None:
        return {"dataset": label, "status": "not applicable",
                "why": "the finding rests on simulator settings (profile or knobs); a real model has none"}
    try:
        result = run_sweep(spec, work_dir / spec["name"], progress="quiet", overwrite=True)
    except CassetteMiss as miss:
        return {"dataset": label, "status": "not recorded",
                "why": f"the cassette holds no {miss.role} call for {miss.question[:80]!r}"}
    cell = tested_cell(finding, result, label, spec["seeds"][0])
    return {**cell, "status": "tested"}


def add_recorded_columns(table: RobustnessTable, work_dir: str | Path | None = None,
                         sweeps: Mapping[str, Path] = RECORDED_SWEEPS) -> RobustnessTable:
    """``table`` with a ``recorded`` list of real-model cells on every finding row (replacing any), Holm over
    the tested ones within each family, and the sweeps' labels in ``table.recorded``."""
    from rag_lab.paths import cache_dir

    work = Path(work_dir) if work_dir is not None else cache_dir() / "robustness_recorded"
    by_key = {f.key: f for f in HEADLINE_FINDINGS}
    for row in table.findings:
        finding = by_key[row["key"]]
        row["recorded"] = [recorded_cell(finding, label, Path(path), work) for label, path in sweeps.items()]
    for family in FAMILIES:
        tested = [(row, c) for row in table.findings if row.get("family") == family
                  for c in row["recorded"] if c["status"] == "tested"]
        for (row, cell), p_holm in zip(tested, holm([c["p"] for _, c in tested]), strict=True):
            cell["p_holm"] = p_holm
            cell["holds"] = holds(row, cell, table.alpha)
        for row, cell in tested:
            add_detectable(row, [cell], table.alpha, len(tested))
    table.recorded = list(sweeps)
    return table
