"""The cost-vs-quality scatter of a results table: plain data (:func:`cost_quality_info`) and a plotly figure
(:func:`cost_quality_figure`), its points labelled where a label fits, else numbered or listed under the plot
(:func:`unlabelled_points`)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rag_lab.evaluation.catalog import label as metric_label
from rag_lab.figures.common import (
    PARAM_PREFIX,
    as_frame,
    format_value,
    group_label,
    group_names,
    hover,
    is_missing,
    numeric,
    point_texts,
    require_columns,
    short,
)
from rag_lab.figures.labels import PLOT_PX, padded_range, place_labels
from rag_lab.stats.summary import pareto_mask


class CostQualityInfo(NamedTuple):
    """Everything the cost-vs-quality scatter shows, one entry per plotted candidate.

    Rows whose cost or quality is undefined are not plotted (``n_undefined`` counts them). ``y_lo``/``y_hi`` are the
    quality column's confidence bounds (``<quality>_lo``/``_hi``), None when the table has none. ``groups`` is each
    point's colour-group label (None without ``color_by``), ``group_names`` the groups in legend order;
    ``facets``/``facet_names`` likewise for the panels of ``facet_by``. ``texts`` are the point labels from ``text_col``
    (None without it); ``labels`` the hover texts: the point label, the id, then one ``name=value`` per line.
    ``x_title``/``y_title`` are the axis titles. The Pareto front is computed for this pair of columns (the table's own
    ``is_pareto`` may be for another pair), within each facet; ``front_*`` are its points sorted by facet, cost, then
    quality (``front_facets`` None without ``facet_by``)."""

    cost_col: str
    quality_col: str
    x_title: str
    y_title: str
    ids: tuple[str, ...]
    x: tuple[float, ...]
    y: tuple[float, ...]
    y_lo: tuple[float, ...] | None
    y_hi: tuple[float, ...] | None
    color_by: str | None
    groups: tuple[str, ...] | None
    group_names: tuple[str, ...]
    facet_by: str | None
    facets: tuple[str, ...] | None
    facet_names: tuple[str, ...]
    texts: tuple[str, ...] | None
    labels: tuple[str, ...]
    is_pareto: tuple[bool, ...]
    front_ids: tuple[str, ...]
    front_x: tuple[float, ...]
    front_y: tuple[float, ...]
    front_facets: tuple[str, ...] | None
    n_undefined: int


def _grouping(rows: pd.DataFrame, col: str | None) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """Each row's group label and the group names in order, for an optional grouping column."""
    if not col:
        return None, ()
    values = rows[col].tolist()
    return tuple(group_label(v) for v in values), group_names(values)


def cost_quality_info(table: pd.DataFrame, cost_col: str, quality_col: str, color_by: str | None = None,
                      label_cols: Sequence[str] | None = None, facet_by: str | None = None,
                      text_col: str | None = None) -> CostQualityInfo:
    """The data of the cost-vs-quality scatter of ``table`` (one row per candidate).

    ``color_by`` names a column (typically a ``param_*``) whose values colour the points, ``facet_by`` one
    whose values split them into panels; ``label_cols`` the columns shown on hover (default: every
    ``param_*`` column, shown without the prefix); ``text_col`` one whose values name the points on the plot.
    Point ids are the ``candidate_id`` column when present, else the table's index."""
    table = as_frame(table, "results table")
    label_cols = [c for c in table.columns if c.startswith(PARAM_PREFIX)] if label_cols is None else list(label_cols)
    wanted = [cost_col, quality_col, *(c for c in (color_by, facet_by, text_col) if c), *label_cols]
    require_columns(table, wanted, "results table")

    x_all, y_all = numeric(table, cost_col), numeric(table, quality_col)
    keep = ~(np.isnan(x_all) | np.isnan(y_all))
    rows = table[keep]
    x, y = x_all[keep], y_all[keep]
    raw_ids = rows["candidate_id"] if "candidate_id" in rows.columns else rows.index
    ids = tuple(str(i) for i in raw_ids)

    has_ci = f"{quality_col}_lo" in table.columns and f"{quality_col}_hi" in table.columns
    y_lo = tuple(numeric(rows, f"{quality_col}_lo").tolist()) if has_ci else None
    y_hi = tuple(numeric(rows, f"{quality_col}_hi").tolist()) if has_ci else None
    groups, names = _grouping(rows, color_by)
    facets, facet_names = _grouping(rows, facet_by)
    texts = tuple(format_value(v) for v in rows[text_col]) if text_col else None

    def label(row: pd.Series, point_id: str) -> str:
        lines = ([format_value(row[text_col])] if text_col else []) + [point_id] + [
            f"{short(c)}={format_value(row[c])}" for c in label_cols if not is_missing(row[c])
        ]
        return "\n".join(lines)

    labels = tuple(label(row, i) for (_, row), i in zip(rows.iterrows(), ids, strict=True))
    panel = np.array(facets if facets is not None else [""] * len(x), dtype=object)
    mask = np.zeros(len(x), dtype=bool)
    for facet in set(panel.tolist()):
        members = panel == facet
        mask[members] = pareto_mask(x[members], y[members])
    facet_rank = {f: k for k, f in enumerate(facet_names)}
    front = sorted(np.flatnonzero(mask).tolist(), key=lambda i: (facet_rank.get(panel[i], 0), x[i], y[i]))
    return CostQualityInfo(cost_col=cost_col, quality_col=quality_col, x_title=metric_label(cost_col),
                           y_title=metric_label(quality_col), ids=ids, x=tuple(x.tolist()), y=tuple(y.tolist()),
                           y_lo=y_lo, y_hi=y_hi, color_by=color_by, groups=groups, group_names=names, facet_by=facet_by,
                           facets=facets, facet_names=facet_names, texts=texts, labels=labels,
                           is_pareto=tuple(mask.tolist()), front_ids=tuple(ids[i] for i in front),
                           front_x=tuple(float(x[i]) for i in front), front_y=tuple(float(y[i]) for i in front),
                           front_facets=tuple(facets[i] for i in front) if facets else None,
                           n_undefined=int((~keep).sum()))


def _points(info: CostQualityInfo, idx: list[int], name: str, show_legend: bool,
            placed: dict[int, tuple[str, str]]) -> go.Scatter:
    """The marker trace of the points ``idx`` (one colour group within one panel); ``placed``: each labelled
    point's (text, textposition)."""
    error_y = None
    if info.y_lo is not None and info.y_hi is not None:
        error_y = dict(type="data", symmetric=False, array=[info.y_hi[i] - info.y[i] for i in idx],
                       arrayminus=[info.y[i] - info.y_lo[i] for i in idx], thickness=1, width=3)
    label = html.escape(f"{short(info.color_by)}={name}" if info.color_by else name)
    return go.Scatter(
        x=[info.x[i] for i in idx],
        y=[info.y[i] for i in idx],
        mode="markers+text" if info.texts is not None else "markers",
        text=[html.escape(placed[i][0]) if i in placed else "" for i in idx] if info.texts is not None else None,
        textposition=[placed[i][1] if i in placed else "top center" for i in idx] if info.texts is not None else None,
        textfont=dict(size=10, color="#555"),
        name=label,
        legendgroup=label,
        showlegend=show_legend,
        marker=dict(size=9, line=dict(width=1, color="white")),
        error_y=error_y,
        customdata=[info.ids[i] for i in idx],
        hovertext=[hover(info.labels[i]) for i in idx],
        hovertemplate="%{hovertext}<br>" + f"{html.escape(info.x_title)}: %{{x:.4g}}<br>"
        + f"{html.escape(info.y_title)}: %{{y:.4g}}<extra></extra>",
    )


def _y_range(info: CostQualityInfo) -> tuple[float, float]:
    """The y range of every panel: the points and their intervals, padded."""
    return padded_range([*info.y, *(info.y_lo or ()), *(info.y_hi or ())])


def _staircase(info: CostQualityInfo, members: list[int]) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """The segments of the Pareto staircase through the front points among ``members`` (as :func:`_front` draws
    it: across at each point's quality to the next one's cost, then up)."""
    front = sorted((info.x[i], info.y[i]) for i in members if info.is_pareto[i])
    segments = []
    for (x0, y0), (x1, y1) in zip(front, front[1:], strict=False):
        segments += [((x0, y0), (x1, y0)), ((x1, y0), (x1, y1))]
    return segments


def _labels(info: CostQualityInfo, members: list[int], x_range: tuple[float, float], y_range: tuple[float, float],
            plot_px: tuple[float, float], first_key: int = 1) -> tuple[dict[int, tuple[str, str]], list[Unlabelled]]:
    """The labels of one panel's points that fit (:func:`place_labels`): the Pareto front's first, by cost; then,
    for each point whose label did not fit, its number (from ``first_key``) where that fits. Returns the placed
    ``(text, position)`` by point, and the points not labelled by name, in order."""
    if info.texts is None or not members:
        return {}, []
    xs, ys = [info.x[i] for i in members], [info.y[i] for i in members]
    texts = point_texts(xs, ys, [info.texts[i] for i in members])
    lines = _staircase(info, members)
    order = sorted(range(len(members)), key=lambda k: (not info.is_pareto[members[k]], xs[k], -ys[k]))
    positions = place_labels(xs, ys, texts, x_range, y_range, order, plot_px=plot_px, lines=lines)
    dropped = [k for k in order if positions[k] is None and texts[k]]
    keys = {k: str(first_key + n) for n, k in enumerate(dropped)}
    # the named labels first, as placed above (the same greedy pass gives them the same places), then the numbers
    second = [t if positions[k] is not None else keys.get(k, "") for k, t in enumerate(texts)]
    again = place_labels(xs, ys, second, x_range, y_range, [k for k in order if k not in keys] + dropped,
                         plot_px=plot_px, lines=lines)
    placed = {members[k]: (second[k], p) for k, p in enumerate(again) if p is not None}
    listed = [Unlabelled(key=keys[k] if again[k] is not None else "", text=texts[k], x=xs[k], y=ys[k]) for k in dropped]
    first: dict[tuple[float, float], int] = {}
    for k, point in enumerate(zip(xs, ys, strict=True)):   # a point drawn under another's "(+k same)" label
        if first.setdefault(point, k) != k and info.texts[members[k]]:
            listed.append(Unlabelled(key="", text=f"{info.texts[members[k]]} (the same point as "
                                                  f"{info.texts[members[first[point]]]})", x=xs[k], y=ys[k]))
    return placed, listed


class Unlabelled(NamedTuple):
    """A point whose label did not fit on the plot: its ``key`` (the number drawn beside it; '' where not even that
    fits), its label ``text`` and its coordinates."""

    key: str
    text: str
    x: float
    y: float


def unlabelled_points(info: CostQualityInfo, label_px: tuple[float, float] = PLOT_PX) -> list[Unlabelled]:
    """The points :func:`cost_quality_figure` does not label by name at ``label_px``, as it lists them under the
    plot (numbered across panels)."""
    return _panels(info, label_px)[1]


Panel = tuple[str | None, list[int], tuple[float, float], dict[int, tuple[str, str]]]


def _panels(info: CostQualityInfo, label_px: tuple[float, float]) -> tuple[list[Panel], list[Unlabelled]]:
    """Each panel's facet (None unfaceted), points, x range and placed labels; and every panel's unlabelled points
    (numbered across panels)."""
    names = info.facet_names if info.facets is not None else (None,)
    panels, listed = [], []
    for name in names:
        in_panel = [i for i in range(len(info.x)) if info.facets is None or info.facets[i] == name]
        x_range = padded_range([info.x[i] for i in in_panel])
        placed, more = _labels(info, in_panel, x_range, _y_range(info), (label_px[0] / len(names), label_px[1]),
                               first_key=len(listed) + 1)
        panels.append((name, in_panel, x_range, placed))
        listed += more
    return panels, listed


def _listing(listed: list[Unlabelled]) -> str:
    """The note under the plot naming every point not labelled by name."""
    items = [f"{u.key + ' = ' if u.key else ''}{u.text} ({format_value(u.x)}, {format_value(u.y)})" for u in listed]
    return "not labelled (no room): " + "; ".join(items)


def _front(info: CostQualityInfo, idx: list[int], show_legend: bool) -> go.Scatter:
    """The Pareto-front staircase through the front points ``idx`` of one panel."""
    return go.Scatter(x=[info.front_x[i] for i in idx], y=[info.front_y[i] for i in idx], mode="lines+markers",
                      line=dict(shape="hv", color="black", width=1.5, dash="dot"),
                      marker=dict(size=14, symbol="circle-open", color="black"), name="Pareto front",
                      legendgroup="Pareto front", showlegend=show_legend, customdata=[info.front_ids[i] for i in idx],
                      hoverinfo="skip")


def cost_quality_figure(info: CostQualityInfo, label_px: tuple[float, float] = PLOT_PX) -> go.Figure:
    """The scatter of ``info``: markers per colour group with CI error bars, and the Pareto front as a
    staircase (from each front point, the best quality reachable until the next one's cost); one panel
    per facet, sharing the y axis, when ``info`` is faceted. ``label_px``: the smallest plot area (width, height in
    px, all panels together) the figure will be drawn at — the point labels are placed not to overlap there."""
    panels, listed = _panels(info, label_px)
    titles = [html.escape(f"{short(info.facet_by)}={p}") for p, *_ in panels] if info.facet_by else None
    fig = make_subplots(rows=1, cols=len(panels), shared_yaxes=True, subplot_titles=titles,
                        horizontal_spacing=0.04 if len(panels) > 1 else 0.0)
    names = info.group_names if info.groups is not None else ("candidates",)
    shown: set[str] = set()
    for col, (panel, in_panel, x_range, placed) in enumerate(panels, start=1):
        for name in names:
            idx = [i for i in in_panel if info.groups is None or info.groups[i] == name]
            if idx or info.facets is None:
                fig.add_trace(_points(info, idx, name, name not in shown, placed), row=1, col=col)
                shown.add(name)
        front = [k for k in range(len(info.front_ids)) if info.front_facets is None or info.front_facets[k] == panel]
        fig.add_trace(_front(info, front, col == 1), row=1, col=col)
        fig.update_xaxes(title_text=html.escape(info.x_title), range=list(x_range), row=1, col=col)
    fig.update_yaxes(range=list(_y_range(info)))
    fig.update_yaxes(title_text=html.escape(info.y_title), row=1, col=1)
    fig.update_layout(template="plotly_white", title=html.escape(f"{info.y_title} vs {info.x_title}"),
                      legend_title_text="", margin=dict(l=60, r=20, t=60, b=50 + (30 if listed else 0)))
    if listed:
        fig.add_annotation(text=html.escape(_listing(listed)), xref="paper", yref="paper", x=0, y=-0.2,
                           xanchor="left", yanchor="top", showarrow=False, align="left", font=dict(size=10, color="#555"),
                           name="unlabelled points")
    return fig
