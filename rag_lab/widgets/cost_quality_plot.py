"""The widgets' cost-vs-quality plot: a live ``FigureWidget`` that shows what
:func:`rag_lab.figures.cost_quality_figure` draws for a table (its traces, label placement and layout), so a
widget's plot is the report's plot of the same data."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from rag_lab.evaluation.catalog import label
from rag_lab.figures import cost_quality_figure, cost_quality_info

#: The widgets' plot height (px); the figure's own layout gives everything else.
HEIGHT = 420


def empty_plot(cost_col: str, quality_col: str) -> go.FigureWidget:
    """The live plot before anything has run: axis titles only."""
    return go.FigureWidget(layout=go.Layout(height=HEIGHT, template="plotly_white", uirevision="keep",
                                            xaxis_title=label(cost_col), yaxis_title=label(quality_col)))


def draw(plot: go.FigureWidget, table: pd.DataFrame, cost_col: str, quality_col: str,
         text_col: str | None = "changes") -> go.Figure:
    """Replace ``plot``'s traces and layout with :func:`cost_quality_figure` of ``table`` (one row per
    configuration, points named by ``text_col``); return that figure."""
    figure = cost_quality_figure(cost_quality_info(table, cost_col, quality_col, text_col=text_col))
    with plot.batch_update():
        plot.data = ()
        plot.add_traces(list(figure.data))
        plot.update_layout(figure.layout)
        plot.update_layout(height=HEIGHT, uirevision="keep")
    return figure
