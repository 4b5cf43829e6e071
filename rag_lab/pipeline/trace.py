"""What happened to one question, step by step: the trace a user reads to diagnose spinning,
drift, premature stops or a lost bridge entity. Serializable to JSON."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, model_validator

from rag_lab.errors import ConfigError
from rag_lab.llm.types import CallRecord, LLMResponse, Message
from rag_lab.pipeline.interventions import Intervention, InterventionCode, intervention_code
from rag_lab.registry import Registry


class StopReason(StrEnum):
    """Why the retrieval loop ended (docs/design.md, "Stop reasons"). A cap being reached is not evidence of sufficiency.
    The loop's stops are rows of :data:`~rag_lab.pipeline.stop_rules.STOP_RULES`; a rule registered later brings
    its own reason to :data:`STOP_REASONS`, and this enumeration is not edited for it.

    * ``answered`` — the controller chose answer/rerank with usable evidence, or a SIMPLE route's
      one-shot retrieval went straight to generation;
    * ``cap_reached`` — the controller asked for a round past the cap: the request is a policy
      rejection (recorded as an intervention) and the answer is made from what was gathered;
    * ``budget_time`` / ``budget_tokens`` — a search-budget dimension was exhausted;
    * ``empty_round`` — the zero-yield stop fired;
    * ``insufficient`` — the controller said so, or the guard or judge refused the draft;
    * ``policy_rejected`` — the controller chose answer/rerank although no gathered chunk clears the
      refusal threshold;
    * ``fallback`` — nothing was found in any round up to the cap: one-shot retrieval with the question."""

    ANSWERED = "answered"
    CAP_REACHED = "cap_reached"
    BUDGET_TIME = "budget_time"
    BUDGET_TOKENS = "budget_tokens"
    EMPTY_ROUND = "empty_round"
    INSUFFICIENT = "insufficient"
    POLICY_REJECTED = "policy_rejected"
    FALLBACK = "fallback"


#: Every reason a trace may record: :class:`StopReason`'s (each mapped to its member), then the reasons of stop rules
#: registered later (each a plain string).
STOP_REASONS: Registry[str] = Registry("stop reason")
for _reason in StopReason:
    STOP_REASONS.add(_reason.value, _reason)

#: The type of a recorded stop reason (a ``str``; JSON and equality are the value's).
StopReasonName = Annotated[str, AfterValidator(lambda reason: STOP_REASONS[reason])]


StepKind = Literal[
    "route", "expand", "retrieve", "controller", "finalize", "grade", "generate", "judge", "guard", "fallback"
]


class LLMCall(CallRecord):
    """One LLM call as the trace keeps it: the :class:`~rag_lab.llm.types.CallRecord` with the prompt
    sent (``messages``) and the raw output before validation (``raw_output``)."""

    messages: list[dict[str, str]]
    raw_output: str

    @classmethod
    def of(cls, response: LLMResponse, messages: Iterable[Message]) -> LLMCall:
        """The trace's record of ``response`` to ``messages``."""
        return cls.from_response(response, messages=[m.model_dump() for m in messages],  # type: ignore[return-value]
                                 raw_output=response.text)


class TraceStep(BaseModel):
    kind: StepKind
    round: int = 0
    queries: list[str] = Field(default_factory=list)
    retrieved: list[str] = Field(default_factory=list, description="chunk ids, in rank order")
    new: list[str] = Field(default_factory=list, description="retrieved chunk ids not seen before")
    round_yield: int | None = None
    llm: LLMCall | None = None
    decision: dict[str, Any] | None = None
    interventions: list[str] = Field(default_factory=list, description="policy interventions, in plain words")
    codes: list[InterventionCode] = Field(default_factory=list,
                                      description="the code of each intervention, in the same order (match these, "
                                                  "not the words)")
    detail: dict[str, Any] = Field(default_factory=dict)
    tokens: int = 0
    latency_s: float = 0.0

    @model_validator(mode="after")
    def _one_code_per_intervention(self) -> TraceStep:
        if self.codes and len(self.codes) != len(self.interventions):
            raise ConfigError(f"a {self.kind} step has {len(self.interventions)} interventions but "
                             f"{len(self.codes)} codes: record each with TraceStep.intervene(code, text)")
        return self

    def intervene(self, code: str, text: str) -> None:
        """Record one intervention: its code (an :class:`Intervention`, or a registered stop rule's) and its
        plain-words text."""
        self.codes.append(intervention_code(code))
        self.interventions.append(text)

    def has(self, code: str) -> bool:
        """Whether this step recorded an intervention with ``code``. A trace stored before interventions
        carried codes (texts, no codes) cannot answer, and says so instead of answering False."""
        if self.interventions and not self.codes:
            raise ConfigError(f"this {self.kind} step was recorded before interventions carried codes "
                             f"({self.interventions[0]!r}): re-run the sweep to match on codes")
        return intervention_code(code) in self.codes

    @property
    def knobs(self) -> list[str]:
        """Every behaviour knob that fired on this step's LLM call."""
        return self.llm.fired if self.llm is not None else []


class Trace(BaseModel):
    qid: str
    question: str
    route: str = ""
    steps: list[TraceStep] = Field(default_factory=list)
    stop_reason: StopReasonName | None = None
    rounds_used: int = 0

    def add(self, step: TraceStep) -> TraceStep:
        self.steps.append(step)
        return step

    @property
    def interventions(self) -> list[str]:
        return [i for s in self.steps for i in s.interventions]

    @property
    def codes(self) -> list[str]:
        """Every intervention's code, in step order."""
        return [c for s in self.steps for c in s.codes]

    def has(self, code: str, kind: StepKind | None = None) -> bool:
        """Whether any step (of ``kind``, when given) recorded an intervention with ``code``."""
        return any(s.has(code) for s in self.steps if kind is None or s.kind == kind)

    def intervention_texts(self, code: str) -> list[str]:
        """The plain-words text of every intervention recorded with ``code``, in step order."""
        return [text for s in self.steps if s.has(code) for c, text in zip(s.codes, s.interventions, strict=True)
                if c == code]

    def llm_calls(self) -> list[LLMCall]:
        return [s.llm for s in self.steps if s.llm is not None]

    def yields(self) -> list[int]:
        """New unique chunks per retrieval round, in order."""
        return [s.round_yield for s in self.steps if s.kind == "retrieve" and s.round_yield is not None]


KNOB_RATE_COLUMNS = ("role", "knob", "calls", "opportunities", "fired", "configured", "observed", "per_call")


def knob_rates(traces: Iterable[Trace]) -> list[dict[str, Any]]:
    """Observed against configured rate of every simulator knob, per role, over ``traces``: one row per (role, knob)
    with ``calls`` (LLM calls of that role), ``opportunities`` (calls where the knob applied and was drawn), ``fired``,
    ``configured`` (the rate it was drawn at), ``observed`` (fired / opportunities: should match ``configured`` up to
    sampling noise) and ``per_call`` (fired / calls: the rate the pipeline actually met)."""
    calls: dict[str, int] = {}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for trace in traces:
        for call in trace.llm_calls():
            calls[call.role] = calls.get(call.role, 0) + 1
            for k in call.knobs:
                row = rows.setdefault((call.role, k["knob"]), {"role": call.role, "knob": k["knob"],
                                                               "opportunities": 0, "fired": 0, "configured": k["rate"]})
                row["opportunities"] += 1
                row["fired"] += int(bool(k["fired"]))
    out = []
    for (role, _), row in sorted(rows.items()):
        row["calls"] = calls[role]
        row["observed"] = row["fired"] / row["opportunities"]
        row["per_call"] = row["fired"] / row["calls"]
        out.append({c: row[c] for c in KNOB_RATE_COLUMNS})
    return out


def controller_decisions(traces: Iterable[Trace]) -> list[dict[str, Any]]:
    """What the controller chose over ``traces``: one row per (round, action) with the number of ``decisions`` and how
    many of them were the deterministic ``fallback`` for an invalid output. ``round`` is the rounds run when it was
    asked (1 after the first retrieval)."""
    rows: dict[tuple[int, str], dict[str, Any]] = {}
    for trace in traces:
        for step in trace.steps:
            if step.kind == "controller" and step.decision is not None:
                row = rows.setdefault((step.round, step.decision["action"]),
                                      {"round": step.round, "action": step.decision["action"], "decisions": 0,
                                       "fallback": 0})
                row["decisions"] += 1
                row["fallback"] += int(step.has(Intervention.INVALID_FALLBACK))
    return [rows[k] for k in sorted(rows)]
