"""Every behaviour knob of the simulated LLM, drawn and applied here and nowhere else. :class:`CallRandom` is the only
source of randomness: common random numbers, a function of (seed, role, question, step index, knob) only, so the same
request always draws the same numbers and a change of evidence re-draws nothing; a knob fires iff its draw is below its
rate. Each role's knobs: :func:`route_knob`, :func:`controller_knobs`, :meth:`CallRandom.partial_answer` and
:func:`apply_format_failures`. Where each knob applies: docs/backends.md, "The simulator, part by part"."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rag_lab.llm.sim.controller_decision import SETTLE, Decision
from rag_lab.llm.sim.evidence import Evidence
from rag_lab.llm.sim.paraphrase import drop_bridge, paraphrase
from rag_lab.llm.sim.profile import SimulatorProfile

#: Action names a tool-calling model invents in place of the four it was given.
HALLUCINATED_ACTIONS = ("search_web", "lookup", "final_answer", "search", "finish", "ask_user", "browse", "retrieve")
#: Route labels outside SIMPLE / COMPLEX.
HALLUCINATED_ROUTES = ("MEDIUM", "MULTI_HOP", "HARD", "UNKNOWN", "COMPARISON")


class CallRandom:
    """The seeded randomness of one call, with a record of every knob it was asked about. Each knob's draw is
    SHA-256 of (seed, role, question, step, knob) — common random numbers (docs/backends.md) — where the
    controller's step is the retrieval rounds already run and every other role's 0; ``rng`` is keyed the same way.
    :meth:`fires` is called only where a knob applies and records each opportunity and firing in :attr:`record`
    (:func:`rag_lab.pipeline.trace.knob_rates`)."""

    def __init__(self, profile: SimulatorProfile, role: str, question: str, step: int = 0) -> None:
        self.key = f"{profile.seed}\x1f{role}\x1f{step}\x1f{' '.join(question.split())}"
        digest = hashlib.sha256(self.key.encode("utf-8")).digest()
        self.rng = random.Random(int.from_bytes(digest[:16], "big"))
        self.rates = profile.knobs()
        self.record: list[dict[str, Any]] = []

    def draw(self, knob: str) -> float:
        """The knob's uniform draw on this call (a pure function of the key and the knob)."""
        digest = hashlib.sha256(f"{self.key}\x1f{knob}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2.0**64

    def fires(self, knob: str) -> bool:
        """Whether ``knob`` fires on this call (its draw is below its rate); recorded as an opportunity."""
        draw = self.draw(knob)
        fired = draw < self.rates[knob]
        self.record.append({"knob": knob, "rate": self.rates[knob], "draw": round(draw, 6), "fired": fired})
        return fired

    @property
    def fired(self) -> list[str]:
        return [r["knob"] for r in self.record if r["fired"]]

    def partial_answer(self) -> bool:
        """``premature_stop`` on the answer role: asked only when the evidence covers part of the question."""
        return self.fires("premature_stop")


def route_knob(decision: dict[str, str], comparison: bool, draws: CallRandom) -> dict[str, str]:
    """``comparison_underrate``: a comparison question routed SIMPLE; ``route_underrate``: any other question
    the reader routes COMPLEX routed SIMPLE (each knob drawn only where it applies)."""
    if decision.get("route") != "COMPLEX":
        return decision
    if comparison and draws.fires("comparison_underrate"):
        return {"route": "SIMPLE", "reason": "one lookup per named thing"}
    if not comparison and draws.fires("route_underrate"):
        return {"route": "SIMPLE", "reason": "a single fact about one named thing"}
    return decision


def settles(ev: Evidence) -> bool:
    """Whether a lookup's evidence holds an answer the model would settle for once nothing is left to search: its best
    answer sentence (of the asked kind, when one is asked) reaches :data:`~rag_lab.llm.sim.controller_decision.SETTLE`
    support — the bar :func:`~rag_lab.llm.sim.controller_decision.ideal_decision` answers at when its searches are
    spent. A comparison never settles while a side is missing."""
    if ev.qa.comparison:
        return False
    found = ev.answers()
    return bool(found) and found[0].support >= SETTLE


def controller_knobs(ideal: Decision, question: str, searches: list[str], budget: int | None, run: int,
                     draws: CallRandom, settled: Callable[[], bool] = lambda: False) -> Decision:
    """The ideal controller decision with the behaviour knobs applied (see the module doc); ``budget``: the round
    budget the prompt states (None: none stated); ``run``: rounds run; ``settled``: whether the evidence already
    holds an answer the model would settle for (:func:`settles`, asked only where ``budget_thrift`` applies)."""
    d = ideal
    fired: list[str] = []
    if ideal.action in ("answer", "rerank") and draws.fires("synonym_spinning"):
        q = paraphrase(question, searches, start=draws.rng.randrange(2))
        d = Decision("retrieve_again", (q,), reason="searching again to confirm")
        fired.append("synonym_spinning")
    elif ideal.action in ("retrieve_again", "insufficient") and ideal.partial and draws.fires("premature_stop"):
        d = Decision("answer", reason="the evidence seems sufficient")
        fired.append("premature_stop")
    elif ideal.action == "retrieve_again" and ideal.bridge and draws.fires("bridge_drop"):
        q = drop_bridge(question, ideal.bridge, searches)
        d = replace(ideal, queries=(q,), bridge=None, reason="searching for the missing fact")
        fired.append("bridge_drop")
    if (d.action in ("answer", "rerank", "insufficient") and budget is not None and run < budget
            and draws.fires("budget_anchoring")):
        q = paraphrase(question, searches, start=draws.rng.randrange(3))
        d = Decision("retrieve_again", (q,), reason=f"{budget - run} rounds left; searching more")
        fired.append("budget_anchoring")
    elif (not fired and budget is not None and ideal.action == "retrieve_again" and settled()
          and draws.fires("budget_thrift")):
        d = Decision("answer", reason=f"the evidence will do; saving the budget ({max(0, budget - run)} of "
                                      f"{budget} rounds left)")
        fired.append("budget_thrift")
    return replace(d, knobs=tuple(fired))


def broken_json(obj: dict[str, Any], rng: random.Random) -> str:
    """``obj`` written as text that is not a JSON object: truncated, single-quoted, unquoted
    keys, or ``key: value`` prose without braces."""
    style = rng.randrange(4)
    if style == 0:
        text = json.dumps(obj)
        return text[: max(2, int(len(text) * (0.35 + 0.4 * rng.random())))]
    if style == 1:
        return repr(obj)
    if style == 2:
        inner = ", ".join(f"{k}: {v}" for k, v in obj.items())
        return "{" + inner + "}"
    lines = [f"{k}: {v}" for k, v in obj.items()]
    return "Sure! Here is my decision.\n" + "\n".join(lines)


def hallucinate(obj: dict[str, Any], rng: random.Random) -> str:
    """``obj`` with an invented action (controller) or route label (route), as valid JSON."""
    out = dict(obj)
    if "action" in out:
        out["action"] = rng.choice(HALLUCINATED_ACTIONS)
        if out["action"] in ("search_web", "lookup", "search", "browse", "retrieve") and not out.get("queries"):
            out["queries"] = [out.get("reason", "")[:60] or "more information"]
    elif "route" in out:
        out["route"] = rng.choice(HALLUCINATED_ROUTES)
    return json.dumps(out)


def mistype(obj: dict[str, Any], rng: random.Random) -> str:
    """``obj`` with the right keys but a wrong JSON type (queries as a string, action or route as
    a list, reason as an object), as valid JSON."""
    out = dict(obj)
    if "action" in out:
        style = rng.randrange(3)
        if style == 0:
            out["queries"] = "; ".join(out.get("queries") or []) or "none"
        elif style == 1:
            out["action"] = [out["action"]]
        else:
            out["reason"] = {"text": out.get("reason", "")}
    elif "route" in out:
        if rng.randrange(2) == 0:
            out["route"] = [out["route"]]
        else:
            out["reason"] = {"text": out.get("reason", "")}
    return json.dumps(out)


def apply_format_failures(obj: dict[str, Any], draws: CallRandom) -> tuple[str, str | None]:
    """The text for ``obj`` and the name of the format failure applied (``None`` if none): invalid JSON first, then a
    hallucinated action, then wrong types, at most one, so each knob's observed rate per opportunity is its
    configured rate (:func:`format_failure_rate`)."""
    if draws.fires("invalid_json"):
        return broken_json(obj, draws.rng), "invalid_json"
    if draws.fires("hallucinated_action"):
        return hallucinate(obj, draws.rng), "hallucinated_action"
    if draws.fires("wrong_types"):
        return mistype(obj, draws.rng), "wrong_types"
    return json.dumps(obj), None


def format_failure_rate(profile: SimulatorProfile) -> float:
    """The share of structured outputs (route, controller) a format failure breaks, from the rates."""
    return 1.0 - (1.0 - profile.invalid_json) * (1.0 - profile.hallucinated_action) * (1.0 - profile.wrong_types)
