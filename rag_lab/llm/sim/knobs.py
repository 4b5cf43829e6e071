"""Per-call randomness and the output-format failures of the simulated LLM.

:class:`CallRandom` is the only source of randomness: it is derived from (seed, role, the text
of every message) with SHA-256, so the same request always draws the same numbers, two runs with
the same seed are identical, and another seed draws differently. Every knob gets one uniform
draw, taken in a fixed order before anything else, so a knob fires iff its draw is below its rate
(a knob at 1.0 always fires, at 0.0 never, and raising a rate only adds firings).

The format failures (:func:`broken_json`, :func:`hallucinate`, :func:`mistype`) turn a correct
decision object into output a validator must reject; none can be repaired by extracting an
embedded JSON object.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from typing import Any

from rag_lab.llm.base import Message
from rag_lab.llm.sim.profile import KNOBS, SimulatorProfile

#: Action names a tool-calling model invents in place of the four it was given.
HALLUCINATED_ACTIONS = ("search_web", "lookup", "final_answer", "search", "finish", "ask_user", "browse",
                        "retrieve")
#: Route labels outside SIMPLE / COMPLEX.
HALLUCINATED_ROUTES = ("MEDIUM", "MULTI_HOP", "HARD", "UNKNOWN", "COMPARISON")


class CallRandom:
    """The seeded randomness of one call: one uniform draw per knob and an RNG for choices."""

    def __init__(self, profile: SimulatorProfile, role: str, messages: Sequence[Message]) -> None:
        h = hashlib.sha256()
        h.update(f"{profile.seed}\x1f{role}".encode())
        for m in messages:
            h.update(b"\x1e" + m.role.encode() + b"\x1f" + m.content.encode("utf-8"))
        digest = h.digest()
        knob_rng = random.Random(int.from_bytes(digest[:16], "big"))
        self.draws = {k: knob_rng.random() for k in KNOBS}
        self.rng = random.Random(int.from_bytes(digest[16:], "big"))
        self.rates = profile.knobs()

    def fires(self, knob: str) -> bool:
        """Whether ``knob`` fires on this call (its draw is below its rate)."""
        return self.draws[knob] < self.rates[knob]


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
        inner = ", ".join(f"{k}: {v if not isinstance(v, str) else v}" for k, v in obj.items())
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
    """The text for ``obj`` and the name of the format failure applied (``None`` if none):
    invalid JSON first, then a hallucinated action, then wrong types; at most one."""
    if draws.fires("invalid_json"):
        return broken_json(obj, draws.rng), "invalid_json"
    if draws.fires("hallucinated_action"):
        return hallucinate(obj, draws.rng), "hallucinated_action"
    if draws.fires("wrong_types"):
        return mistype(obj, draws.rng), "wrong_types"
    return json.dumps(obj), None
