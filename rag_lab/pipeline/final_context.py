"""The final context of one question (docs/design.md §1, **finalize**): union → dedup → score on one scale → optional
MMR → CRAG → truncation, recorded as the trace's ``finalize`` step (and one ``grade`` step per chunk the LLM evaluator
grades). The pieces it assembles are in :mod:`rag_lab.pipeline.finalize`."""

from __future__ import annotations

from rag_lab.llm import prompts
from rag_lab.llm.schemas import RelevanceGrade
from rag_lab.pipeline.finalize import ContextItem, crag_grade, mmr_order
from rag_lab.pipeline.interventions import Intervention
from rag_lab.pipeline.resources import lexical_relevance
from rag_lab.pipeline.run_context import RunContext
from rag_lab.pipeline.trace import TraceStep
from rag_lab.pipeline.truncation import truncate


def final_context(run: RunContext, refuse: bool) -> tuple[list[ContextItem], str]:
    """The generation context and its CRAG grade (``"empty"`` when nothing is left, or on ``refuse``)."""
    step = run.trace.add(TraceStep(kind="finalize"))
    if refuse:
        step.intervene(Intervention.NO_CONTEXT, "no context: the run ends in a refusal")
        return [], "empty"
    candidates = run.candidates(list(run.state.seen))  # seen is already unique by chunk id
    if run.cfg.finalize.mmr and candidates:
        candidates = mmr_order(candidates, run.res, run.cfg.finalize.mmr_lambda)
    grade = "disabled"
    if run.cfg.crag.enabled and candidates:
        candidates, grade = _crag(run, candidates, step)
    strategy = run.cfg.truncation.strategy
    if run.state.rerank_requested and strategy == "append_then_truncate":
        strategy = "rank_then_truncate"
        step.intervene(Intervention.RERANK_REQUESTED,
                       "controller asked to rerank: evidence ordered by relevance before truncation")
    context = truncate(candidates, strategy, run.cfg.truncation.max_snippets, run.cfg.truncation.max_tokens,
                       run.res, run.relevance_queries())
    step.retrieved = [c.chunk_id for c in context]
    step.detail.update({"candidates": len(candidates), "crag_grade": grade, "strategy": strategy})
    if not context and grade != "incorrect":
        grade = "empty"
    return context, grade


def _crag(run: RunContext, candidates: list[ContextItem], step: TraceStep) -> tuple[list[ContextItem], str]:
    """Grade ``candidates`` by the configured evaluator; keep those at or above ``crag.lower``."""
    crag = run.cfg.crag
    if crag.evaluator == "embedding":
        scores = [c.score for c in candidates]
    elif crag.evaluator == "lexical":
        scores = [lexical_relevance(run.question, f"{c.title} {c.text}") for c in candidates]
    else:
        scores = []
        for c in candidates[: 2 * run.cfg.truncation.max_snippets]:
            item = prompts.EvidenceItem(1, c.title, c.text)
            response, call = run.ask("grade", run.question, item,
                                     fallback=RelevanceGrade(score=max(-1.0, min(1.0, c.score))))
            run.trace.add(TraceStep(kind="grade", llm=call, retrieved=[c.chunk_id],
                                    tokens=response.usage.total_tokens,
                                    decision={"score": response.parsed.score}))  # type: ignore[union-attr]
            scores.append(response.parsed.score)  # type: ignore[union-attr]
        candidates = candidates[: len(scores)]
    grade = crag_grade(scores, crag.upper, crag.lower)
    step.detail["crag_scores"] = {c.chunk_id: round(s, 4) for c, s in zip(candidates, scores, strict=True)}
    if grade == "incorrect":
        step.intervene(Intervention.CRAG_DISCARDED, f"CRAG: every score below lower={crag.lower}: evidence discarded")
        return [], grade
    kept = [c for c, s in zip(candidates, scores, strict=True) if s >= crag.lower]
    if len(kept) < len(candidates):
        step.intervene(Intervention.CRAG_DROPPED,
                       f"CRAG: dropped {len(candidates) - len(kept)} chunk(s) below lower={crag.lower}")
    return kept, grade
