"""Does later-round evidence survive truncation? The share of gold evidence first found in round 2 or later that
reaches the prompt, by truncation strategy and snippet limit (:func:`truncation_retention_info`, averaged over
a results table; :func:`truncation_retention_figure`, one line per strategy)."""

from __future__ import annotations

import html
from typing import NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rag_lab.figures.common import as_frame, axis_values, is_missing, numeric, require_columns, short
from rag_lab.figures.grid_means import grid_mean


class TruncationRetentionInfo(NamedTuple):
    """Mean retention per (strategy, limit).

    ``retention[s, k]`` is the mean of the value column over the rows with strategy ``strategies[s]`` and
    limit ``limits[k]`` (NaN where none has a defined value: no run, or no later-round gold evidence);
    ``n[s, k]`` counts the rows with a defined value."""

    strategy_col: str
    limit_col: str
    value_col: str
    strategies: tuple[str, ...]
    limits: tuple[float, ...]
    retention: np.ndarray
    n: np.ndarray


def truncation_retention_info(table: pd.DataFrame, value_col: str = "quality_later_gold_retained") -> TruncationRetentionInfo:
    """The truncation strategy × snippet limit grid of ``table``'s ``value_col`` means."""
    strategy_col, limit_col = "param_truncation.strategy", "param_truncation.max_snippets"
    table = as_frame(table, "results table")
    require_columns(table, [strategy_col, limit_col, value_col], "results table")
    strategy = [None if is_missing(s) else str(s) for s in table[strategy_col].tolist()]
    limit = numeric(table, limit_col).tolist()
    strategies, limits = axis_values(strategy), axis_values(limit)
    retention, n = grid_mean(strategy, limit, numeric(table, value_col), strategies, limits)
    return TruncationRetentionInfo(strategy_col=strategy_col, limit_col=limit_col, value_col=value_col,
                                   strategies=strategies, limits=limits, retention=retention, n=n)


def truncation_retention_figure(info: TruncationRetentionInfo) -> go.Figure:
    """Lines and markers of ``info``: one line per strategy, x = limit, y = retention (gaps where NaN)."""
    fig = go.Figure()
    for s, strategy in enumerate(info.strategies):
        name = html.escape(strategy)
        fig.add_trace(go.Scatter(
            x=list(info.limits), y=[None if np.isnan(v) else v for v in info.retention[s].tolist()],
            mode="lines+markers", name=name, customdata=info.n[s].tolist(),
            hovertemplate=f"{name}<br>limit=%{{x}}<br>retained=%{{y:.3g}}<br>runs=%{{customdata}}<extra></extra>"))
    fig.update_layout(template="plotly_white", title="Later-round gold evidence reaching the prompt",
                      xaxis_title=html.escape(short(info.limit_col)),
                      yaxis=dict(title=html.escape(short(info.value_col)), rangemode="tozero"),
                      legend_title_text=html.escape(short(info.strategy_col)))
    return fig
