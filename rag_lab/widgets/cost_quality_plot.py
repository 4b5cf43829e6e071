"""The widgets' cost-vs-quality plot: a live ``FigureWidget`` that shows what
:func:`rag_lab.figures.cost_quality_figure` draws for a table (its traces, label placement and layout), so a
widget's plot is the report's plot of the same data; the progress bar (:class:`WidgetBar`, moved by the engine's
:class:`~rag_lab.experiments.engine.progress.Progress` records, like the command line's tqdm bar); and
:class:`PlotWidget`, the parts the explorer and the sweep panel share."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from rag_lab.evaluation.catalog import label
from rag_lab.experiments.engine.progress import Progress
from rag_lab.figures import cost_quality_figure, cost_quality_info
from rag_lab.widgets.axes import AxisPicker, check_axes
from rag_lab.widgets.static import with_static_html

#: The widgets' plot height (px); the figure's own layout gives everything else.
HEIGHT = 420
#: Bar moves per run (each one is a message to the browser).
UPDATES = 40


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


class WidgetBar:
    """``widget`` counts pairs (or questions) done of ``total``; called with each record, it moves about
    :data:`UPDATES` times a run, and always on the last."""

    def __init__(self, description: str = "questions", total: int = 1) -> None:
        self.widget = widgets.IntProgress(value=0, min=0, max=total, description=description, bar_style="info")
        self.widget.add_class("rag-lab-progress")

    def start(self, total: int) -> None:
        """A new run of ``total`` steps: the bar empty, in the running colour."""
        self.widget.max, self.widget.value, self.widget.bar_style = total, 0, "info"

    def __call__(self, progress: Progress) -> None:
        step = max(1, self.widget.max // UPDATES)
        if progress.finished or abs(progress.done - self.widget.value) >= step:
            self.widget.value = min(progress.done, self.widget.max)


class PlotWidget(ABC):
    """A run's progress bar and state line, the axis dropdowns (:class:`~rag_lab.widgets.axes.AxisPicker`) and the
    live plot, as :class:`~rag_lab.widgets.PolicyExplorer` and :class:`~rag_lab.widgets.SweepPanel` show them."""

    _what = "an interactive widget"

    def __init__(self, cost_col: str, quality_col: str, state: str, total: int = 1) -> None:
        self.cost_col, self.quality_col = cost_col, quality_col
        self._lock = threading.Lock()   # guards what a run writes and the widgets' contents
        self._error: BaseException | None = None
        self._bar = WidgetBar(total=total)
        self._progress = self._bar.widget
        self._state = widgets.Label(value=state)
        self._state.add_class("rag-lab-state")
        self.axes = AxisPicker(cost_col, quality_col, lambda cost, quality: self.set_axes(cost, quality))
        self.figure = empty_plot(cost_col, quality_col)

    def set_axes(self, cost: str | None = None, quality: str | None = None) -> None:
        """Plot ``cost`` (a ``cost_*`` column) against ``quality`` (a ``quality_*`` column); None keeps an axis.
        Re-draws what has run (the explorer's points and status line, with its Δ on the quality axis; the panel's
        last sweep, its table and its plot with the Pareto front for the new pair); runs nothing."""
        cost, quality = cost or self.cost_col, quality or self.quality_col
        check_axes(cost, quality)
        with self._lock:
            self.cost_col, self.quality_col = cost, quality
            self.axes.show(cost, quality)
            self.figure.update_layout(xaxis_title=label(cost), yaxis_title=label(quality))
            self._redraw()

    @abstractmethod
    def _redraw(self) -> None:
        """Draw what has run on the current axes (called with the lock held)."""

    def _failed(self, exc: BaseException) -> None:
        """Show a run's error on the state line and the bar (``wait()`` re-raises it)."""
        self._error = exc
        self._state.value = f"error: {type(exc).__name__}: {exc}"
        self._progress.bar_style = "danger"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return with_static_html(self.widget._repr_mimebundle_(**kwargs), self._what)  # type: ignore[attr-defined]
