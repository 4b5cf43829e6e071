"""The route role's knob and the instruction reading shared by the rewrite and HyDE roles."""

from __future__ import annotations

import re

from rag_lab.llm.sim.knobs import CallRandom

_N = re.compile(r"\bWrite (\d+) (?:alternative|short hypothetical|hypothetical)", re.IGNORECASE)


def requested_count(system_text: str, default: int = 3) -> int:
    """The ``n`` the instruction asks for ("Write 3 alternative search queries")."""
    m = _N.search(system_text)
    return max(1, min(16, int(m.group(1)))) if m else default


def apply_route_knob(decision: dict[str, str], comparison: bool, draws: CallRandom) -> dict[str, str]:
    """``comparison_underrate``: a comparison question (the only place it applies) routed SIMPLE."""
    if comparison and decision.get("route") == "COMPLEX" and draws.fires("comparison_underrate"):
        return {"route": "SIMPLE", "reason": "one lookup per named thing"}
    return decision
