"""Calibrate a simulator profile from the traces of a run made with a real model (:func:`calibrate`,
``rag-lab calibrate``). Every knob of :class:`~rag_lab.llm.sim.profile.SimulatorProfile` is a probability *per
opportunity*: calibration finds, in the real model's traces, the calls where the simulator would have drawn the
knob (its opportunities; the simulator's own reader, :class:`~rag_lab.llm.sim.ideal.IdealModel`, reads the very
prompt the real model saw) and counts those on which the real model did what the knob makes the simulator do,
with a Wilson 95% interval; budget anchoring, spinning and thrift are fitted jointly by maximum likelihood. A knob
with too few opportunities keeps the base profile's value and is listed as unidentified. Where each estimator
looks: docs/simulate-then-verify.md, "How calibrate counts each knob"."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rag_lab.errors import ConfigError
from rag_lab.experiments.calibration.fits import budget_knobs, fit_thrift, proportion_estimate, too_few, wilson_interval
from rag_lab.experiments.calibration.result import USES, Calibration, KnobCalibration, RateEstimate
from rag_lab.experiments.calibration.runs import CalibrationSource, read_run
from rag_lab.llm import prompts
from rag_lab.llm.base import Message
from rag_lab.llm.role_table import LLM_ROLES
from rag_lab.llm.sim.ideal import IdealModel as Reader
from rag_lab.llm.sim.knobs import settles
from rag_lab.llm.sim.profile import KNOBS, SimulatorProfile, get_profile
from rag_lab.llm.sim.prompt import Prompt, read_prompt, rounds_run, stated_budget
from rag_lab.llm.sim.text import normalise
from rag_lab.llm.structured import embedded_objects, validate_output
from rag_lab.pipeline.interventions import Intervention
from rag_lab.pipeline.trace import LLMCall, Trace

__all__ = ["Calibration", "CalibrationSource", "KnobCalibration", "RateEstimate", "calibrate", "format_failure",
           "read_run", "wilson_interval"]

FORMAT_KNOBS = ("invalid_json", "hallucinated_action", "wrong_types")
#: Behaviour reported beside the knobs because no knob stands for it (reported only).
UNMODELLED: dict[str, str] = {
    "settle (no budget)": "controller calls whose ideal single-part search the reader could settle without, no "
                          "budget stated: model stopped (the simulator's thrift needs a stated budget)",
    "echo": "answers the echo guard rejected as a copy of the prompt (the simulator never parrots)",
}
#: The four kinds of controller call the budget knobs are fitted from: the per-role row each one is
#: reported as, and what it counts.
BUDGET_CATEGORIES: dict[str, tuple[str, str]] = {
    "spinning": ("synonym_spinning", "sufficient evidence, no budget stated: re-searched (= s)"),
    "spinning_spent": ("re-search (budget spent)", "sufficient evidence, budget stated and spent: re-searched (= s)"),
    "anchoring_sufficient": ("re-search (budget left)", "sufficient evidence, budget stated, not spent: re-searched "
                                                        "(= s + (1-s)a)"),
    "budget_anchoring": ("re-search (insufficient)", "insufficient evidence, budget stated, not spent: "
                                                     "re-searched (= a)"),
}


# --- reading one call -------------------------------------------------------------------------------


def _format_roles() -> tuple[str, ...]:
    """The roles whose outputs the simulator breaks with the format knobs (the profile's format rates pool them)."""
    return tuple(name for name, row in LLM_ROLES.items() if row.breaks_format)


def _first_object(text: str) -> dict[str, Any] | None:
    """The JSON object the text is, or the first one embedded in it; None if there is none."""
    return next((obj for obj, _ in embedded_objects(text)), None)


def format_failure(role: str, raw: str) -> tuple[str | None, BaseModel | None]:
    """``(failure, parsed)``: which format failure the raw output of a structured role shows
    (``invalid_json``, ``hallucinated_action``, ``wrong_types``, or None) and the parsed object when
    there is none (see the module doc)."""
    row = LLM_ROLES[role]
    schema = row.schema()
    if schema is None:
        raise ConfigError(f"role {role!r} writes free text: it has no format to fail")
    checked = validate_output(raw, schema)
    if checked.outcome in ("valid", "repaired"):
        return None, checked.parsed
    obj = _first_object(raw)
    if obj is None:
        return "invalid_json", None
    key, allowed = row.label or (None, ())
    if key is not None and isinstance(obj.get(key), str) and obj[key] not in allowed:
        return "hallucinated_action", None
    return "wrong_types", None


def _read_prompt(messages: Sequence[Mapping[str, str]]) -> Prompt:
    """The prompt as the simulator reads it (:func:`rag_lab.llm.sim.prompt.read_prompt`), from a trace's messages."""
    return read_prompt("chat", [Message(role=m["role"], content=m["content"]) for m in messages
                                if m.get("role") in ("system", "user", "assistant")])


def _names_bridge(queries: Iterable[str], bridge: str) -> bool:
    key = normalise(bridge)
    return bool(key) and any(f" {key} " in f" {normalise(q)} " for q in queries)


# --- the estimation ---------------------------------------------------------------------------------


class _Tallies:
    """Counts of fired / opportunities by (knob, role), distinct calls only."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], list[int]] = {}

    def add(self, knob: str, role: str, fired: bool) -> None:
        tally = self.counts.setdefault((knob, role), [0, 0])
        tally[0] += int(fired)
        tally[1] += 1

    def get(self, knob: str, role: str) -> list[int]:
        return self.counts.get((knob, role), [0, 0])


def _distinct_calls(runs: Iterable[tuple[str, Trace]]) -> Iterable[tuple[str, Trace, LLMCall]]:
    """Each distinct (run key, role, prompt, output) once, with its trace."""
    seen: set[str] = set()
    for key, trace in runs:
        for call in trace.llm_calls():
            digest = hashlib.sha256(json.dumps([key, call.role, call.messages, call.raw_output],
                                               sort_keys=True).encode("utf-8")).hexdigest()
            if digest not in seen:
                seen.add(digest)
                yield key, trace, call


def _tally(source: CalibrationSource, reader: Reader) -> tuple[_Tallies, Counter, list[tuple[bool, bool, bool, bool]]]:
    tallies = _Tallies()
    repaired: Counter = Counter()
    thrift: list[tuple[bool, bool, bool, bool]] = []
    for _, trace, call in _distinct_calls(source.runs):
        role = call.role
        parsed: BaseModel | None = None
        row = LLM_ROLES.get(role)
        if row is not None and row.schema() is not None:
            failure, parsed = format_failure(role, call.raw_output)
            earlier = False
            for knob in FORMAT_KNOBS:
                if knob == "hallucinated_action" and row.label is None:
                    continue
                if earlier:
                    break
                tallies.add(knob, role, failure == knob)
                earlier = failure == knob
            if call.outcome == "repaired":
                repaired[role] += 1
        if role == "route" and parsed is not None:
            _route(tallies, reader, call, parsed, source.types.get(trace.qid))
        elif role == "controller" and parsed is not None:
            _controller(tallies, thrift, reader, call, parsed)
        elif role == "answer":
            _answer(tallies, reader, call)
            _echo(tallies, trace, call)
    return tallies, repaired, thrift


def _echo(tallies: _Tallies, trace: Trace, call: LLMCall) -> None:
    """Whether the guard's echo check (when it ran on this answer) found the draft a copy of its prompt."""
    steps = trace.steps
    at = next((i for i, st in enumerate(steps) if st.llm is call), None)
    guard = next((st for st in steps[at + 1:] if st.kind == "guard"), None) if at is not None else None
    if guard is not None and "echo" in guard.detail:
        tallies.add("echo", "answer", guard.has(Intervention.ECHO))


def _route(tallies: _Tallies, reader: Reader, call: LLMCall, parsed: Any, gold_type: str | None) -> None:
    question = _read_prompt(call.messages).question
    simple = parsed.route == "SIMPLE"
    complex_ = reader.route(question).get("route") == "COMPLEX"
    if reader.is_comparison(question) and complex_:
        tallies.add("comparison_underrate", "route", simple)
    elif complex_:
        tallies.add("route_underrate", "route", simple)
    if gold_type == "comparison":
        tallies.add("comparison_underrate", "route (gold type)", simple)


def _controller(tallies: _Tallies, thrift: list[tuple[bool, bool, bool, bool]], reader: Reader, call: LLMCall,
                parsed: Any) -> None:
    """Tally one controller call (see the module doc). ``thrift`` collects, per call where thrift applies,
    (stopped, partial, budget left, bridge) for :func:`~rag_lab.experiments.calibration.fits.fit_thrift`."""
    p = _read_prompt(call.messages)
    ideal = reader.decide(p.question, p.evidence, p.searches)
    budget = stated_budget(p.system)
    unspent = budget is not None and rounds_run(p.system, p.searches) < budget
    action = parsed.action
    if ideal.action in ("answer", "rerank"):
        again = action == "retrieve_again"
        category = "spinning" if budget is None else "anchoring_sufficient" if unspent else "spinning_spent"
        tallies.add(category, "controller", again)
        return
    settled = ideal.action == "retrieve_again" and settles(reader.evidence(p.question, p.evidence))
    stopped = action in ("answer", "rerank")
    if settled and budget is not None:
        thrift.append((stopped, ideal.partial, unspent, ideal.bridge is not None))
    elif settled and not ideal.partial:  # a partly covered question's stop would be a premature stop
        tallies.add("settle (no budget)", "controller", stopped)
    if ideal.partial and budget is None:
        tallies.add("premature_stop", "controller", stopped)
    if ideal.action == "insufficient" and unspent:
        tallies.add("budget_anchoring", "controller", action == "retrieve_again")
    if (ideal.action == "retrieve_again" and ideal.bridge and action == "retrieve_again"
            and not (settled and budget is not None)):
        tallies.add("bridge_drop", "controller", not _names_bridge(parsed.queries, ideal.bridge))


def _answer(tallies: _Tallies, reader: Reader, call: LLMCall) -> None:
    p = _read_prompt(call.messages)
    asked: list[bool] = []

    def partial() -> bool:
        asked.append(True)
        return False

    reader.answer(p.question, p.evidence, p.template, partial)
    if asked:
        refused = prompts.says_insufficient(call.raw_output)
        tallies.add("premature_stop", "answer", not refused)


def calibrate(
    source: CalibrationSource | Sequence[Trace],
    base: str | Path | SimulatorProfile = "typical",
    name: str = "calibrated",
    min_opportunities: int = 5,
    alpha: float = 0.05,
    similarity: Any = None,
) -> Calibration:
    """Estimate the simulator's knob rates from ``source``'s traces (see the module doc) and build the
    calibrated profile: estimated knobs take their estimate, the others the ``base`` profile's value.
    The simulator's one reader defines the opportunities; ``similarity`` may share a
    :class:`~rag_lab.llm.sim.similarity.Similarity` (its embedding LRU) with a simulator already running."""
    if isinstance(min_opportunities, bool) or not isinstance(min_opportunities, int) or min_opportunities < 1:
        raise ConfigError(f"min_opportunities must be a positive integer, got {min_opportunities!r}")
    if not isinstance(source, CalibrationSource):
        source = CalibrationSource([("traces", t) for t in source])
    if not source.runs:
        raise ConfigError(f"{source.description}: no traces to calibrate from")
    base_profile = get_profile(base)
    if similarity is None:
        from rag_lab.llm.sim.similarity import Similarity

        similarity = Similarity()
    tallies, repaired, thrift_calls = _tally(source, Reader(similarity))

    estimates: list[RateEstimate] = []
    for (knob, role), tally in sorted(tallies.counts.items()):
        if knob in FORMAT_KNOBS:
            estimates.append(proportion_estimate(knob, role, tally, USES[knob], in_profile=role in _format_roles(),
                                                 alpha=alpha))
        elif knob in BUDGET_CATEGORIES:
            label, uses = BUDGET_CATEGORIES[knob]
            estimates.append(proportion_estimate(label, role, tally, uses, in_profile=knob == "spinning", alpha=alpha))
        elif knob in UNMODELLED:
            estimates.append(proportion_estimate(knob, role, tally, UNMODELLED[knob], in_profile=False, alpha=alpha))
        else:
            gold = "gold" in role
            estimates.append(proportion_estimate(knob, role, tally, "gold question type comparison (cross-check)" if gold
                                       else USES[knob], in_profile=not gold, alpha=alpha))

    def pooled(knob: str, roles: Iterable[str], tally_key: str | None = None) -> RateEstimate:
        counts = [tallies.get(tally_key or knob, r) for r in roles]
        return proportion_estimate(knob, "+".join(roles), [sum(c[0] for c in counts), sum(c[1] for c in counts)], USES[knob],
                         alpha=alpha)

    def settle(knob: str, estimate: RateEstimate | None, reason: str = "") -> KnobCalibration:
        base_value = getattr(base_profile, knob)
        if estimate is None or estimate.opportunities < min_opportunities or math.isnan(estimate.rate):
            reason = reason or too_few(estimate.opportunities if estimate else 0, min_opportunities)
            return KnobCalibration(knob, base_value, "unidentified", base_value, estimate, reason)
        return KnobCalibration(knob, estimate.rate, "estimated", base_value, estimate)

    knobs: dict[str, KnobCalibration] = {}
    format_roles = _format_roles()
    for knob in FORMAT_KNOBS:
        knobs[knob] = settle(knob, pooled(knob, format_roles))
    knobs["premature_stop"] = settle("premature_stop", pooled("premature_stop", ["controller", "answer"]))
    knobs["bridge_drop"] = settle("bridge_drop", pooled("bridge_drop", ["controller"]))
    knobs["comparison_underrate"] = settle("comparison_underrate", pooled("comparison_underrate", ["route"]))
    knobs["route_underrate"] = settle("route_underrate", pooled("route_underrate", ["route"]))
    for knob, (estimate, why) in budget_knobs(tallies, min_opportunities, alpha).items():
        knobs[knob] = settle(knob, estimate, why)
        if estimate is not None and knob != "synonym_spinning":
            estimates.append(estimate)
    given = [knobs[k].estimate if knobs[k].status == "estimated" else None
             for k in ("premature_stop", "budget_anchoring", "bridge_drop")]
    thrift, why = fit_thrift(thrift_calls, given, min_n=min_opportunities, alpha=alpha)
    knobs["budget_thrift"] = settle("budget_thrift", thrift, why)
    if thrift is not None:
        estimates.append(thrift)
    knobs = {k: knobs[k] for k in KNOBS}

    profile = SimulatorProfile.model_validate({**base_profile.model_dump(), "name": name,
                                               **{k: round(c.value, 4) for k, c in knobs.items()}})
    notes = []
    if repaired:
        notes.append("outputs repaired from prose or a code fence (not a format failure; the simulator never "
                      "writes them): " + ", ".join(f"{r} {n}" for r, n in sorted(repaired.items())))
    broken_other = [e for e in estimates if e.knob in FORMAT_KNOBS and e.role not in format_roles and e.fired]
    if broken_other:
        notes.append("format failures on roles the simulator never breaks (not in the profile): "
                     + ", ".join(f"{e.role} {e.knob} {e.fired}/{e.opportunities}" for e in broken_other))
    unmodelled = [e for e in estimates if e.knob in UNMODELLED and e.fired]
    if unmodelled:
        notes.append("behaviour no knob of the simulator stands for (the calibrated simulator will not show it): "
                      + "; ".join(f"{UNMODELLED[e.knob]} {e.fired}/{e.opportunities}" for e in unmodelled))
    configured = source.sim_profile.knobs() if source.sim_profile is not None else None
    return Calibration(estimates, knobs, profile, base_profile.name, source.description, notes, configured)
