"""The forest plot of paired differences against a reference candidate, split Optuna-style into plain
data (:func:`forest_info`, what tests compare) and a plotly figure (:func:`forest_figure`).

Input: the table of :meth:`rag_lab.experiments.SweepResult.compare` or a Δ table of
:func:`rag_lab.experiments.engine.comparisons.comparisons`. One row per candidate but the reference: the mean
paired difference with its interval; the mark says whether the table calls it shown or a declared claim
(:data:`MARKS`), the colour whether it is better or worse in the metric's own direction
(:func:`~rag_lab.evaluation.catalog.lower_is_better`), not its sign."""

from __future__ import annotations

import html
from typing import NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import METRICS, label, lower_is_better
from rag_lab.experiments.engine.comparisons import declared_finding, is_measured
from rag_lab.figures.common import as_frame, format_value, hover, numeric, require_columns

#: Marker colours: better in the metric's direction, worse, spanning 0 (or not shown), and a shown difference of a
#: metric with no better direction.
BETTER, WORSE, SPANS, NEUTRAL = "#4c78a8", "#e45756", "#888888", "#7b61a8"
_COLUMNS = ("label", "delta", "lo", "hi")
#: Every mark the plot can draw: name → (plotly symbol, legend text; ``{rule}`` is what "shown" means here).
MARKS = {
    "shown": ("circle", "shown: {rule} (blue: better for this metric, red: worse)"),
    "not shown": ("circle-open", "not shown"),
    "declared, holds": ("diamond", "declared claim, holds in its own family (✓)"),
    "declared, not shown": ("diamond-open", "declared claim, not shown in its own family (✗)"),
}


class ForestInfo(NamedTuple):
    """Everything the forest plot shows, one entry per compared candidate (the reference left out).

    ``metric`` is the compared column and ``x_title`` its readable Δ title; ``reference`` says what the
    differences are taken against (from the table's ``attrs["reference"]["description"]``, or given).
    ``sign`` is +1 where the interval lies above 0, −1 below, 0 where it spans 0; ``better`` is +1 where that is
    better in the metric's direction, −1 worse, 0 where it spans 0 or the metric has no direction. ``mark`` is each row's
    :data:`MARKS` name and ``rule`` what "shown" means for this table. Rows with an undefined difference (no
    question defined on both sides) are not plotted; ``n_undefined`` counts them."""

    metric: str
    x_title: str
    reference: str
    ids: tuple[str, ...]
    labels: tuple[str, ...]
    delta: tuple[float, ...]
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    n: tuple[int, ...]
    share_differ: tuple[float, ...]
    sign: tuple[int, ...]
    n_undefined: int
    mark: tuple[str, ...] = ()
    rule: str = "the interval excludes 0"
    better: tuple[int, ...] = ()


def direction(metric: str) -> int:
    """+1 where higher values of ``metric`` are better, −1 where lower are, 0 where it has no better direction."""
    if metric not in METRICS or METRICS[metric].better is None:
        return 0
    return -1 if lower_is_better(metric) else 1


def forest_info(comparison: pd.DataFrame, metric: str | None = None, reference: str | None = None) -> ForestInfo:
    """The forest-plot data of a :meth:`~rag_lab.experiments.SweepResult.compare` table. ``metric``
    defaults to the table's ``metric`` column; ``reference`` to its ``attrs["reference"]["description"]``."""
    table = as_frame(comparison, "comparison table")
    require_columns(table, _COLUMNS, "comparison table")
    if metric is None:
        metrics = table["metric"].dropna().unique().tolist() if "metric" in table.columns else []
        if len(metrics) != 1:
            raise ConfigError(f"the comparison table holds metrics {metrics}; name one with metric=")
        metric = str(metrics[0])
    if reference is None:   # the title's words (no candidate hash), else the description
        ref = getattr(table, "attrs", {}).get("reference", {})
        reference = str(ref.get("title") or ref.get("description", "the reference"))
    if "is_reference" in table.columns:
        table = table[~table["is_reference"].astype(bool)]
    delta, lo, hi = (numeric(table, c) for c in ("delta", "lo", "hi"))
    keep = ~(np.isnan(delta) | np.isnan(lo) | np.isnan(hi))
    rows = table[keep]
    ids = rows["candidate_id"] if "candidate_id" in rows.columns else rows.index
    count = numeric(rows, "n") if "n" in rows.columns else np.full(len(rows), np.nan)
    share = numeric(rows, "share_differ") if "share_differ" in rows.columns else np.full(len(rows), np.nan)
    lo_k, hi_k = lo[keep], hi[keep]
    sign = [int(s) for s in np.where(lo_k > 0, 1, np.where(hi_k < 0, -1, 0))]
    holm = "p_holm" in rows.columns
    return ForestInfo(
        metric=metric, x_title=f"Δ {label(metric)} (candidate − reference)", reference=reference,
        ids=tuple(str(i) for i in ids), labels=tuple(str(v) for v in rows["label"]), delta=tuple(delta[keep].tolist()),
        lo=tuple(lo_k.tolist()), hi=tuple(hi_k.tolist()), n=tuple(int(v) if not np.isnan(v) else 0 for v in count),
        share_differ=tuple(share.tolist()),
        sign=tuple(sign), better=tuple(s * direction(metric) for s in sign),
        n_undefined=int((~keep).sum()), mark=tuple(_mark(row) for _, row in rows.iterrows()),
        rule="the interval excludes 0 and Holm p < 0.05" if holm else "the interval excludes 0")


def _mark(row: pd.Series) -> str:
    """A row's :data:`MARKS` name: a declared claim's verdict, else shown / not shown as its table says."""
    if declared_finding(row) is not None:
        return "declared, holds" if declared_finding(row).holds else "declared, not shown"
    return "shown" if is_measured(row) else "not shown"


def _hover(info: ForestInfo, i: int) -> str:
    return hover(f"{info.labels[i]}\n{info.ids[i]}\nΔ = {info.delta[i]:+.4g} [{info.lo[i]:+.4g}, {info.hi[i]:+.4g}]\n"
                 f"{info.n[i]} questions, {format_value(info.share_differ[i] * 100)}% differ")


def _colour(info: ForestInfo, i: int, mark: str) -> str:
    """Row ``i``'s colour: grey where not shown or spanning 0, else better / worse in the metric's direction."""
    if mark.endswith("not shown") or info.sign[i] == 0:
        return SPANS
    if direction(info.metric) == 0:
        return NEUTRAL
    better = info.better[i] if info.better else info.sign[i] * direction(info.metric)
    return BETTER if better > 0 else WORSE


def forest_figure(info: ForestInfo) -> go.Figure:
    """Horizontal interval bars of ``info``, first candidate on top, with a dashed line at Δ = 0; one legend entry
    per kind of mark drawn (:data:`MARKS`)."""
    marks = info.mark or tuple("shown" if s else "not shown" for s in info.sign)
    fig = go.Figure()
    labels = [html.escape(t) for t in info.labels]
    for name, (symbol, legend) in MARKS.items():
        rows = [i for i, m in enumerate(marks) if m == name]
        if not rows:
            continue
        colours = [_colour(info, i, name) for i in rows]
        fig.add_trace(go.Scatter(
            x=[info.delta[i] for i in rows], y=[labels[i] for i in rows], mode="markers",
            name=html.escape(legend.format(rule=info.rule)),
            marker=dict(size=12 if symbol.startswith("diamond") else 10, color=colours, symbol=symbol,
                        line=dict(width=2, color=colours)),
            error_x=dict(type="data", symmetric=False, array=[info.hi[i] - info.delta[i] for i in rows],
                         arrayminus=[info.delta[i] - info.lo[i] for i in rows], thickness=1.5, width=4),
            customdata=[info.ids[i] for i in rows],
            hovertext=[_hover(info, i) + f"<br>{html.escape(name)}" for i in rows],
            hovertemplate="%{hovertext}<extra></extra>",
        ))
    fig.add_vline(x=0, line=dict(color="black", width=1, dash="dash"))
    fig.update_yaxes(autorange="reversed", type="category", automargin=True, categoryorder="array",
                     categoryarray=labels)
    fig.update_xaxes(title_text=html.escape(info.x_title), zeroline=False)
    fig.update_layout(template="plotly_white", title=html.escape(f"Δ {label(info.metric)} vs {info.reference}"),
                      height=max(300, 150 + 30 * len(info.ids)), margin=dict(l=20, r=20, t=60, b=50), showlegend=True,
                      legend=dict(title_text="marks"))
    return fig
