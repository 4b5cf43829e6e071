"""The axis choice of the widgets' cost-vs-quality plots: two dropdowns, cost (LLM calls, tokens, money, modelled
latency) and quality (the main ``quality_*`` columns), each option shown by its readable catalog label
(:func:`rag_lab.evaluation.catalog.label`). Changing one only re-draws: every run already holds every metric."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ipywidgets as widgets

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY, label
from rag_lab.evaluation.families import family_name

#: Cost axes offered: the default, LLM calls, tokens, money, modelled LLM latency.
COST_AXES: tuple[str, ...] = tuple(dict.fromkeys(
    (DEFAULT_COST, "cost_llm_calls", "cost_tokens", "cost_usd", "cost_modelled_latency_s")))
#: Quality axes offered: the default first, then the main answer, context and citation columns, then what a guard
#: buys — the utility at c = 1 (right − wrong) and right among answered (every one higher-is-better, as the front
#: assumes; confident errors are read in the report's guard table).
QUALITY_AXES: tuple[str, ...] = tuple(dict.fromkeys((
    DEFAULT_QUALITY, "quality_answer_containment", "quality_f1", "quality_has_answer_in_context",
    "quality_evidence_recall", "quality_citation_precision", "quality_abstention_accuracy", "quality_utility",
    "quality_right_among_answered")))


def check_axes(cost_col: str, quality_col: str) -> None:
    """``ConfigError`` unless ``cost_col`` is a ``cost_*`` column and ``quality_col`` a ``quality_*`` one."""
    if family_name(cost_col) != "cost" or family_name(quality_col) != "quality":
        raise ConfigError(f"cost_col must be a cost_* column and quality_col a quality_* column, "
                          f"got {cost_col!r} and {quality_col!r}")


class AxisPicker:
    """The two dropdowns; ``on_change(cost_col, quality_col)`` runs when the user picks another axis.
    :meth:`show` sets them from code without calling it."""

    def __init__(self, cost_col: str, quality_col: str, on_change: Callable[[str, str], None]) -> None:
        check_axes(cost_col, quality_col)
        style = {"description_width": "initial"}
        self.cost = widgets.Dropdown(options=_options(COST_AXES, cost_col), value=cost_col, description="cost axis",
                                     style=style)
        self.quality = widgets.Dropdown(options=_options(QUALITY_AXES, quality_col), value=quality_col,
                                        description="quality axis", style=style)
        self._muted = False
        for box in (self.cost, self.quality):
            box.observe(lambda _change: self._changed(on_change), names="value")
        self.widget = widgets.HBox([self.cost, self.quality])
        self.widget.add_class("rag-lab-axes")

    def _changed(self, on_change: Callable[[str, str], None]) -> None:
        if not self._muted:
            on_change(self.cost.value, self.quality.value)

    def show(self, cost_col: str, quality_col: str) -> None:
        """Put ``cost_col`` and ``quality_col`` on the dropdowns (added as options if new), silently."""
        self._muted = True
        try:
            for box, col in ((self.cost, cost_col), (self.quality, quality_col)):
                if col not in [value for _, value in box.options]:
                    box.options = [*box.options, (label(col), col)]
                box.value = col
        finally:
            self._muted = False


def _options(columns: Sequence[str], chosen: str) -> list[tuple[str, str]]:
    return [(label(c), c) for c in dict.fromkeys((*columns, chosen))]
