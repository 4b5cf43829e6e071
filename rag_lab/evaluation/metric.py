"""What a metric is: :class:`Metric`, one per per-question column, and the :class:`QuestionRun` its value reads.

:data:`rag_lab.evaluation.metric_table.METRICS` is the one list of metric columns; the per-question row, the axis
labels, the names objectives and findings may use, which way is better and the value ranges all derive from it.
A new metric is one registration::

    METRICS.add("quality_short_answer", Metric(lambda run: float(len(run.answer_text.split()) <= 5),
                                               "short answers", better="higher", zero_one=True))"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from rag_lab.chunking import doc_of
from rag_lab.errors import ConfigError
from rag_lab.evaluation.answers import contains_strict, normalize_answer
from rag_lab.pipeline import Result, Trace
from rag_lab.records import Question
from rag_lab.text_overlap import CITATION_MARK

__all__ = ["Metric", "QuestionRun"]


class QuestionRun:
    """One question's pipeline run as the metrics read it: the question, its result and trace, and the facts
    several metrics share (each worked out once, on first use)."""

    def __init__(self, question: Question, result: Result, trace: Trace) -> None:
        self.question = question
        self.result = result
        self.trace = trace

    @property
    def gold(self) -> tuple[str, ...]:
        """The gold answers (with aliases); empty for an unanswerable or unlabelled question."""
        return self.question.gold_answers

    @cached_property
    def truth(self) -> tuple[str, ...]:
        """The answers that are right whatever the evidence: the gold answers, or for an unanswerable twin
        (:mod:`rag_lab.loaders.twins`) its original's, which an answer from memory may hit; empty for an
        unanswerable question with no original (the world's), where no answer is right."""
        return self.gold or tuple(self.question.metadata.get("original_answers", ()))

    @cached_property
    def right(self) -> bool:
        """Answered, and right: a strict containment of :attr:`truth` (the headline answer rule)."""
        return self.answered and contains_strict(self.answer_text, self.truth, self.question.text)

    @property
    def answered(self) -> bool:
        return self.result.status == "answered"

    @cached_property
    def answer_text(self) -> str:
        """The answer without its citation marks (``[2]``, ``[1, 3]``: :data:`~rag_lab.text_overlap.CITATION_MARK`)."""
        return CITATION_MARK.sub("", self.result.answer)

    @cached_property
    def gold_docs(self) -> set[str]:
        return set(self.question.gold_doc_ids)

    @cached_property
    def context_docs(self) -> list[str]:
        """The final context's documents, once each, in context order."""
        return list(dict.fromkeys(c.doc_id for c in self.result.context))

    @cached_property
    def context_text(self) -> str:
        """The final context's text, normalised as answers are."""
        return normalize_answer(" ".join(c.text for c in self.result.context))

    @cached_property
    def cited(self) -> list[tuple[str, str]]:
        """``(doc_id, text)`` of every context item the answer cites, in citation order."""
        return [(self.result.context[n - 1].doc_id, self.result.context[n - 1].text) for n in self.result.citations]

    @cached_property
    def call_outcomes(self) -> list[str]:
        return [c.outcome for c in self.trace.llm_calls()]

    @cached_property
    def off_contract(self) -> set[str]:
        """Chunks a retrieval step flagged as outside the source contract."""
        return {c for step in self.trace.steps if step.kind == "retrieve" for c in step.detail.get("off_contract", ())}

    @cached_property
    def later_gold(self) -> set[str]:
        """Gold documents first found by retrieval round 2 or later."""
        return {doc_of(c) for step in self.trace.steps if step.kind == "retrieve" and step.round >= 2
                for c in step.new} & self.gold_docs


#: The value of a metric for one run: a number, or None where the metric is undefined for the question.
MetricValue = Callable[[QuestionRun], float | int | None]


@dataclass(frozen=True)
class Metric:
    """One per-question metric column.

    ``value`` computes it from a :class:`QuestionRun`; ``label`` is its readable title (None: the tidied column
    name); ``better`` the direction an optimiser takes (``"higher"``, ``"lower"``, or None for a descriptive
    count); ``zero_one`` says every defined value is 0 or 1 (a rate: its mean is a share of questions);
    ``share`` that the values lie in [0, 1] without being 0/1 (F1, recall, precision);
    ``outcome`` that it measures an outcome (answer quality, evidence kept, abstention) rather than a cost or a
    counter; ``per_role`` that it is one LLM role's call count, written only for the roles the run called."""

    value: MetricValue
    label: str | None = None
    better: Literal["higher", "lower"] | None = None
    zero_one: bool = False
    share: bool = False
    outcome: bool = False
    per_role: bool = False

    def __post_init__(self) -> None:
        if self.better not in ("higher", "lower", None):
            raise ConfigError(f"better is 'higher', 'lower' or None, got {self.better!r}")
        if self.zero_one and self.share:
            raise ConfigError("a metric is 0/1 (zero_one) or a share in [0, 1] (share), not both")

    @property
    def value_range(self) -> tuple[float, float] | None:
        """``(0, 1)`` for a 0/1 metric or a share, else None (counts and costs are unbounded)."""
        return (0.0, 1.0) if self.zero_one or self.share else None
