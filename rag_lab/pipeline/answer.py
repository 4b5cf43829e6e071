"""The answer of one question (docs/design.md §1, **generate**): the generation call over the final
context, with the template its CRAG grade selects, then the guards (:mod:`rag_lab.pipeline.answer_guard`),
and the :class:`Result` that records both."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rag_lab.llm import prompts
from rag_lab.llm.ledger import CostSummary
from rag_lab.pipeline.answer_guard import guard_draft, judge_answer, model_refused, plain_draft
from rag_lab.pipeline.finalize import ContextItem
from rag_lab.pipeline.run_context import RunContext
from rag_lab.pipeline.trace import StopReason, StopReasonName, TraceStep

REFUSAL = "I could not find enough evidence to answer this question."


class Result(BaseModel):
    qid: str
    question: str
    answer: str
    status: Literal["answered", "refused", "echo"] = Field(
        description="answered; refused (no defensible answer); echo (the guard found the draft parroting its prompt)")
    stop_reason: StopReasonName
    route: str
    rounds_used: int
    refused_by: Literal["model", "pipeline"] | None = Field(
        default=None, description="who refused: the model (its controller's or its answer's INSUFFICIENT) or the "
                                  "pipeline (a guard, the judge, a policy rejection, CRAG, a fallback); None when answered")
    draft: str = Field(description="the generator's text before the guard")
    citations: list[int] = Field(default_factory=list, description="context numbers cited after the guard")
    cited_chunk_ids: list[str] = Field(default_factory=list)
    invalid_citations: int = 0
    context: list[ContextItem] = Field(default_factory=list)
    crag_grade: Literal["correct", "ambiguous", "incorrect", "disabled", "empty"]
    fallback_used: bool = False
    llm_cost: CostSummary = CostSummary()
    llm_spent: CostSummary = CostSummary()
    llm_calls_by_role: dict[str, int] = Field(default_factory=dict)
    llm_spent_by_role: dict[str, int] = Field(default_factory=dict, description="cache misses by role")
    retrieval_calls: int = 0
    embedding_calls: int = 0


def generate_and_guard(run: RunContext, context: list[ContextItem], grade: str, reason: str) -> Result:
    """Generate a draft from ``context`` (none when it is empty), guard it, and build the result; a refusal
    replaces the answer with :data:`REFUSAL` and turns an ``answered`` stop reason into ``insufficient``. Under
    ``generation.reader=plain`` the plain reader writes the draft and no guard runs (:func:`plain_draft`); under
    ``closed_book`` the model answers the question alone, with no context, and no guard runs either."""
    items = [prompts.EvidenceItem(i, c.title, c.text) for i, c in enumerate(context, start=1)]
    reader = run.cfg.generation.reader
    plain = reader != "guarded"
    template = reader if plain else {"correct": "correct", "disabled": "correct",
                                     "ambiguous": "ambiguous"}.get(grade, "fallback")
    draft = prompts.INSUFFICIENT
    instructions = ""
    if items or reader == "closed_book":
        response, call = (run.ask("closedbook", run.question) if reader == "closed_book" else
                          run.ask("reader", run.question, items) if plain else
                          run.ask("answer", run.question, items, template))
        instructions = call.messages[0]["content"]
        draft = response.text.strip()
        run.trace.add(TraceStep(kind="generate", llm=call, retrieved=[c.chunk_id for c in context],
                                tokens=response.usage.total_tokens, detail={"template": template}))
    if plain:
        answer, cited, invalid, refusal = plain_draft(run, draft, context, closed_book=reader == "closed_book")
    else:
        answer, cited, invalid, refusal = guard_draft(run, draft, context, instructions, items)
    if refusal is None and run.cfg.judge.enabled and not plain:
        refusal = judge_answer(run, answer, items)
    status: Literal["answered", "refused", "echo"] = (
        "answered" if refusal is None else "echo" if refusal == "echo" else "refused"
    )
    refused_by = None if refusal is None else "model" if model_refused(run, refusal) else "pipeline"
    if status != "answered":
        answer = REFUSAL
        cited = []
        if reason == StopReason.ANSWERED:
            reason = StopReason.INSUFFICIENT
            run.trace.stop_reason = reason
    return Result(
        qid=run.qid, question=run.question, answer=answer, status=status, stop_reason=reason,
        route=run.state.route, rounds_used=run.state.rounds_used, refused_by=refused_by, draft=draft, citations=cited,
        cited_chunk_ids=[context[n - 1].chunk_id for n in cited], invalid_citations=invalid,
        context=[c.model_copy(update={"n": i}) for i, c in enumerate(context, start=1)],
        crag_grade=grade, fallback_used=run.state.fallback_used, retrieval_calls=run.state.retrieval_calls,
        embedding_calls=run.state.embedding_calls)
