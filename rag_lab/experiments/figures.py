"""The cost-vs-quality scatter of a results table, split Optuna-style into plain data and a plotly figure.

:func:`cost_quality_info` reads the table into a :class:`CostQualityInfo` (what tests compare);
:func:`cost_quality_figure` draws it: one marker trace per colour group with the quality column's
confidence interval as error bars, and the Pareto front (minimum cost, maximum quality) as a staircase.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rag_lab.experiments.stats import pareto_mask

PARAM_PREFIX = "param_"
#: Colour-group label of rows whose ``color_by`` value is missing (e.g. a parameter a conditional grid left unset).
UNSET = "(unset)"


@dataclass(frozen=True)
class CostQualityInfo:
    """Everything the cost-vs-quality scatter shows, one entry per plotted candidate.

    Rows whose cost or quality is undefined are not plotted (``n_undefined`` counts them). ``y_lo``/``y_hi``
    are the quality column's confidence bounds (``<quality>_lo``/``_hi``), None when the table has none.
    ``groups`` is each point's colour-group label (None without ``color_by``), ``group_names`` the groups in
    legend order. ``labels`` are the hover texts, one ``name=value`` per line. The Pareto front is computed
    for this pair of columns (the table's own ``is_pareto`` may be for another pair); ``front_*`` are its
    points sorted by cost, then quality.
    """

    cost_col: str
    quality_col: str
    ids: tuple[str, ...]
    x: tuple[float, ...]
    y: tuple[float, ...]
    y_lo: tuple[float, ...] | None
    y_hi: tuple[float, ...] | None
    color_by: str | None
    groups: tuple[str, ...] | None
    group_names: tuple[str, ...]
    labels: tuple[str, ...]
    is_pareto: tuple[bool, ...]
    front_ids: tuple[str, ...]
    front_x: tuple[float, ...]
    front_y: tuple[float, ...]
    n_undefined: int


def _numeric(table: pd.DataFrame, col: str) -> np.ndarray:
    try:
        return pd.to_numeric(table[col]).to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"column {col!r} must be numeric: {exc}") from exc


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, (float, np.floating)) and math.isnan(value))


def format_value(value: Any) -> str:
    """A table or hover cell: integers without decimals, other numbers to 4 significant digits, '–' if missing."""
    if _missing(value):
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:.4g}"
    return str(value)


def _group_names(values: list[Any]) -> tuple[str, ...]:
    """Distinct group values in natural order (numbers numerically; first appearance if unorderable), unset last."""
    present = list(dict.fromkeys(v for v in values if not _missing(v)))
    try:
        present = sorted(present)
    except TypeError:
        pass
    names = list(dict.fromkeys(format_value(v) for v in present))
    return (*names, UNSET) if any(_missing(v) for v in values) else tuple(names)


def cost_quality_info(
    table: pd.DataFrame,
    cost_col: str,
    quality_col: str,
    color_by: str | None = None,
    label_cols: Sequence[str] | None = None,
) -> CostQualityInfo:
    """The data of the cost-vs-quality scatter of ``table`` (one row per candidate).

    ``color_by`` names a column (typically a ``param_*``) whose values colour the points; ``label_cols``
    the columns shown on hover (default: every ``param_*`` column, shown without the prefix). Point ids
    are the ``candidate_id`` column when present, else the table's index.
    """
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"expected a pandas DataFrame, got {type(table).__name__}")
    label_cols = [c for c in table.columns if c.startswith(PARAM_PREFIX)] if label_cols is None else list(label_cols)
    wanted = [cost_col, quality_col, *([color_by] if color_by else []), *label_cols]
    missing = [c for c in wanted if c not in table.columns]
    if missing:
        raise ValueError(f"no column(s) {missing} in the results table (columns: {list(table.columns)})")

    x_all, y_all = _numeric(table, cost_col), _numeric(table, quality_col)
    keep = ~(np.isnan(x_all) | np.isnan(y_all))
    rows = table[keep]
    x, y = x_all[keep], y_all[keep]
    raw_ids = rows["candidate_id"] if "candidate_id" in rows.columns else rows.index
    ids = tuple(str(i) for i in raw_ids)

    has_ci = f"{quality_col}_lo" in table.columns and f"{quality_col}_hi" in table.columns
    y_lo = tuple(_numeric(rows, f"{quality_col}_lo").tolist()) if has_ci else None
    y_hi = tuple(_numeric(rows, f"{quality_col}_hi").tolist()) if has_ci else None

    groups, group_names = None, ()
    if color_by:
        values = rows[color_by].tolist()
        groups = tuple(UNSET if _missing(v) else format_value(v) for v in values)
        group_names = _group_names(values)

    def label(row: pd.Series, point_id: str) -> str:
        lines = [point_id] + [
            f"{c.removeprefix(PARAM_PREFIX)}={format_value(row[c])}" for c in label_cols if not _missing(row[c])
        ]
        return "\n".join(lines)

    labels = tuple(label(row, i) for (_, row), i in zip(rows.iterrows(), ids, strict=True))
    mask = pareto_mask(x, y)
    front = sorted(np.flatnonzero(mask).tolist(), key=lambda i: (x[i], y[i]))
    return CostQualityInfo(
        cost_col=cost_col,
        quality_col=quality_col,
        ids=ids,
        x=tuple(x.tolist()),
        y=tuple(y.tolist()),
        y_lo=y_lo,
        y_hi=y_hi,
        color_by=color_by,
        groups=groups,
        group_names=group_names,
        labels=labels,
        is_pareto=tuple(mask.tolist()),
        front_ids=tuple(ids[i] for i in front),
        front_x=tuple(float(x[i]) for i in front),
        front_y=tuple(float(y[i]) for i in front),
        n_undefined=int((~keep).sum()),
    )


def _hover(label: str) -> str:
    return "<br>".join(html.escape(line) for line in label.split("\n"))


def cost_quality_figure(info: CostQualityInfo) -> go.Figure:
    """The scatter of ``info``: markers per colour group with CI error bars, and the Pareto front as a
    staircase (from each front point, the best quality reachable until the next one's cost)."""
    fig = go.Figure()
    names = info.group_names if info.groups is not None else ("candidates",)
    for name in names:
        idx = [i for i in range(len(info.x)) if info.groups is None or info.groups[i] == name]
        error_y = None
        if info.y_lo is not None and info.y_hi is not None:
            error_y = dict(
                type="data",
                symmetric=False,
                array=[info.y_hi[i] - info.y[i] for i in idx],
                arrayminus=[info.y[i] - info.y_lo[i] for i in idx],
                thickness=1,
                width=3,
            )
        fig.add_trace(go.Scatter(
            x=[info.x[i] for i in idx],
            y=[info.y[i] for i in idx],
            mode="markers",
            name=f"{info.color_by.removeprefix(PARAM_PREFIX)}={name}" if info.color_by else name,
            marker=dict(size=9, line=dict(width=1, color="white")),
            error_y=error_y,
            customdata=[info.ids[i] for i in idx],
            hovertext=[_hover(info.labels[i]) for i in idx],
            hovertemplate="%{hovertext}<br>" + f"{html.escape(info.cost_col)}=%{{x:.4g}}<br>"
            + f"{html.escape(info.quality_col)}=%{{y:.4g}}<extra></extra>",
        ))
    fig.add_trace(go.Scatter(
        x=list(info.front_x),
        y=list(info.front_y),
        mode="lines+markers",
        line=dict(shape="hv", color="black", width=1.5, dash="dot"),
        marker=dict(size=14, symbol="circle-open", color="black"),
        name="Pareto front",
        customdata=list(info.front_ids),
        hoverinfo="skip",
    ))
    fig.update_layout(
        template="plotly_white",
        xaxis_title=info.cost_col,
        yaxis_title=info.quality_col,
        legend_title_text="",
        margin=dict(l=60, r=20, t=40, b=50),
    )
    return fig
