"""The report's first table, above the scatter: for each candidate (guardrail) against the reference, the paired Δ
of the cost and of the quality column with its interval and whether it is shown, the declared claim on it (its
kind and verdict) and where claims like it hold (the robustness table's row of the same contrast). Plain data
(:func:`glance_table`, what tests compare) and its HTML (:func:`glance_html`); prose in ``templates/glance_note.html``."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from rag_lab.evaluation.catalog import label
from rag_lab.experiments.engine.comparisons import decimals, declared_finding, is_measured
from rag_lab.experiments.engine.findings import kind_text
from rag_lab.figures import where_grid
from rag_lab.paths import template
from rag_lab.stats.paired import config_changes, interval_text

#: The table's columns: candidate, its changes, Δ quality and Δ cost (text), shown or not on each, the claim, where.
COLUMNS = ("candidate_id", "changes", "quality", "quality_verdict", "cost", "cost_verdict", "claim", "where")


def _verdict(row: pd.Series) -> str:
    """``shown`` / ``not shown``, as the Δ table below says it (a declared claim's cell: its own verdict)."""
    found = declared_finding(row)
    if found is not None:
        return "shown (declared, holds)" if found.holds else "not shown (declared)"
    return "shown" if is_measured(row) else "not shown"


def _where(robustness: Mapping[str, Any], changed: set[str], metrics: Sequence[str]) -> str:
    """Where the robustness table's rows of the same settings and one of ``metrics`` hold (one line each)."""
    keys = [r["key"] for r in robustness.get("findings", []) if r["metric"] in metrics and set(r["candidate"]) == changed]
    if not keys:
        return "–"
    info = where_grid.where_grid_info(robustness, keys)
    return "; ".join(f"{k}: {where_grid.where_line(info, k)}" for k in keys)


def glance_table(sweep: Any, frames: Mapping[str, pd.DataFrame], quality_col: str, cost_col: str,
                 findings: Sequence[Any] = (), robustness: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """One row per candidate but the reference of ``frames`` (:func:`~rag_lab.experiments.engine.comparisons.comparisons`
    of ``sweep`` on ``quality_col`` and ``cost_col``, declared ``findings`` marked): :data:`COLUMNS`."""
    quality, cost = frames[quality_col], frames[cost_col]
    base = sweep.plan.get("base_config", {})
    by_config: dict[str, list[Any]] = {}
    for f in findings:
        by_config.setdefault(f.candidate_config, []).append(f)
    records = []
    for pos in range(len(quality)):
        q, c = quality.iloc[pos], cost.iloc[pos]
        if bool(q["is_reference"]):
            continue
        claims = by_config.get(str(q["config_id"]), [])
        claim_text = "; ".join(f"{kind_text(f)}: {'✓ holds' if f.holds else '✗ not shown'} — {f.claim}"
                               for f in claims) or "none declared (exploratory)"
        changed = set(config_changes(sweep.config_of(str(q["config_id"])), base, sweep.swept_keys))
        records.append({
            "candidate_id": q["candidate_id"], "changes": q["label"],
            "quality": interval_text(q, decimals(frames, quality_col)), "quality_verdict": _verdict(q),
            "cost": interval_text(c, decimals(frames, cost_col)), "cost_verdict": _verdict(c),
            "claim": claim_text, "where": _where(robustness or {}, changed, (quality_col, cost_col)),
        })
    return pd.DataFrame.from_records(records, columns=list(COLUMNS))


def glance_html(table: pd.DataFrame, reference: str, quality_col: str, cost_col: str) -> str:
    """The note and the table, as HTML (every cell escaped)."""
    heads = ["changes vs reference", f"Δ {label(quality_col)} [95%]", f"Δ {label(cost_col)} [95%]", "claim",
             "where it holds"]
    lines = [template(__package__, "templates/glance_note.html").substitute(
                 reference=html.escape(reference), quality=html.escape(label(quality_col)),
                 cost=html.escape(label(cost_col))),
             '<div class="table-wrap"><table class="glance">',
             "<thead><tr>" + "".join(f'<th class="text">{html.escape(h)}</th>' for h in heads) + "</tr></thead>",
             "<tbody>"]
    for _, row in table.iterrows():
        cells = [row["changes"], f"{row['quality']} {row['quality_verdict']}", f"{row['cost']} {row['cost_verdict']}",
                 row["claim"], row["where"]]
        lines.append("<tr>" + "".join(f'<td class="text">{html.escape(str(v))}</td>' for v in cells) + "</tr>")
    lines += ["</tbody></table></div>"]
    return "\n".join(lines)
