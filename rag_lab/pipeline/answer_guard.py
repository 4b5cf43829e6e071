"""The guards between the generator's draft and the answer (docs/design.md §1, **guard**): the refusal
rules, the echo guard (:mod:`rag_lab.pipeline.echo_guard`), the citation whitelist and cap, and the
optional LLM judge. Each records its decision in the trace (a ``guard`` step, and a ``judge`` step)."""

from __future__ import annotations

import re

from rag_lab.llm import prompts
from rag_lab.llm.schemas import JudgeVerdict
from rag_lab.pipeline.echo_guard import check_echo
from rag_lab.pipeline.finalize import ContextItem
from rag_lab.pipeline.interventions import Intervention
from rag_lab.pipeline.run_context import RunContext
from rag_lab.pipeline.trace import TraceStep
from rag_lab.text_overlap import CITATION_MARK, cited_numbers


def guard_draft(run: RunContext, draft: str, context: list[ContextItem], instructions: str = "",
                items: list[prompts.EvidenceItem] | None = None) -> tuple[str, list[int], int, str | None]:
    """Refusal rules, the echo guard, and the citation whitelist and cap.
    Returns (answer, citations, removed, refusal reason)."""
    guard = run.cfg.citations
    step = run.trace.add(TraceStep(kind="guard"))
    refusal = _nothing_to_answer(step, draft, context)
    if refusal is not None:
        return draft, [], 0, refusal
    best = max(c.score for c in context)
    if best < guard.refusal_threshold:
        step.intervene(Intervention.REFUSED_BELOW_THRESHOLD, f"refused: best relevance {best:.3f} below "
                                                             f"refusal_threshold {guard.refusal_threshold}")
        return draft, [], 0, "below threshold"
    if run.cfg.echo.enabled:
        echo = check_echo(draft, instructions, [f"{e.title} {e.text}" for e in items or []], run.question, run.cfg.echo)
        step.detail["echo"] = echo.as_detail()
        if echo.flagged:
            step.intervene(Intervention.ECHO, "not an answer (echo): " + "; ".join(echo.reasons))
            return draft, [], 0, "echo"
    kept: list[int] = []
    removed = 0

    def keep(match: re.Match[str]) -> str:
        """One citation mark with the numbers the whitelist and the cap keep: as written when it keeps them all,
        else rewritten with the kept ones (``[1, 9]`` → ``[1]``), or removed when it keeps none."""
        nonlocal removed
        numbers = cited_numbers(match.group(0))
        valid = []
        for n in numbers:
            if 1 <= n <= len(context) and (n in kept or len(kept) < guard.max_citations):
                if n not in kept:
                    kept.append(n)
                valid.append(n)
            else:
                removed += 1
        if len(valid) == len(numbers):
            return match.group(0)
        return f"[{', '.join(map(str, valid))}]" if valid else ""

    answer = CITATION_MARK.sub(keep, draft)
    answer = re.sub(r"\s{2,}", " ", answer).strip()
    if removed:
        step.intervene(Intervention.CITATIONS_REMOVED, f"removed {removed} citation(s) outside the context or "
                                                       f"past max_citations={guard.max_citations}")
    if not kept:
        if guard.require_citation:
            step.intervene(Intervention.REFUSED_UNCITED, "refused: no valid citation to the context remains")
            return answer, [], removed, "uncited"
        step.intervene(Intervention.KEPT_UNCITED, "kept uncited: no valid citation remains "
                                                  "(citations.require_citation=false)")
    step.detail["citations"] = kept
    return answer, kept, removed, None


def plain_draft(run: RunContext, draft: str, context: list[ContextItem],
                closed_book: bool = False) -> tuple[str, list[int], int, str | None]:
    """The plain reader's draft taken as it is (``generation.reader=plain``): refused only when there is no context
    to read or the model itself says INSUFFICIENT; no citation, threshold, echo or judge rule. The closed-book
    reader's (``closed_book``) had no context to read: only the model's own INSUFFICIENT refuses it.
    Returns (answer, citations, removed, refusal reason) as :func:`guard_draft` does."""
    who = "closed-book reader" if closed_book else "plain reader"
    step = run.trace.add(TraceStep(kind="guard", codes=[Intervention.PLAIN_READER],
                                   interventions=[f"{who}: no guard but the model's own refusal"]))
    refusal = _nothing_to_answer(step, draft, context, need_context=not closed_book)
    return (draft, [], 0, refusal) if refusal is not None else (" ".join(draft.split()), [], 0, None)


def _nothing_to_answer(step: TraceStep, draft: str, context: list[ContextItem], need_context: bool = True) -> str | None:
    """The refusals every answer path makes (``empty context``, unless ``need_context`` is false; the model's
    ``insufficient``), recorded on the guard ``step``; None when there is a context and the draft is not
    INSUFFICIENT."""
    if need_context and not context:
        step.intervene(Intervention.REFUSED_EMPTY_CONTEXT, "refused: the final context is empty")
        return "empty context"
    if prompts.says_insufficient(draft):
        step.intervene(Intervention.REFUSED_INSUFFICIENT, "refused: the generator reported insufficient evidence")
        return "insufficient"
    return None


def model_refused(run: RunContext, refusal: str) -> bool:
    """Whether a refusal is the model's own: its answer's INSUFFICIENT, or an empty context because its
    controller chose ``insufficient`` in a valid decision (not the deterministic fallback's). Every other
    refusal — a guard, the judge, CRAG, a policy rejection, the fallback — is the pipeline's."""
    return refusal == "insufficient" or (refusal == "empty context" and run.state.model_insufficient)


def judge_answer(run: RunContext, answer: str, items: list[prompts.EvidenceItem]) -> str | None:
    """The LLM judge's refusal reason (``"judge"``) when it finds ``answer`` unsupported, else None."""
    evidence = items if run.cfg.judge.mode == "with_evidence" else None
    fallback = JudgeVerdict(verdict="supported", score=0.5, reason="fallback: invalid judge output")
    response, call = run.ask("judge", run.question, answer, evidence, fallback=fallback)
    verdict = response.parsed.verdict  # type: ignore[union-attr]
    step = run.trace.add(TraceStep(kind="judge", llm=call, decision=response.parsed.model_dump(),  # type: ignore[union-attr]
                                   tokens=response.usage.total_tokens, detail={"mode": run.cfg.judge.mode}))
    if verdict == "unsupported":
        step.intervene(Intervention.JUDGE_REFUSED, f"refused: the {run.cfg.judge.mode} judge found the answer unsupported")
        return "judge"
    return None
