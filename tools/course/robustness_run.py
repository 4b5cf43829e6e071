"""Re-running the headline findings (:data:`lessons.robustness.HEADLINE_FINDINGS`): each in every cell
of its datasets — the world and the shipped HotpotQA and MuSiQue samples, or, for a claim on unanswerable questions,
the world's unanswerable questions and the samples' unanswerable twins; each with simulator seeds 0 and 1 — by
re-running the lesson's sweep that states it (:func:`rag_lab.experiments.robustness.rerun_findings`: the claim's one
test in every cell), with Holm within its family (:func:`run_robustness`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lessons.robustness import (
    ALPHA,
    FAMILIES,
    HEADLINE_FINDINGS,
    REAL_LIMIT,
    SEEDS,
    HeadlineFinding,
    RobustnessTable,
)
from lessons.robustness import (
    finding as headline_finding,
)
from rag_lab.errors import ConfigError
from rag_lab.stats.significance import holm

__all__ = ["add_detectable", "holds", "run_robustness", "tested_cell"]


# --- the cells -----------------------------------------------------------------------------------------


def _cells(finding: HeadlineFinding, datasets: Sequence[str], seeds: Sequence[int], real_limit: int, work_dir: Path,
           on_cell: Callable[[str, dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Re-run the lesson sweep stating ``finding`` on each of ``datasets`` × ``seeds``
    (:func:`rag_lab.experiments.robustness.rerun_findings`, resumable in ``work_dir``) and give its cells (p not yet
    corrected over the table)."""
    from rag_lab.experiments.robustness import rerun_findings
    from rag_lab.llm.simulator import SIM_VERSION

    cells: list[dict[str, Any]] = []

    def finished(record: dict[str, Any]) -> None:
        cells.append(_as_cell(finding, record))
        if on_cell is not None:
            on_cell(finding.key, cells[-1])

    # a new simulator never resumes an old one's rows
    rerun_findings(finding.sweep(), datasets, seeds, work_dir / SIM_VERSION, limit=finding.real_limit(real_limit),
                   on_cell=finished)
    return cells


def _as_cell(finding: HeadlineFinding, record: Mapping[str, Any]) -> dict[str, Any]:
    """A re-run's record of ``finding`` as the table's cell: its numbers, and whether its sign agrees with the claim."""
    cell = {k: v for k, v in record.items() if k not in ("finding", "name")}
    if finding.direction == "none":
        cell["agrees"] = bool(abs(cell["delta"]) < finding.margin)  # type: ignore[operator]
    else:
        cell["agrees"] = bool((1.0 if finding.direction == "above" else -1.0) * cell["delta"] > 0)
    return cell


def tested_cell(finding: HeadlineFinding, result: Any, dataset: str, seed: int) -> dict[str, Any]:
    """The cell of ``finding`` from a finished two-candidate sweep that states it (p not yet corrected), as
    :func:`rag_lab.experiments.robustness.tested_findings` tests it (flagged twins left out)."""
    from rag_lab.experiments.robustness import tested_findings

    (record,) = tested_findings(result)
    return _as_cell(finding, {"dataset": dataset, "seed": seed, **record})


def add_detectable(row: Mapping[str, Any], cells: Sequence[dict[str, Any]], alpha: float, family_size: int) -> None:
    """Give each of ``cells`` (tested, with ``holds`` set) that does not hold the smallest effect its sample could
    have detected (:func:`rag_lab.stats.power.detectable`: 80% power, the claim's own test) at Holm's strictest
    level over the ``family_size`` cells of its family, ``alpha / family_size``: at that effect the cell would be
    shown whatever the other cells show."""
    from rag_lab.evaluation.catalog import value_range
    from rag_lab.stats.power import Differences, detectable

    level = alpha / max(1, family_size)
    for cell in cells:
        if cell["holds"] or "differences" not in cell:
            continue
        found = detectable(Differences(**cell["differences"]), direction=row["direction"], alpha=level,
                           margin=row.get("margin"), value_range=value_range(row["metric"]))
        cell["detectable"] = {"effect": found.effect, "bound": found.bound, "text": found.text}


def holds(finding: HeadlineFinding | Mapping[str, Any], cell: Mapping[str, Any], alpha: float) -> bool:
    """Whether a tested cell shows its finding: the one rule (:func:`rag_lab.stats.holds.holds`) on its Holm p."""
    from rag_lab.stats.holds import holds as shows

    direction, margin = ((finding["direction"], finding.get("margin")) if isinstance(finding, Mapping)
                         else (finding.direction, finding.margin))
    return shows(direction, cell["p_holm"], cell["lo"], cell["hi"], alpha, delta=cell["delta"],
                 margin=float(margin or 0.0), n=cell["n"])


def run_robustness(
    findings: Iterable[str] | None = None,
    datasets: Sequence[str] | None = None,
    seeds: Sequence[int] = SEEDS,
    real_limit: int = REAL_LIMIT,
    work_dir: str | Path | None = None,
    alpha: float = ALPHA,
    on_cell: Callable[[str, dict[str, Any]], None] | None = None,
) -> RobustnessTable:
    """Run every registered finding (or the ``findings`` named) on each of its datasets (only those among
    ``datasets`` when given; a finding left with none is not run) × seed and build the table (see the module
    doc); the table's ``datasets`` are those of its findings, in order of first use. ``work_dir`` keeps each
    cell's sweep (resumable; default ``$RAG_LAB_CACHE/robustness``); ``on_cell(key, cell)`` is called as each
    cell finishes."""
    from rag_lab.llm.simulator import SIM_VERSION
    from rag_lab.paths import cache_dir

    chosen = [headline_finding(k) for k in findings] if findings is not None else list(HEADLINE_FINDINGS)
    if datasets is not None:
        chosen = [f for f in chosen if any(d in datasets for d in f.datasets)]
    if not chosen or not seeds:
        raise ConfigError("the robustness table needs at least one finding on one of its datasets, and one seed")
    if isinstance(real_limit, bool) or not isinstance(real_limit, int) or real_limit < 2:
        raise ConfigError(f"real_limit must be an integer >= 2, got {real_limit!r}")
    work = Path(work_dir) if work_dir is not None else cache_dir() / "robustness"
    start = time.perf_counter()
    rows, used = [], []
    for finding in chosen:
        chosen_datasets = [d for d in finding.datasets if datasets is None or d in datasets]
        used += [d for d in chosen_datasets if d not in used]
        cells = _cells(finding, chosen_datasets, seeds, real_limit, work, on_cell)
        row = {k: (dict(v) if isinstance(v, Mapping) else list(v) if isinstance(v, tuple) else v)
               for k, v in asdict(finding).items()}
        rows.append({**row, "cells": cells})
    for family in FAMILIES:   # Holm within each family the registry declares
        members = [(row, finding) for row, finding in zip(rows, chosen, strict=True) if finding.family == family]
        adjusted = iter(holm([c["p"] for row, _ in members for c in row["cells"]]))
        for row, finding in members:
            row["family"] = family
            for cell in row["cells"]:
                cell["p_holm"] = next(adjusted)
                cell["holds"] = holds(finding, cell, alpha)
        size = sum(len(row["cells"]) for row, _ in members)
        for row, _ in members:
            add_detectable(row, row["cells"], alpha, size)
    for row in rows:
        n = len(row["cells"])
        row["summary"] = {"cells": n, "agree": sum(c["agrees"] for c in row["cells"]),
                          "hold": sum(c["holds"] for c in row["cells"])}
    return RobustnessTable(SIM_VERSION, rows, used, list(seeds), real_limit, alpha,
                           round(time.perf_counter() - start, 1))
