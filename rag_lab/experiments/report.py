"""A self-contained HTML report of a sweep's results table (``rag-lab report``).

One file, no network: plotly.js is inlined once. It holds the cost-vs-quality scatter with CI error bars
and the Pareto front, a second scatter of tokens (or modelled latency) against the same quality, the
results table with the key columns first, and a short note on how to read it. Every text from the
table is HTML-escaped.
"""

from __future__ import annotations

import html
import os
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY
from rag_lab.experiments.stats import COST_PREFIXES, QUALITY_PREFIX, add_pareto, is_ci_bound
from rag_lab.figures import cost_quality  # the module, not its names: rag_lab.figures imports this package too
from rag_lab.figures.common import PARAM_PREFIX, format_value

#: Cost columns tried, in order, for the second scatter (the first present that is not the main cost column).
SECOND_COST_COLS = ("cost_tokens", "cost_modelled_latency_s", "cost_usd")

_PLOT_HEIGHT = 520
_PLOT_CONFIG = {"displaylogo": False}
_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
.meta { color: #666; margin-top: 0; } .note { max-width: 60em; line-height: 1.45; }
.table-wrap { overflow-x: auto; } table { border-collapse: collapse; font-size: 0.82em; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: right; white-space: nowrap; }
th { position: sticky; top: 0; background: #f6f6f6; } td.text, th.text { text-align: left; }
tr.pareto td { background: #eef6ee; font-weight: 600; }
"""


def _load_table(source: pd.DataFrame | str | os.PathLike[str]) -> tuple[pd.DataFrame, str]:
    """The results table and a name for it: a DataFrame as is, or a run directory through ``load_sweep``."""
    if isinstance(source, pd.DataFrame):
        return source, "results table"
    if isinstance(source, (str, os.PathLike)):
        run_dir = Path(source)
        if not run_dir.is_dir():
            raise ValueError(f"{run_dir}: not a run directory")
        from rag_lab.experiments.runner import load_sweep  # the runner imports this package's stats

        return load_sweep(run_dir).table, run_dir.resolve().name
    raise ValueError(f"source must be a results DataFrame or a run directory, got {type(source).__name__}")


def _column_order(table: pd.DataFrame, cost_col: str, quality_col: str) -> list[str]:
    """Key columns first: candidate id, parameters, quality means (chosen first), costs (chosen first),
    ``is_pareto``; then everything else. CI bounds are folded into their quality column's cell."""
    cols = list(table.columns)
    quality = [c for c in cols if c.startswith(QUALITY_PREFIX) and not is_ci_bound(c, cols)]
    costs = [c for c in cols if c.startswith(COST_PREFIXES)]
    key = [
        *(["candidate_id"] if "candidate_id" in cols else []),
        *(c for c in cols if c.startswith(PARAM_PREFIX)),
        quality_col, *(c for c in quality if c != quality_col),
        cost_col, *(c for c in costs if c != cost_col),
        "is_pareto",
    ]
    bounds = {f"{q}{s}" for q in quality for s in ("_lo", "_hi")}
    return key + [c for c in cols if c not in key and c not in bounds]


def _cell(row: pd.Series, col: str, columns: pd.Index) -> str:
    text = format_value(row[col])
    if col.startswith(QUALITY_PREFIX) and f"{col}_lo" in columns and f"{col}_hi" in columns and text != "–":
        text += f" [{format_value(row[f'{col}_lo'])}, {format_value(row[f'{col}_hi'])}]"
    return html.escape(text)


def results_table_html(table: pd.DataFrame, cost_col: str, quality_col: str) -> str:
    """The results table as an HTML ``<table>`` (escaped), Pareto rows marked with the class ``pareto``."""
    order = _column_order(table, cost_col, quality_col)

    def head(col: str) -> str:
        cls = ' class="text"' if col == "candidate_id" or col.startswith(PARAM_PREFIX) else ""
        return f"<th{cls}>{html.escape(col.removeprefix(PARAM_PREFIX))}</th>"

    lines = ["<table>", "<thead><tr>" + "".join(head(c) for c in order) + "</tr></thead>", "<tbody>"]
    for _, row in table.iterrows():
        cls = ' class="pareto"' if bool(row["is_pareto"]) else ""
        cells = "".join(
            f'<td class="text">{_cell(row, c, table.columns)}</td>' if c == "candidate_id" or c.startswith(PARAM_PREFIX)
            else f"<td>{_cell(row, c, table.columns)}</td>"
            for c in order
        )
        lines.append(f"<tr{cls}>{cells}</tr>")
    lines += ["</tbody>", "</table>"]
    return "\n".join(lines)


def _spent_ratio(table: pd.DataFrame) -> float | None:
    """LLM calls spent (cache misses) over calls incurred across the whole sweep, or None without both columns."""
    if "cost_llm_calls" not in table.columns or "spent_llm_calls" not in table.columns:
        return None
    weight = pd.to_numeric(table["n_questions"]) if "n_questions" in table.columns else 1
    incurred = float((pd.to_numeric(table["cost_llm_calls"]) * weight).sum())
    spent = float((pd.to_numeric(table["spent_llm_calls"]) * weight).sum())
    return spent / incurred if incurred else None


def _how_to_read(cost_col: str, quality_col: str) -> str:
    cost, quality = html.escape(cost_col), html.escape(quality_col)
    return (
        "<p class=\"note\"><b>How to read this.</b> Each point is one candidate configuration of the sweep. "
        f"The y axis is <code>{quality}</code>, its mean over the questions where it is defined; the error bars "
        "are its bootstrap confidence interval over questions (shown in the table as <i>mean [lo, hi]</i>). "
        f"The x axis is <code>{cost}</code>, a mean per question. <code>cost_*</code> columns are what the policy "
        "<i>incurred</i>, cached or not: they depend only on the configuration and are what the plots compare. "
        "<code>spent_*</code> columns count only cache misses, the calls actually made during this run, and "
        "<code>run_*</code> columns are wall-clock times; both depend on the cache and the machine, not on the "
        "policy. A candidate is on the <b>Pareto front</b> (dotted staircase, highlighted rows) when no other "
        "candidate has lower or equal cost and higher or equal quality with one of them strictly better.</p>"
    )


def write_report(
    source: pd.DataFrame | str | os.PathLike[str],
    out_html: str | os.PathLike[str],
    cost_col: str = DEFAULT_COST,
    quality_col: str = DEFAULT_QUALITY,
    name: str | None = None,
) -> Path:
    """Write the HTML report of ``source`` — a results table, or a run directory read with
    :func:`rag_lab.experiments.runner.load_sweep` — to ``out_html`` (parents created, replaced atomically).
    ``name`` titles the report (default: the run directory's name). The Pareto flags are recomputed for
    ``cost_col`` × ``quality_col``. Returns the written path."""
    table, default_name = _load_table(source)
    name = name or default_name
    if table.empty:
        raise ValueError(f"{name}: the results table has no rows")
    for col in (cost_col, quality_col):
        if col not in table.columns:
            raise ValueError(f"{name}: no column {col!r} (columns: {list(table.columns)})")
    table = add_pareto(table, cost_col, quality_col)

    main = cost_quality.cost_quality_figure(cost_quality.cost_quality_info(table, cost_col, quality_col))
    main.update_layout(title_text=f"{cost_col} vs {quality_col}")
    plots = [main.to_html(full_html=False, include_plotlyjs=True, default_height=_PLOT_HEIGHT, config=_PLOT_CONFIG)]
    second_col = next((c for c in SECOND_COST_COLS if c in table.columns and c != cost_col), None)
    if second_col is not None:
        second = cost_quality.cost_quality_figure(cost_quality.cost_quality_info(table, second_col, quality_col))
        second.update_layout(title_text=f"{second_col} vs {quality_col}")
        plots.append(second.to_html(full_html=False, include_plotlyjs=False, default_height=_PLOT_HEIGHT,
                                    config=_PLOT_CONFIG))

    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    n_front = int(table["is_pareto"].sum())
    facts = [f"{len(table)} candidates", f"{n_front} on the Pareto front"]
    if "n_questions" in table.columns:
        n_q = sorted({int(n) for n in pd.to_numeric(table["n_questions"]).dropna()})
        facts.append(f"{', '.join(map(str, n_q))} questions per candidate")
    ratio = _spent_ratio(table)
    if ratio is not None:
        facts.append(f"LLM calls spent / incurred: {ratio:.1%}")
    title = f"rag_lab sweep report: {name}"
    body = "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="meta">Generated {html.escape(when)} · {html.escape(" · ".join(facts))}</p>',
        _how_to_read(cost_col, quality_col),
        "<h2>Cost vs quality</h2>",
        *plots,
        "<h2>Results</h2>",
        '<div class="table-wrap">',
        results_table_html(table, cost_col, quality_col),
        "</div>",
        "</body></html>",
    ])
    out = Path(out_html)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(out)
    return out
