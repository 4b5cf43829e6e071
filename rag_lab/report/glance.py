"""The report's first table, above the scatter: for each candidate (guardrail) against the reference, the paired Δ
of the cost and of the quality column with its interval and whether it is shown, the declared claim on it (its
kind and verdict) and where claims like it hold (the robustness table's row of the same contrast). Plain data read
from the sweep's summary (:func:`glance_table`, what tests compare) and its HTML (:func:`glance_html`, from
``templates/glance_table.html.j2``); prose in ``templates/glance_note.html``."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from markupsafe import Markup

from rag_lab.evaluation.catalog import label
from rag_lab.experiments.engine.findings import kind_text
from rag_lab.experiments.engine.summary import DeltaCell, SweepSummary
from rag_lab.figures import where_grid
from rag_lab.paths import template
from rag_lab.report.render import render

#: The table's columns: candidate, its changes, Δ quality and Δ cost (text), shown or not on each, the claim, where.
COLUMNS = ("candidate_id", "changes", "quality", "quality_verdict", "cost", "cost_verdict", "claim", "where")


def _verdict(cell: DeltaCell) -> str:
    """``shown`` / ``not shown``, as the Δ table below says it (a declared claim's cell: its own verdict)."""
    if cell.declared is not None:
        return "shown (declared, holds)" if cell.declared.holds else "not shown (declared)"
    return "shown" if cell.measured else "not shown"


def rows_alike(robustness: Mapping[str, Any], changed: set[str], metrics: Sequence[str]) -> list[str]:
    """The keys of the robustness table's rows that test a contrast like one that changes the settings ``changed``
    on one of ``metrics``: the same metric and the same settings changed (their values may differ)."""
    return [r["key"] for r in robustness.get("findings", []) if r["metric"] in metrics and set(r["candidate"]) == changed]


def _where(robustness: Mapping[str, Any], changed: set[str], metrics: Sequence[str]) -> str:
    """Where the robustness table's rows of the same settings and one of ``metrics`` hold (one line each)."""
    keys = rows_alike(robustness, changed, metrics)
    if not keys:
        return "–"
    info = where_grid.where_grid_info(robustness, keys)
    return "; ".join(f"{k}: {where_grid.where_line(info, k)}" for k in keys)


def glance_table(summary: SweepSummary, robustness: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """One row per candidate of the summary's Δ table (every candidate but the reference, on its quality and
    cost columns, declared claims marked): :data:`COLUMNS`."""
    quality_col, cost_col = summary.quality_col, summary.cost_col
    by_config: dict[str, list[Any]] = {}
    for f in summary.findings:
        by_config.setdefault(f.candidate_config, []).append(f)
    records = []
    for row in summary.deltas:
        cells = {cell.metric: cell for cell in row.cells}
        q, c = cells[quality_col], cells[cost_col]
        claim_text = "; ".join(f"{kind_text(f)}: {f.mark} — {f.claim}"
                               for f in by_config.get(row.config_id, [])) or "none declared (exploratory)"
        records.append({
            "candidate_id": row.candidate_id, "changes": row.label,
            "quality": q.interval, "quality_verdict": _verdict(q), "cost": c.interval, "cost_verdict": _verdict(c),
            "claim": claim_text, "where": _where(robustness or {}, set(row.changed), (quality_col, cost_col))})
    return pd.DataFrame.from_records(records, columns=list(COLUMNS))


def glance_html(table: pd.DataFrame, reference: str, quality_col: str, cost_col: str) -> str:
    """The note and the table, as HTML (every cell escaped)."""
    heads = ["changes vs reference", f"Δ {label(quality_col)} [95%]", f"Δ {label(cost_col)} [95%]", "claim",
             "where it holds"]
    note = template(__package__, "templates/glance_note.html").substitute(
        reference=html.escape(reference), quality=html.escape(label(quality_col)), cost=html.escape(label(cost_col)))
    rows = [[row["changes"], f"{row['quality']} {row['quality_verdict']}", f"{row['cost']} {row['cost_verdict']}",
             row["claim"], row["where"]] for _, row in table.iterrows()]
    return render("glance_table.html.j2", note=Markup(note), heads=heads, rows=rows)
