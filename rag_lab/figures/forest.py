"""The forest plot of paired differences against a reference candidate, split Optuna-style into plain
data (:func:`forest_info`, what tests compare) and a plotly figure (:func:`forest_figure`).

Input: the table of :meth:`rag_lab.experiments.SweepResult.compare` (one row per candidate: ``label``,
``delta``, ``lo``, ``hi``, ``n``, ``share_differ``, ``is_reference``). Each candidate but the reference is
one row of the plot: its mean paired difference with the interval as a horizontal bar, a line at 0, and
the candidates whose interval excludes 0 drawn filled (above 0 in blue, below in red), the others hollow.
"""

from __future__ import annotations

import html
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import label
from rag_lab.figures.common import as_frame, format_value, hover, numeric, require_columns

#: Marker colours: interval above 0, below 0, spanning 0.
ABOVE, BELOW, SPANS = "#4c78a8", "#e45756", "#888888"
_COLUMNS = ("label", "delta", "lo", "hi")


class ForestInfo(NamedTuple):
    """Everything the forest plot shows, one entry per compared candidate (the reference left out).

    ``metric`` is the compared column and ``x_title`` its readable Δ title; ``reference`` says what the
    differences are taken against (from the table's ``attrs["reference"]["description"]``, or given).
    ``sign`` is +1 where the interval lies above 0, −1 below, 0 where it spans 0. Rows with an undefined
    difference (no question defined on both sides) are not plotted; ``n_undefined`` counts them."""

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
    if reference is None:
        reference = str(getattr(table, "attrs", {}).get("reference", {}).get("description", "the reference"))
    if "is_reference" in table.columns:
        table = table[~table["is_reference"].astype(bool)]
    delta, lo, hi = (numeric(table, c) for c in ("delta", "lo", "hi"))
    keep = ~(np.isnan(delta) | np.isnan(lo) | np.isnan(hi))
    rows = table[keep]
    ids = rows["candidate_id"] if "candidate_id" in rows.columns else rows.index
    count = numeric(rows, "n") if "n" in rows.columns else np.full(len(rows), np.nan)
    share = numeric(rows, "share_differ") if "share_differ" in rows.columns else np.full(len(rows), np.nan)
    lo_k, hi_k = lo[keep], hi[keep]
    return ForestInfo(
        metric=metric,
        x_title=f"Δ {label(metric)} (candidate − reference)",
        reference=reference,
        ids=tuple(str(i) for i in ids),
        labels=tuple(str(v) for v in rows["label"]),
        delta=tuple(delta[keep].tolist()),
        lo=tuple(lo_k.tolist()),
        hi=tuple(hi_k.tolist()),
        n=tuple(int(v) if not np.isnan(v) else 0 for v in count),
        share_differ=tuple(share.tolist()),
        sign=tuple(int(s) for s in np.where(lo_k > 0, 1, np.where(hi_k < 0, -1, 0))),
        n_undefined=int((~keep).sum()),
    )


def _hover(info: ForestInfo, i: int) -> str:
    return hover(f"{info.labels[i]}\n{info.ids[i]}\nΔ = {info.delta[i]:+.4g} [{info.lo[i]:+.4g}, {info.hi[i]:+.4g}]\n"
                 f"{info.n[i]} questions, {format_value(info.share_differ[i] * 100)}% differ")


def forest_figure(info: ForestInfo) -> go.Figure:
    """Horizontal interval bars of ``info``, first candidate on top, with a dashed line at Δ = 0."""
    colours = [{1: ABOVE, -1: BELOW, 0: SPANS}[s] for s in info.sign]
    marker: dict[str, Any] = dict(size=10, color=colours, symbol=["circle" if s else "circle-open" for s in info.sign],
                                  line=dict(width=2, color=colours))
    fig = go.Figure(go.Scatter(
        x=list(info.delta),
        y=[html.escape(t) for t in info.labels],
        mode="markers",
        marker=marker,
        error_x=dict(type="data", symmetric=False, array=[h - d for h, d in zip(info.hi, info.delta, strict=True)],
                     arrayminus=[d - lo for d, lo in zip(info.delta, info.lo, strict=True)], thickness=1.5, width=4),
        customdata=list(info.ids),
        hovertext=[_hover(info, i) for i in range(len(info.ids))],
        hovertemplate="%{hovertext}<extra></extra>",
        showlegend=False,
    ))
    fig.add_vline(x=0, line=dict(color="black", width=1, dash="dash"))
    fig.update_yaxes(autorange="reversed", type="category", automargin=True)
    fig.update_xaxes(title_text=html.escape(info.x_title), zeroline=False)
    fig.update_layout(
        template="plotly_white",
        title=html.escape(f"Δ {label(info.metric)} vs {info.reference}"),
        height=max(260, 90 + 30 * len(info.ids)),
        margin=dict(l=20, r=20, t=60, b=50),
    )
    return fig
