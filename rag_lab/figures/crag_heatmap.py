"""CRAG thresholds against quality and refusals: the upper × lower grid of a sweep's results table (other swept
parameters and seeds pooled; pairs not run, e.g. lower > upper, stay NaN), as two heat-maps."""

from __future__ import annotations

import html
from typing import NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rag_lab.evaluation.catalog import DEFAULT_QUALITY
from rag_lab.figures.common import as_frame, axis_values, format_value, numeric, require_columns, short
from rag_lab.figures.grid_means import grid_mean


class CragHeatmapInfo(NamedTuple):
    """Mean quality and refusal rate per (upper, lower) threshold pair.

    ``quality[i, j]``/``refusal[i, j]`` are the means over the table rows with ``upper == uppers[i]`` and
    ``lower == lowers[j]`` (NaN where none has a defined value); ``n[i, j]`` counts the rows with a defined quality."""

    upper_col: str
    lower_col: str
    value_col: str
    refusal_col: str
    uppers: tuple[float, ...]
    lowers: tuple[float, ...]
    quality: np.ndarray
    refusal: np.ndarray
    n: np.ndarray


def crag_heatmap_info(table: pd.DataFrame, value_col: str = DEFAULT_QUALITY) -> CragHeatmapInfo:
    """The CRAG upper × lower grid of ``table``'s ``value_col`` and refusal-rate means."""
    upper_col, lower_col, refusal_col = "param_crag.upper", "param_crag.lower", "quality_refused"
    table = as_frame(table, "results table")
    require_columns(table, [upper_col, lower_col, value_col, refusal_col], "results table")
    upper, lower = numeric(table, upper_col).tolist(), numeric(table, lower_col).tolist()
    uppers, lowers = axis_values(upper), axis_values(lower)
    quality, n = grid_mean(upper, lower, numeric(table, value_col), uppers, lowers)
    refusal, _ = grid_mean(upper, lower, numeric(table, refusal_col), uppers, lowers)
    return CragHeatmapInfo(upper_col=upper_col, lower_col=lower_col, value_col=value_col, refusal_col=refusal_col,
                           uppers=uppers, lowers=lowers, quality=quality, refusal=refusal, n=n)


def crag_heatmap_figure(info: CragHeatmapInfo) -> go.Figure:
    """Two heat-maps of ``info`` side by side (x = lower, y = upper): quality, and refusal rate."""
    value, refusal = html.escape(short(info.value_col)), html.escape(short(info.refusal_col))
    fig = make_subplots(rows=1, cols=2, subplot_titles=(value, refusal), horizontal_spacing=0.14)
    x = [format_value(v) for v in info.lowers]
    y = [format_value(v) for v in info.uppers]
    for col, (grid, name, scale, zrange, bar_x) in enumerate(
        [(info.quality, value, "Viridis", (None, None), 0.43), (info.refusal, refusal, "Reds", (0.0, 1.0), 1.0)],
        start=1,
    ):
        fig.add_trace(go.Heatmap(
            z=[[None if np.isnan(v) else v for v in row] for row in grid.tolist()],
            x=x, y=y, name=name, colorscale=scale, zmin=zrange[0], zmax=zrange[1], colorbar=dict(x=bar_x, len=0.9),
            text=[[format_value(v) for v in row] for row in grid.tolist()], texttemplate="%{text}",
            customdata=info.n.tolist(),
            hovertemplate=f"upper=%{{y}}<br>lower=%{{x}}<br>{name}=%{{text}}<br>runs=%{{customdata}}<extra></extra>",
        ), row=1, col=col)
        fig.update_xaxes(title_text=html.escape(short(info.lower_col)), type="category", row=1, col=col)
        fig.update_yaxes(title_text=html.escape(short(info.upper_col)), type="category", row=1, col=col)
    fig.update_layout(template="plotly_white", title="CRAG thresholds: quality and refusal rate")
    return fig
