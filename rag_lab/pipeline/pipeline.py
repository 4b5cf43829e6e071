"""The bounded pipeline for one question (docs/design.md §1): route → expand query → retrieve round 1 →
controller loop → finalize → generate → guard. The LLM proposes; code disposes, and records every decision in
the :class:`~rag_lab.pipeline.trace.Trace`. This module runs the question loop; the steps after it are
:func:`~rag_lab.pipeline.final_context.final_context` and :func:`~rag_lab.pipeline.answer.generate_and_guard`."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, NoReturn

import numpy as np

from rag_lab.index import reciprocal_rank_fusion
from rag_lab.llm import prompts
from rag_lab.llm.base import LLMBackend
from rag_lab.llm.ledger import Ledger, PriceTable
from rag_lab.llm.schemas import ControllerDecision, HydePassages, Rewrites, RouteDecision
from rag_lab.pipeline.answer import Result, generate_and_guard
from rag_lab.pipeline.config import PipelineConfig
from rag_lab.pipeline.final_context import final_context
from rag_lab.pipeline.interventions import Intervention
from rag_lab.pipeline.resources import CorpusResources
from rag_lab.pipeline.run_context import RunContext
from rag_lab.pipeline.stop_rules import STOP_RULES, Phase, StopCheck
from rag_lab.pipeline.trace import StopReason, Trace, TraceStep
from rag_lab.pipeline.truncation import by_relevance
from rag_lab.records import Question


class Pipeline:
    """A configured pipeline over shared corpus resources and one LLM backend.

    ``config`` is never mutated; :meth:`with_params` returns a pipeline on a changed copy. ``prices``: what a
    call costs (:class:`~rag_lab.llm.ledger.PriceTable`; default: an illustrative small-model rate)."""

    def __init__(self, config: PipelineConfig, resources: CorpusResources, backend: LLMBackend,
                 prices: PriceTable | None = None) -> None:
        self.config = config
        self.resources = resources
        self.backend = backend
        self.prices = prices

    def with_params(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> Pipeline:
        """A pipeline on ``config.with_params(values, **kwargs)``, over the same resources, backend and prices."""
        return Pipeline(self.config.with_params(values, **kwargs), self.resources, self.backend, self.prices)

    def run(self, question: Question | str, qid: str | None = None) -> tuple[Result, Trace]:
        """Run the full pipeline for one question. The result's LLM cost fields are read from the trace, the one
        record of each call."""
        text = question.text if isinstance(question, Question) else question
        qid = qid or (question.qid if isinstance(question, Question) else "q")
        result, trace = _OneQuestion(self.config, self.resources, self.backend, qid, text).execute()
        ledger = Ledger.of(trace.llm_calls(), self.prices)
        by_role = ledger.by_role()
        result = result.model_copy(update={
            "llm_cost": ledger.incurred(), "llm_spent": ledger.spent(),
            "llm_calls_by_role": {role: cost.incurred.calls for role, cost in by_role.items()},
            "llm_spent_by_role": {role: cost.spent.calls for role, cost in by_role.items()}})
        return result, trace


class _Stop(Exception):
    """Leaves the controller loop with a stop reason."""

    def __init__(self, reason: str, refuse: bool = False) -> None:
        self.reason = reason
        self.refuse = refuse


class _OneQuestion(RunContext):
    """One question's run: route, expand, retrieve and the controller loop, then the final context and
    the answer (:mod:`.final_context`, :mod:`.answer`)."""

    # --- the run -----------------------------------------------------------------------------

    def execute(self) -> tuple[Result, Trace]:
        if self.cfg.generation.reader == "closed_book":
            return self._closed_book()
        self._route()
        queries, hyde_passages = self._expand()
        try:
            self._retrieve(1, queries, hyde_passages)
            if self.state.route == "SIMPLE":
                raise _Stop(StopReason.ANSWERED)
            self._controller_loop()
        except _Stop as stop:
            reason, refuse = stop.reason, stop.refuse
        self.trace.stop_reason = reason
        self.trace.rounds_used = self.state.rounds_used
        context, grade = final_context(self, refuse)
        return generate_and_guard(self, context, grade, reason), self.trace

    def _closed_book(self) -> tuple[Result, Trace]:
        """No route, no retrieval: the closed-book reader answers the question alone (``generation.reader``)."""
        self.state.route = self.trace.route = "NONE"
        self.trace.add(TraceStep(kind="route", decision={"route": "NONE"}, codes=[Intervention.CLOSED_BOOK],
                                 interventions=["closed book: no retrieval, the question alone"]))
        self.trace.stop_reason = StopReason.ANSWERED
        return generate_and_guard(self, [], "disabled", StopReason.ANSWERED), self.trace

    def _route(self) -> None:
        router = self.cfg.router
        if not router.enabled:
            self.state.route = "COMPLEX"
            self.trace.add(TraceStep(kind="route", decision={"route": "COMPLEX"}, codes=[Intervention.ROUTER_DISABLED],
                                     interventions=["router disabled: every question enters the loop"]))
        else:
            fallback = RouteDecision(route="COMPLEX", reason="fallback: invalid router output")
            response, call = self.ask("route", self.question, fallback=fallback)
            route = response.parsed.route  # type: ignore[union-attr]
            step = self.trace.add(TraceStep(kind="route", llm=call, decision={"route": route},
                                            tokens=response.usage.total_tokens))
            if route == "SIMPLE" and router.comparison_upgrade and router.has_comparison_wording(self.question):
                route = "COMPLEX"
                step.intervene(Intervention.COMPARISON_UPGRADE, "comparison wording: route upgraded SIMPLE → COMPLEX")
            step.decision = {"route": route}
            self.state.route = route
        self.trace.route = self.state.route

    def _expand(self) -> tuple[list[str], list[str] | None]:
        """Round-1 queries, and the HyDE passages when HyDE is on (retrieval then uses the mean
        embedding of the passages, and of the question with ``include_query``)."""
        if self.cfg.rewrite.enabled:
            n = self.cfg.rewrite.n_rewrites
            response, call = self.ask("rewrite", self.question, n, fallback=Rewrites(queries=[self.question]))
            rewrites = [q for q in response.parsed.queries if q != self.question][:n]  # type: ignore[union-attr]
            queries = [self.question, *rewrites]
            self.trace.add(TraceStep(kind="expand", llm=call, queries=queries, tokens=response.usage.total_tokens,
                                     detail={"method": "rewrite"}))
            return queries, None
        if self.cfg.hyde.enabled:
            n = self.cfg.hyde.n_docs
            response, call = self.ask("hyde", self.question, n, fallback=HydePassages(passages=[self.question]),
                                      max_tokens=200 * n)
            passages = response.parsed.passages[:n]  # type: ignore[union-attr]
            self.trace.add(TraceStep(kind="expand", llm=call, queries=passages, tokens=response.usage.total_tokens,
                                     detail={"method": "hyde", "include_query": self.cfg.hyde.include_query}))
            return [self.question], passages
        return [self.question], None

    def _search(self, queries: list[str], hyde_passages: list[str] | None) -> list[str]:
        kind, k = self.cfg.retrieval.retriever, self.cfg.retrieval.top_k
        self.state.retrieval_calls += len(queries)
        if hyde_passages is not None:
            texts = [*hyde_passages, self.question] if self.cfg.hyde.include_query else hyde_passages
            return [c for c, _ in self.res.search_vector(kind, self._mean_vector(texts), " ".join(texts), k)]
        rankings = [[c for c, _ in self.res.search(kind, q, k)] for q in queries]
        if len(rankings) == 1:
            return rankings[0]
        return [c for c, _ in reciprocal_rank_fusion(rankings, k=self.cfg.rewrite.k_rrf)][:k]

    def _mean_vector(self, texts: list[str]) -> np.ndarray:
        """The normalised mean of the texts' embeddings (HyDE)."""
        self.state.embedding_calls += 1
        mean = self.res.embed(texts).mean(axis=0)
        return mean / (np.linalg.norm(mean) or 1.0)

    def _retrieve(self, round_no: int, queries: list[str], hyde_passages: list[str] | None = None) -> None:
        start = time.perf_counter()
        hits = self._search(queries, hyde_passages)
        step = TraceStep(kind="retrieve", round=round_no, queries=queries)
        hits = self._apply_source_contract(hits, step)
        new = self.state.add_round(round_no, queries, hits)
        self.state.time_ms += 1000.0 * (time.perf_counter() - start)
        step.retrieved, step.new, step.round_yield = hits, new, len(new)
        step.latency_s = time.perf_counter() - start
        self.trace.add(step)

    def _apply_source_contract(self, hits: list[str], step: TraceStep) -> list[str]:
        """The hits the route's allowed source types keep. Fail-open with nothing allowed left returns the
        unfiltered hits and lists them in ``detail["off_contract"]`` (every one is outside the contract)."""
        allowed = self.cfg.sources.allowed(self.state.route)  # type: ignore[arg-type]
        if not allowed:
            return hits
        kept = [c for c in hits if self.res.source_of(c) in allowed]
        if len(kept) < len(hits):
            step.intervene(Intervention.SOURCE_REMOVED,
                           f"source contract removed {len(hits) - len(kept)} chunk(s) outside {list(allowed)}")
        if not kept and hits and self.cfg.sources.mode == "fail_open":
            step.intervene(Intervention.SOURCE_FAIL_OPEN, "source contract fail_open: nothing allowed was left, so "
                           "the unfiltered results were used (the fail-open bug)")
            step.detail["off_contract"] = list(hits)
            return hits
        return kept

    # --- the controller loop -----------------------------------------------------------------

    def _usable(self) -> bool:
        """Whether any gathered chunk clears the refusal threshold."""
        if not self.state.seen:
            return False
        scores = self.res.chunk_relevance(self.relevance_queries(), list(self.state.seen))
        return max(scores) >= self.cfg.citations.refusal_threshold

    def _fallback_decision(self, reason: str) -> ControllerDecision:
        action = "answer" if self._usable() else "insufficient"
        return ControllerDecision(action=action, reason=f"deterministic fallback ({reason})")

    def _controller_loop(self) -> NoReturn:
        """Ask the controller and act on its decision until a policy or the decision stops the loop."""
        cap = self.cfg.max_rounds
        while True:
            shown = self._controller_evidence()
            on_invalid = self.cfg.validation.on_invalid
            fallback = (self._fallback_decision if on_invalid == "fallback" else
                        ControllerDecision(action="insufficient", reason="invalid output refused (no fallback)"))
            response, call = self.ask("controller", self.question, shown, self.state.searches, cap,
                                      self.cfg.disclosure.disclosed, rounds_run=self.state.rounds_used,
                                      fallback=fallback)
            decision: ControllerDecision = response.parsed  # type: ignore[assignment]
            step = self.trace.add(TraceStep(kind="controller", round=self.state.rounds_used, llm=call,
                                            decision=decision.model_dump(), tokens=response.usage.total_tokens,
                                            detail={"evidence_shown": [e.n for e in shown]}))
            if response.outcome == "fallback":
                if on_invalid == "fallback":
                    step.intervene(Intervention.INVALID_FALLBACK,
                                   f"invalid controller output replaced by fallback: {response.reason}")
                else:
                    step.intervene(Intervention.INVALID_REFUSED,
                                   f"invalid controller output refused (validation.on_invalid=refuse): {response.reason}")
            self.state.model_insufficient = decision.action == "insufficient" and response.outcome != "fallback"
            self._act(decision, step, cap)

    def _act(self, decision: ControllerDecision, step: TraceStep, cap: int) -> None:
        """Ask the stop table (:data:`~rag_lab.pipeline.stop_rules.STOP_RULES`) about the decision; unless a row
        stops the loop, run the round it asks for, then ask the table about the round."""
        check = StopCheck(self.cfg, self.state, decision, cap, step, self._usable)
        self._ask_stop_rules("decision", check)
        if not check.asks_round:
            raise RuntimeError(f"no stop rule ended a {decision.action!r} decision: STOP_RULES lacks its row")
        self._retrieve(self.state.rounds_used + 1, check.queries)
        check.step = self.trace.steps[-1]
        self._ask_stop_rules("round", check)

    def _ask_stop_rules(self, phase: Phase, check: StopCheck) -> None:
        """The first row of ``phase`` that fires ends the loop, after recording its intervention and its effects."""
        for rule in STOP_RULES.of_phase(phase):
            policy = getattr(self.cfg, rule.policy) if rule.policy is not None else None
            if not rule.fires(policy, check):
                continue
            if rule.code is not None and rule.says is not None:
                check.step.intervene(rule.code, rule.says(policy, check))
            if rule.then is not None:
                rule.then(check)
            if rule.empty_fallback:
                self._cap_or_empty_fallback()
            raise _Stop(rule.reason, refuse=rule.refuse(policy, check))

    def _cap_or_empty_fallback(self) -> None:
        """At the cap with nothing ever found: one-shot retrieval with the original question."""
        if self.state.chunks_seen:
            return
        self.state.fallback_used = True
        self.trace.add(TraceStep(kind="fallback", codes=[Intervention.EMPTY_FALLBACK], interventions=[
            "nothing was found in any round: one-shot retrieval with the original question"]))
        self._retrieve(self.state.rounds_used + 1, [self.question])
        raise _Stop(StopReason.FALLBACK)

    def _controller_evidence(self) -> list[prompts.EvidenceItem]:
        """The ``retrieval.controller_evidence`` most relevant chunks gathered so far. Deliberately
        independent of the truncation policy, which only assembles the generation context: the
        controller may see evidence that ``append_then_truncate`` later drops (the classic bug)."""
        ranked = sorted(self.candidates(list(self.state.seen)), key=by_relevance)
        shown = ranked[: self.cfg.retrieval.controller_evidence]
        return [prompts.EvidenceItem(i, c.title, c.text) for i, c in enumerate(shown, start=1)]
