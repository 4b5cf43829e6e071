"""The figures, by name (:data:`FIGURES`), and a ``plot_*`` function per figure.

Every figure is split Optuna-style: ``<name>_info(data)`` returns a :class:`typing.NamedTuple` of plain
data (what tests compare) and ``<name>_figure(info)`` builds the plotly figure from it. ``plot_<name>``
does both: it takes the arguments of ``<name>_info`` and returns the figure, so
``plot_cost_quality(table, cost, quality)`` is ``cost_quality_figure(cost_quality_info(table, cost, quality))``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import plotly.graph_objects as go

from rag_lab.figures.cost_quality import cost_quality_figure, cost_quality_info
from rag_lab.figures.crag_heatmap import crag_heatmap_figure, crag_heatmap_info
from rag_lab.figures.forest import forest_figure, forest_info
from rag_lab.figures.round_yield import round_yield_figure, round_yield_info
from rag_lab.figures.rounds_histogram import rounds_histogram_figure, rounds_histogram_info
from rag_lab.figures.sim_vs_real import sim_vs_real_figure, sim_vs_real_info
from rag_lab.figures.trace_timeline import trace_timeline_figure, trace_timeline_info
from rag_lab.figures.truncation_retention import truncation_retention_figure, truncation_retention_info
from rag_lab.figures.where_grid import where_grid_figure, where_grid_info
from rag_lab.registry import Registry


@dataclass(frozen=True)
class FigureKind:
    """One figure: its ``info`` function (data → NamedTuple) and its ``figure`` function (info → plotly)."""

    info: Callable[..., NamedTuple]
    figure: Callable[[Any], go.Figure]

    def plot(self, *args: Any, **kwargs: Any) -> go.Figure:
        """The figure of ``info(*args, **kwargs)``."""
        return self.figure(self.info(*args, **kwargs))


#: The figures by name: the one list of figures (the ``plot_*`` functions and the figure tests derive from it).
FIGURES: Registry[FigureKind] = Registry("figure")
FIGURES.add("cost_quality", FigureKind(cost_quality_info, cost_quality_figure))
FIGURES.add("crag_heatmap", FigureKind(crag_heatmap_info, crag_heatmap_figure))
FIGURES.add("forest", FigureKind(forest_info, forest_figure))
FIGURES.add("round_yield", FigureKind(round_yield_info, round_yield_figure))
FIGURES.add("rounds_histogram", FigureKind(rounds_histogram_info, rounds_histogram_figure))
FIGURES.add("sim_vs_real", FigureKind(sim_vs_real_info, sim_vs_real_figure))
FIGURES.add("trace_timeline", FigureKind(trace_timeline_info, trace_timeline_figure))
FIGURES.add("truncation_retention", FigureKind(truncation_retention_info, truncation_retention_figure))
FIGURES.add("where_grid", FigureKind(where_grid_info, where_grid_figure))


def plotter(name: str) -> Callable[..., go.Figure]:
    """``plot_<name>``: the arguments (and signature) of ``<name>_info``, the figure of ``<name>_figure``."""
    kind = FIGURES[name]

    def plot(*args: Any, **kwargs: Any) -> go.Figure:
        return kind.plot(*args, **kwargs)

    plot.__name__ = plot.__qualname__ = f"plot_{name}"
    plot.__module__ = __name__
    plot.__doc__ = (f"``{kind.figure.__name__}({kind.info.__name__}(...))``: the arguments are those of "
                    f":func:`~{kind.info.__module__}.{kind.info.__name__}`.")
    plot.__signature__ = inspect.signature(kind.info).replace(return_annotation=go.Figure)  # type: ignore[attr-defined]
    return plot


plot_cost_quality = plotter("cost_quality")
plot_crag_heatmap = plotter("crag_heatmap")
plot_forest = plotter("forest")
plot_round_yield = plotter("round_yield")
plot_rounds_histogram = plotter("rounds_histogram")
plot_sim_vs_real = plotter("sim_vs_real")
plot_trace_timeline = plotter("trace_timeline")
plot_truncation_retention = plotter("truncation_retention")
plot_where_grid = plotter("where_grid")
