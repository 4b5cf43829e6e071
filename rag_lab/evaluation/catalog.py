"""One place for the names of metric columns: the default axes of every table, figure, report and
widget, and what the metric registry (:data:`~rag_lab.evaluation.metric_table.METRICS`) says of a column: its
human-readable label, whether it is a metric, which way is better, its value range.

Figures, reports and widgets take their defaults from here, so changing the headline metric is a one-line change."""

from __future__ import annotations

from rag_lab.errors import ConfigError
from rag_lab.evaluation.families import PARAM_PREFIX, short_name
from rag_lab.evaluation.metric_table import METRICS

#: The headline quality column (y axis by default everywhere): strict answer containment — the gold
#: answer within a short answer, in its own words (rag_lab.evaluation.answers), so an answer that
#: parrots its prompt or the evidence scores 0. The lenient form is ``quality_answer_containment``.
DEFAULT_QUALITY = "quality_answer_containment_strict"
#: The headline cost column (x axis by default everywhere).
DEFAULT_COST = "cost_llm_calls"

#: Columns shown beside a quality column wherever a view shows one (sweep panel table, explorer
#: status): the strict containment is read next to its lenient form and token F1.
BESIDE: dict[str, tuple[str, ...]] = {"quality_answer_containment_strict": ("quality_answer_containment", "quality_f1")}


def beside(column: str) -> tuple[str, ...]:
    """The columns to show next to ``column`` (:data:`BESIDE`; none for most)."""
    return BESIDE.get(column, ())


def label(column: str) -> str:
    """A readable title for a metric column (``cost_tokens`` → ``tokens / question``): the registered label,
    else the column name tidied."""
    metric = METRICS.get(column)
    if metric is not None and metric.label is not None:
        return metric.label
    return short_name(column.removeprefix(PARAM_PREFIX)).replace("_", " ")


def check_metric(name: str, what: str = "metric") -> str:
    """``name`` when it is a registered metric column (:data:`~rag_lab.evaluation.metric_table.METRICS`), else a
    :class:`ValueError` naming the known ones."""
    if name not in METRICS:
        raise ConfigError(f"{what} {name!r} names no metric; the known metrics are: {', '.join(sorted(METRICS))}")
    return name


def value_range(metric: str) -> tuple[float, float] | None:
    """The values a metric column can take, when bounded: ``(0, 1)`` for the 0/1 rates and the shares (the
    registry's ``zero_one`` and ``share``); None for counts, costs and columns that are no metric."""
    return METRICS[metric].value_range if metric in METRICS else None


def lower_is_better(metric: str) -> bool:
    """Whether smaller values of ``metric`` are better (the registry's ``better``: costs and the rates of bad
    outcomes such as refusals), e.g. for an objective without ``min:`` / ``max:``."""
    return metric in METRICS and METRICS[metric].better == "lower"


def is_outcome(metric: str) -> bool:
    """Whether ``metric`` measures an outcome (answer quality, evidence kept, abstention), not a cost or a counter."""
    return metric in METRICS and METRICS[metric].outcome
