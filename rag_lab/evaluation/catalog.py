"""One place for the names of metric columns: the default axes of every table, figure, report and
widget, and the human-readable label of each ``quality_*`` / ``cost_*`` column.

Figures, reports and widgets take their defaults from here, so changing the headline metric is a
one-line change."""

from __future__ import annotations

from rag_lab.llm.schemas import ROLES

#: The headline quality column (y axis by default everywhere): strict answer containment — the gold
#: answer within a short answer, in its own words (rag_lab.evaluation.answers), so an answer that
#: parrots its prompt or the evidence scores 0. The lenient form is ``quality_answer_containment``.
DEFAULT_QUALITY = "quality_answer_containment_strict"
#: The headline cost column (x axis by default everywhere).
DEFAULT_COST = "cost_llm_calls"

#: Readable axis titles; :func:`label` falls back to a tidied column name for anything not listed.
LABELS: dict[str, str] = {
    "quality_answer_containment": "answer containment (lenient)",
    "quality_answer_containment_strict": "answer containment (strict: short answer)",
    "quality_exact_match": "exact match",
    "quality_f1": "answer token F1",
    "quality_has_answer_in_context": "gold answer in final context",
    "quality_evidence_recall": "gold evidence recall (final context)",
    "quality_evidence_precision": "gold evidence precision (final context)",
    "quality_later_gold_retained": "later-round gold evidence kept",
    "quality_citation_precision": "citation precision",
    "quality_citation_validity": "citation validity",
    "quality_off_contract_citation": "answers citing a source outside the contract",
    "quality_abstention_accuracy": "abstention accuracy",
    "quality_refused": "refusal rate",
    "quality_echo": "echo rate (draft parroted its prompt)",
    "quality_rounds_minus_hops": "rounds used − minimum hops",
    "quality_rounds_at_least_hops": "rounds ≥ minimum hops",
    "quality_fallback": "fallback rate",
    "cost_rounds": "retrieval rounds / question",
    "cost_llm_calls": "LLM calls / question",
    "cost_prompt_tokens": "prompt tokens / question",
    "cost_completion_tokens": "completion tokens / question",
    "cost_tokens": "tokens / question",
    "cost_usd": "cost (USD) / question",
    "cost_modelled_latency_s": "modelled LLM latency (s) / question",
    "cost_retrieval_calls": "retrieval calls / question",
    "cost_embedding_calls": "embedding calls / question",
}


#: Columns shown beside a quality column wherever a view shows one (sweep panel table, explorer
#: status): the strict containment is read next to its lenient form and token F1.
BESIDE: dict[str, tuple[str, ...]] = {
    "quality_answer_containment_strict": ("quality_answer_containment", "quality_f1"),
}


def beside(column: str) -> tuple[str, ...]:
    """The columns to show next to ``column`` (:data:`BESIDE`; none for most)."""
    return BESIDE.get(column, ())


def label(column: str) -> str:
    """A readable title for a metric column (``cost_tokens`` → ``tokens / question``)."""
    if column in LABELS:
        return LABELS[column]
    for prefix in ("quality_", "cost_", "spent_", "run_", "param_"):
        if column.startswith(prefix):
            return column[len(prefix):].replace("_", " ")
    return column.replace("_", " ")


#: Every per-question metric column :func:`rag_lab.evaluation.question_metrics.question_row` writes (the metric
#: registry): the labelled ones, the cache-dependent ``spent_*`` and ``run_*``, and one LLM-call count per role.
METRICS: frozenset[str] = frozenset(
    [*LABELS, "run_wall_latency_s", "spent_llm_calls", "spent_usd",
     *(f"{kind}_calls_{role}" for kind in ("cost", "spent") for role in ROLES)]
)


def check_metric(name: str, what: str = "metric") -> str:
    """``name`` when it is a metric column (:data:`METRICS`), else a :class:`ValueError` naming the known ones."""
    if name not in METRICS:
        raise ValueError(f"{what} {name!r} names no metric; the known metrics are: {', '.join(sorted(METRICS))}")
    return name


def value_range(metric: str) -> tuple[float, float] | None:
    """The values a metric column can take, when bounded: ``(0, 1)`` for the ``quality_*`` rates and shares
    (all but ``quality_rounds_minus_hops``); None for counts and costs (unbounded)."""
    if metric.startswith("quality_") and metric != "quality_rounds_minus_hops":
        return (0.0, 1.0)
    return None
