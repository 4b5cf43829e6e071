"""Per-question quality and cost metrics of one pipeline run (docs/design.md §5): the registrations of :data:`METRICS`
(every metric column, complete on import of this module) and the row they make (:func:`question_metrics`). ``cost_*``
count what the policy incurred, cached or not; ``spent_*`` only the cache misses and ``run_*`` wall-clock time."""

from __future__ import annotations

from typing import Any

from rag_lab.evaluation.answers import contains, contains_strict, exact_match, f1, normalize_answer
from rag_lab.evaluation.metric import Metric, QuestionRun
from rag_lab.llm.role_table import LLM_ROLES
from rag_lab.pipeline import Result, Trace
from rag_lab.records import Question
from rag_lab.registry import Registry
from rag_lab.text_overlap import tokens

__all__ = ["METRICS", "Metric", "QuestionRun", "question_metrics"]

#: Every per-question metric column, in the order of the per-question row (the rows below, and any a user adds).
METRICS: Registry[Metric] = Registry("metric")


def _rate(ok: bool) -> float:
    return 1.0 if ok else 0.0


def _if_gold(value: Any) -> Any:
    """``value(run)`` where the question has a gold answer, else None (undefined)."""
    return lambda run: value(run) if run.gold else None


def _rate_metric(ok: Any, label: str, better: str = "higher", outcome: bool = False) -> Metric:
    return Metric(lambda run: _rate(ok(run)), label, better, zero_one=True, outcome=outcome)  # type: ignore[arg-type]


def _gold_rate_metric(ok: Any, label: str) -> Metric:
    return Metric(_if_gold(lambda run: _rate(ok(run))), label, "higher", zero_one=True, outcome=True)


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _evidence_precision(run: QuestionRun) -> float | None:
    return _share(len(run.gold_docs & set(run.context_docs)), len(run.context_docs)) if run.gold_docs else None


def _citation_precision(run: QuestionRun) -> float | None:
    good = sum(1 for doc, text in run.cited if doc in run.gold_docs or contains(text, run.gold))
    return _share(good, len(run.cited))


def _citation_validity(run: QuestionRun) -> float | None:
    return _share(len(run.result.citations), len(run.result.citations) + run.result.invalid_citations)


def _is_yes_no(gold: list[str]) -> bool:
    """Whether a gold answer is ``yes`` or ``no`` (a yes/no question)."""
    return any(normalize_answer(g) in ("yes", "no") for g in gold)


def _says_no(answer: str) -> bool:
    """Whether an answer opens with the word "no" ("No", "No, he did not.")."""
    words = tokens(answer)
    return bool(words) and words[0] == "no"


def _has_answer_in_context(run: QuestionRun) -> bool:
    return any(f" {normalize_answer(g)} " in f" {run.context_text} " for g in run.gold)


# --- quality: the answer ----------------------------------------------------------------------------------
METRICS.add("quality_answer_containment", _gold_rate_metric(
    lambda run: run.answered and contains(run.answer_text, run.gold), "answer containment (lenient)"))
METRICS.add("quality_answer_containment_strict", _gold_rate_metric(
    lambda run: run.answered and contains_strict(run.answer_text, run.gold, run.question.text),
    "answer containment (strict: short answer)"))
METRICS.add("quality_exact_match", _gold_rate_metric(
    lambda run: run.answered and exact_match(run.answer_text, run.gold), "exact match"))
METRICS.add("quality_f1", Metric(_if_gold(lambda run: f1(run.answer_text, run.gold) if run.answered else 0.0),
                                 "answer token F1", "higher", share=True, outcome=True))
# --- quality: the evidence ----------------------------------------------------------------------------------
METRICS.add("quality_has_answer_in_context", _gold_rate_metric(_has_answer_in_context, "gold answer in final context"))
METRICS.add("quality_evidence_recall", Metric(
    lambda run: _share(len(run.gold_docs & set(run.context_docs)), len(run.gold_docs)),
    "gold evidence recall (final context)", "higher", share=True, outcome=True))
METRICS.add("quality_evidence_precision", Metric(
    _evidence_precision, "gold evidence precision (final context)", "higher", share=True, outcome=True))
METRICS.add("quality_later_gold_retained", Metric(
    lambda run: _share(len(run.later_gold & set(run.context_docs)), len(run.later_gold)),
    "later-round gold evidence kept", "higher", share=True, outcome=True))
METRICS.add("quality_citation_precision", Metric(_citation_precision, "citation precision", "higher", share=True))
METRICS.add("quality_citation_validity", Metric(_citation_validity, "citation validity", "higher", share=True))
METRICS.add("quality_off_contract_citation", _rate_metric(
    lambda run: run.answered and any(c in run.off_contract for c in run.result.cited_chunk_ids),
    "answers citing a source outside the contract", "lower"))
# --- quality: the run's behaviour ---------------------------------------------------------------------------
METRICS.add("quality_abstention_accuracy", _rate_metric(
    lambda run: run.answered == run.question.answerable, "abstention accuracy", outcome=True))
METRICS.add("quality_refused", _rate_metric(lambda run: not run.answered, "refusal rate", "lower"))
METRICS.add("quality_refused_model", _rate_metric(lambda run: run.result.refused_by == "model",
                                                  "refused by the model (its INSUFFICIENT)", "lower"))
METRICS.add("quality_refused_pipeline", _rate_metric(lambda run: run.result.refused_by == "pipeline",
                                                     "refused by the pipeline (guards, judge, policies)", "lower"))
METRICS.add("quality_no_to_open", Metric(
    lambda run: None if not run.gold or _is_yes_no(run.gold) else _rate(run.answered and _says_no(run.answer_text)),
    "'no' answers to questions that are not yes/no", "lower", zero_one=True))
METRICS.add("quality_echo", _rate_metric(lambda run: run.result.status == "echo",
                                         "echo rate (draft parroted its prompt)", "lower"))
METRICS.add("quality_rounds_minus_hops", Metric(lambda run: run.result.rounds_used - run.question.min_hops,
                                                "rounds used − minimum hops", "lower"))
METRICS.add("quality_rounds_at_least_hops", _rate_metric(lambda run: run.result.rounds_used >= run.question.min_hops,
                                                         "rounds ≥ minimum hops"))
METRICS.add("quality_fallback", _rate_metric(
    lambda run: run.result.fallback_used or "fallback" in run.call_outcomes, "fallback rate", "lower"))
# --- quality: what a guard buys and what it costs (docs/design.md §5, "What a guard buys") ---------------------
# "right" is the strict answer rule against the gold answers, or on an unanswerable twin against its original's
# (an answer from memory); a refusal is neither right nor wrong. Defined on every question, so a sweep that mixes
# answerable and unanswerable questions (the world) prices both.
METRICS.add("quality_right", _rate_metric(lambda run: run.right, "right answers (refusals count 0)", outcome=True))
METRICS.add("quality_confident_error", _rate_metric(
    lambda run: run.answered and not run.right, "confident errors (answered and wrong)", "lower", outcome=True))
METRICS.add("quality_answered", _rate_metric(lambda run: run.answered, "coverage (answered)"))
METRICS.add("quality_right_among_answered", Metric(
    lambda run: _rate(run.right) if run.answered else None, "right among answered", "higher", zero_one=True,
    outcome=True))
METRICS.add("quality_unsupported_answer", Metric(
    lambda run: None if run.question.answerable else _rate(run.answered),
    "unsupported answers (answered an unanswerable question)", "lower", zero_one=True, outcome=True))
METRICS.add("quality_right_from_memory", Metric(
    lambda run: _rate(run.right) if not run.question.answerable and run.truth else None,
    "right from memory (right on an unanswerable twin)", None, zero_one=True))
METRICS.add("quality_utility", Metric(
    lambda run: _rate(run.right) - _rate(run.answered and not run.right),
    "utility at c = 1 (right − wrong; CRAG's truthfulness)", "higher", outcome=True))
# --- cost ---------------------------------------------------------------------------------------------------
METRICS.add("cost_rounds", Metric(lambda run: run.result.rounds_used, "retrieval rounds / question", "lower"))
METRICS.add("cost_llm_calls", Metric(lambda run: run.result.llm_cost.calls, "LLM calls / question", "lower"))
METRICS.add("cost_prompt_tokens", Metric(lambda run: run.result.llm_cost.prompt_tokens, "prompt tokens / question",
                                         "lower"))
METRICS.add("cost_completion_tokens", Metric(lambda run: run.result.llm_cost.completion_tokens,
                                             "completion tokens / question", "lower"))
METRICS.add("cost_tokens", Metric(lambda run: run.result.llm_cost.total_tokens, "tokens / question", "lower"))
METRICS.add("cost_usd", Metric(lambda run: run.result.llm_cost.cost_usd, "cost (USD) / question", "lower"))
METRICS.add("cost_modelled_latency_s", Metric(lambda run: run.result.llm_cost.modelled_latency_s,
                                              "modelled LLM latency (s) / question", "lower"))
METRICS.add("run_wall_latency_s", Metric(lambda run: run.result.llm_cost.latency_s, better="lower"))
METRICS.add("spent_llm_calls", Metric(lambda run: run.result.llm_spent.calls, better="lower"))
METRICS.add("spent_usd", Metric(lambda run: run.result.llm_spent.cost_usd, better="lower"))
METRICS.add("cost_retrieval_calls", Metric(lambda run: run.result.retrieval_calls, "retrieval calls / question",
                                           "lower"))
METRICS.add("cost_embedding_calls", Metric(lambda run: run.result.embedding_calls, "embedding calls / question",
                                           "lower"))


# --- cost per LLM role: written for the roles the run called ----------------------------------------------
def _role_calls(kind: str, role: str) -> tuple[str, Metric]:
    """``cost_calls_<role>`` (the role's calls) or ``spent_calls_<role>`` (its cache misses)."""
    calls = "llm_calls_by_role" if kind == "cost" else "llm_spent_by_role"
    return f"{kind}_calls_{role}", Metric(lambda run: getattr(run.result, calls).get(role, 0), better="lower",
                                          per_role=True)


for _role in LLM_ROLES:
    for _kind in ("cost", "spent"):
        METRICS.add(*_role_calls(_kind, _role))


def question_metrics(question: Question, result: Result, trace: Trace) -> dict[str, Any]:
    """One flat row: the question's labels (``qid``, ``type``, ``status`` ..., ``best_relevance``, and for an
    unanswerable twin ``pair_id`` and ``twin_flagged``), then every metric of
    :data:`METRICS` in registration order — ``quality_*`` in [0, 1] (or None where
    undefined), ``cost_*`` counts — with the per-role call counts of the roles the run called, in call order."""
    run = QuestionRun(question, result, trace)
    row: dict[str, Any] = {
        "qid": question.qid,
        "type": question.type,
        "answerable": question.answerable,
        "status": result.status,
        "stop_reason": str(result.stop_reason),
        "route": result.route,
        "crag_grade": result.crag_grade,
        # the best relevance in the final context (None when it is empty): what the citation guard's
        # refusal_threshold compares, so thresholding it draws that guard's risk-coverage curve from one run
        "best_relevance": max((c.score for c in result.context), default=None),
    }
    if "pair_id" in question.metadata:   # an unanswerable twin (rag_lab.loaders.twins): its pair, and its flag
        row["pair_id"] = question.metadata["pair_id"]
        row["twin_flagged"] = bool(question.metadata.get("answer_in_corpus"))
    row.update((name, metric.value(run)) for name, metric in METRICS.items() if not metric.per_role)
    for role in result.llm_calls_by_role:
        for kind in ("cost", "spent"):
            name, metric = _role_calls(kind, role)
            row[name] = METRICS.get(name, metric).value(run)
    return row
