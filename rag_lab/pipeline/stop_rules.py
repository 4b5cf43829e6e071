"""The stop table: every way the controller loop ends is one row of :data:`STOP_RULES`, which the loop asks in
order (docs/design.md §2, "Stop rules are a table"). A row names its phase, the stop reason it records, the
intervention code and text it leaves on the trace, the policy section it reads and what it needs from the
question's state. A new stop is one row (and its policy): the loop, the trace and the enumerations are not
edited for it, since a row brings its own reason and code to :data:`~rag_lab.pipeline.trace.STOP_REASONS` and
:data:`~rag_lab.pipeline.interventions.INTERVENTION_CODES`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from rag_lab.errors import ConfigError
from rag_lab.pipeline.config import POLICIES, PipelineConfig
from rag_lab.pipeline.interventions import INTERVENTION_CODES, Intervention
from rag_lab.pipeline.state import QuestionState
from rag_lab.pipeline.trace import STOP_REASONS, StopReason, TraceStep
from rag_lab.registry import Registry

#: When the loop asks a row: ``decision`` — after each controller decision, before any retrieval (a request for
#: another round that a row stops is a policy rejection); ``round`` — after each round the controller asked for.
Phase = Literal["decision", "round"]


class StopCheck:
    """What a row is asked about: the config, the question's state, the controller's decision and its refined
    queries, the effective round cap, and the step an intervention goes on (the controller's step in the
    ``decision`` phase, the round's retrieve step in the ``round`` phase)."""

    def __init__(self, cfg: PipelineConfig, state: QuestionState, decision: Any, cap: int, step: TraceStep,
                 usable: Callable[[], bool]) -> None:
        self.cfg, self.state, self.decision, self.cap, self.step = cfg, state, decision, cap, step
        self.queries = [q.strip() for q in decision.queries if q.strip()]
        self._usable = usable

    @property
    def asks_round(self) -> bool:
        """Whether the decision asks for another retrieval round."""
        return self.decision.action == "retrieve_again"

    @cached_property
    def usable(self) -> bool:
        """Whether any gathered chunk clears the refusal threshold (measured once, when a row first asks)."""
        return self._usable()


def _never(policy: Any, check: StopCheck) -> bool:
    return False


@dataclass(frozen=True)
class StopRule:
    """One row of the stop table. ``fires(policy, check)`` decides (``policy``: the config section named by
    ``policy``, else None); when it fires the loop records ``code`` with the text ``says(policy, check)`` on
    ``check.step``, runs ``then`` (what the row writes to the question's state), and ends with ``reason``,
    refusing when ``refuse(policy, check)``. ``empty_fallback``: with nothing ever found, the loop first runs the
    one-shot retrieval with the question (reason ``fallback``)."""

    phase: Phase
    reason: str
    fires: Callable[[Any, StopCheck], bool]
    policy: str | None = None
    code: str | None = None
    says: Callable[[Any, StopCheck], str] | None = None
    refuse: Callable[[Any, StopCheck], bool] = _never
    then: Callable[[StopCheck], None] | None = None
    empty_fallback: bool = False

    def __post_init__(self) -> None:
        if (self.code is None) != (self.says is None):
            raise ConfigError(f"stop rule {self.reason!r}: an intervention needs both its code and its text")


class StopRules(Registry[StopRule]):
    """The stop table: a registry whose rows bring their stop reason and intervention code to the trace's
    registries (and take them away again when removed, if no other row uses them)."""

    def add(self, name: str, item: StopRule, *, before: str | None = None) -> StopRule:
        if item.policy is not None:
            POLICIES.check(item.policy)
        super().add(name, item, before=before)
        if item.reason not in STOP_REASONS:
            STOP_REASONS.add(item.reason, item.reason)
        if item.code is not None and item.code not in INTERVENTION_CODES:
            INTERVENTION_CODES.add(item.code, item.code)
        return item

    def remove(self, name: str) -> StopRule:
        rule = super().remove(name)
        if rule.reason not in {r.value for r in StopReason} and all(r.reason != rule.reason for r in self.values()):
            STOP_REASONS.remove(rule.reason)
        if (rule.code is not None and rule.code not in {c.value for c in Intervention}
                and all(r.code != rule.code for r in self.values())):
            INTERVENTION_CODES.remove(rule.code)
        return rule

    def of_phase(self, phase: Phase) -> list[StopRule]:
        """The rows the loop asks in ``phase``, in order."""
        return [rule for rule in self.values() if rule.phase == phase]


def _answers(check: StopCheck) -> bool:
    return check.decision.action in ("answer", "rerank")


#: The loop's stops, in the order it asks them.
STOP_RULES = StopRules("stop rule")
STOP_RULES.add("insufficient", StopRule(
    "decision", StopReason.INSUFFICIENT, lambda _, c: c.decision.action == "insufficient",
    refuse=lambda _, c: True))
STOP_RULES.add("no_evidence", StopRule(
    "decision", StopReason.POLICY_REJECTED, lambda _, c: _answers(c) and not c.usable, policy="citations",
    code=Intervention.REJECTED_NO_EVIDENCE,
    says=lambda _, c: f"policy rejection: {c.decision.action} with no usable evidence",
    refuse=lambda _, c: not c.state.seen))
STOP_RULES.add("answered", StopRule(
    "decision", StopReason.ANSWERED, lambda _, c: _answers(c) and c.usable,
    then=lambda c: setattr(c.state, "rerank_requested", c.decision.action == "rerank")))
STOP_RULES.add("round_cap", StopRule(
    "decision", StopReason.CAP_REACHED, lambda _, c: c.asks_round and c.state.rounds_used >= c.cap,
    policy="round_cap", code=Intervention.REJECTED_CAP,
    says=lambda _, c: f"policy rejection: retrieval round {c.state.rounds_used + 1} requested past the cap of {c.cap}",
    empty_fallback=True))
STOP_RULES.add("token_budget", StopRule(
    "decision", StopReason.BUDGET_TOKENS,
    lambda b, c: c.asks_round and b.max_tokens is not None and c.state.tokens_used >= b.max_tokens,
    policy="budget", code=Intervention.REJECTED_TOKENS,
    says=lambda b, c: f"policy rejection: token budget {b.max_tokens} exhausted ({c.state.tokens_used} used)"))
STOP_RULES.add("time_budget", StopRule(
    "decision", StopReason.BUDGET_TIME,
    lambda b, c: c.asks_round and b.max_time_ms is not None and c.state.time_ms >= b.max_time_ms,
    policy="budget", code=Intervention.REJECTED_TIME,
    says=lambda b, c: f"policy rejection: time budget {b.max_time_ms} ms exhausted ({c.state.time_ms:.0f} ms used)"))
STOP_RULES.add("zero_yield", StopRule(
    "round", StopReason.EMPTY_ROUND,
    lambda z, c: z.enabled and c.step.round_yield == 0 and c.state.chunks_seen > 0,
    policy="zero_yield", code=Intervention.ZERO_YIELD_STOP,
    says=lambda _, c: "zero-yield stop: the round brought no new chunk"))
