"""Per-question quality and cost metrics of one pipeline run (docs/design.md §5)."""

from __future__ import annotations

import re
from typing import Any

from rag_lab.evaluation.answers import contains, contains_strict, exact_match, f1, normalize_answer
from rag_lab.pipeline import Result, Trace
from rag_lab.records import Question

_CITATION = re.compile(r"\[\d+\]")


def question_metrics(question: Question, result: Result, trace: Trace) -> dict[str, Any]:
    """One flat row: ``quality_*`` in [0, 1] (or None where undefined), ``cost_*`` counts, and labels.

    Answer containment comes in two forms (:mod:`rag_lab.evaluation.answers`): lenient (the gold
    anywhere in the answer) and strict (only within a short answer, in its own words — a parrot
    scores 0). ``quality_echo`` is 1 when the echo guard rejected the draft (status ``echo``); such
    a question counts as not answered everywhere (``quality_refused`` included)."""
    gold = question.gold_answers
    answered = result.status == "answered"
    answer_text = _CITATION.sub("", result.answer)
    context_docs = list(dict.fromkeys(c.doc_id for c in result.context))
    gold_docs = set(question.gold_doc_ids)
    context_text = normalize_answer(" ".join(c.text for c in result.context))
    cited_docs = [result.context[n - 1].doc_id for n in result.citations]
    cited_texts = [result.context[n - 1].text for n in result.citations]
    total_citations = len(result.citations) + result.invalid_citations
    outcomes = [c.outcome for c in trace.llm_calls()]
    off_contract = {c for step in trace.steps if step.kind == "retrieve" for c in step.detail.get("off_contract", ())}
    later_gold = {
        c.rsplit("#", 1)[0] for step in trace.steps if step.kind == "retrieve" and step.round >= 2 for c in step.new
    } & gold_docs

    def rate(ok: bool) -> float:
        return 1.0 if ok else 0.0

    row: dict[str, Any] = {
        "qid": question.qid,
        "type": question.type,
        "answerable": question.answerable,
        "status": result.status,
        "stop_reason": str(result.stop_reason),
        "route": result.route,
        "crag_grade": result.crag_grade,
        # quality
        "quality_answer_containment": rate(answered and contains(answer_text, gold)) if gold else None,
        "quality_answer_containment_strict": (
            rate(answered and contains_strict(answer_text, gold, question.text)) if gold else None
        ),
        "quality_exact_match": rate(answered and exact_match(answer_text, gold)) if gold else None,
        "quality_f1": (f1(answer_text, gold) if answered else 0.0) if gold else None,
        "quality_has_answer_in_context": (
            rate(any(f" {normalize_answer(g)} " in f" {context_text} " for g in gold)) if gold else None
        ),
        "quality_evidence_recall": (len(gold_docs & set(context_docs)) / len(gold_docs)) if gold_docs else None,
        "quality_evidence_precision": (
            len(gold_docs & set(context_docs)) / len(context_docs) if gold_docs and context_docs else None
        ),
        "quality_later_gold_retained": (
            len(later_gold & set(context_docs)) / len(later_gold) if later_gold else None
        ),
        "quality_citation_precision": (
            sum(1 for d, t in zip(cited_docs, cited_texts, strict=True) if d in gold_docs or contains(t, gold))
            / len(cited_docs) if cited_docs else None
        ),
        "quality_citation_validity": len(result.citations) / total_citations if total_citations else None,
        "quality_off_contract_citation": rate(answered and any(c in off_contract for c in result.cited_chunk_ids)),
        "quality_abstention_accuracy": rate(answered == question.answerable),
        "quality_refused": rate(not answered),
        "quality_echo": rate(result.status == "echo"),
        "quality_rounds_minus_hops": result.rounds_used - question.min_hops,
        "quality_rounds_at_least_hops": rate(result.rounds_used >= question.min_hops),
        "quality_fallback": rate(result.fallback_used or "fallback" in outcomes),
        # cost_* as the policy incurred it, cached or not (deterministic); spent_* only the cache misses and
        # run_* wall-clock time (both depend on the cache and the machine, not on the policy)
        "cost_rounds": result.rounds_used,
        "cost_llm_calls": result.llm_cost.calls,
        "cost_prompt_tokens": result.llm_cost.prompt_tokens,
        "cost_completion_tokens": result.llm_cost.completion_tokens,
        "cost_tokens": result.llm_cost.total_tokens,
        "cost_usd": result.llm_cost.cost_usd,
        "cost_modelled_latency_s": result.llm_cost.modelled_latency_s,
        "run_wall_latency_s": result.llm_cost.latency_s,
        "spent_llm_calls": result.llm_spent.calls,
        "spent_usd": result.llm_spent.cost_usd,
        "cost_retrieval_calls": result.retrieval_calls,
        "cost_embedding_calls": result.embedding_calls,
    }
    for role, calls in result.llm_calls_by_role.items():
        row[f"cost_calls_{role}"] = calls
        row[f"spent_calls_{role}"] = result.llm_spent_by_role.get(role, 0)
    return row
