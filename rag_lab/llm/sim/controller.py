"""The controller role's prompt reading and behaviour knobs, the same for every reader.

A reader (:mod:`rag_lab.llm.sim.reader`) gives the *ideal* decision from the evidence;
:func:`apply_knobs` then applies the behaviour knobs of
:class:`~rag_lab.llm.sim.profile.SimulatorProfile`, each drawn only where it applies and every
one that fires recorded (several may fire on one decision):

1. ``synonym_spinning`` — the evidence suffices, yet search again with a paraphrase;
2. ``budget_thrift`` — a stated budget, and a re-search although the evidence suffices: stop and
   answer (undoes spinning);
3. ``premature_stop`` — a multi-part question with only part covered: answer now;
4. ``bridge_drop`` — the next-hop query loses its bridge entity;
5. ``budget_anchoring`` — a stated budget not used up, and a decision to stop: keep searching.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from rag_lab.llm.sim.decision import Decision
from rag_lab.llm.sim.knobs import CallRandom
from rag_lab.llm.sim.text import normalise

if TYPE_CHECKING:
    from rag_lab.llm.sim.reader import Reader

#: A budget stated in the prompt: "at most 3 searches", "no more than 2 retrieval rounds".
_BUDGET = re.compile(
    r"\b(?:at most|no more than|up to|maximum of|max(?:imum)?)\s+(\d+)\s+(?:searches|search(?:es)? rounds?|"
    r"retrieval rounds?|rounds?|retrievals?|queries|tool calls)\b",
    re.IGNORECASE,
)
_RUN = re.compile(r"\b(\d+)\s+(?:have|has)\s+been\s+run\b", re.IGNORECASE)


def stated_budget(system_text: str) -> int | None:
    """The search budget the prompt states ("at most N searches"), or None."""
    m = _BUDGET.search(system_text)
    return int(m.group(1)) if m else None


def searches_run(system_text: str, searches: list[str]) -> int:
    m = _RUN.search(system_text)
    return int(m.group(1)) if m else len(searches)


def parse_searches(block: str) -> list[str]:
    """The queries listed in a SEARCHES section ("1. …" lines; "(none)" is empty)."""
    out = []
    for line in block.splitlines():
        line = line.strip()
        if not line or line == "(none)":
            continue
        out.append(re.sub(r"^\d+\.\s*", "", line))
    return out


def fresh(candidates: list[str], searches: list[str]) -> str | None:
    """The first candidate query not already searched (compared normalised)."""
    used = {normalise(s) for s in searches}
    for c in candidates:
        c = " ".join(c.split())
        if c and normalise(c) not in used:
            return c
    return None


def searched_for(label: str, searches: list[str]) -> bool:
    """Whether a search after the first one already named ``label`` (one targeted search each)."""
    key = normalise(label)
    return any(key and key in normalise(s) for s in searches[1:])


def apply_knobs(ideal: Decision, reader: Reader, question: str, searches: list[str], system_text: str,
                draws: CallRandom) -> Decision:
    """The ideal decision with the behaviour knobs applied (see the module doc)."""
    d = ideal
    fired: list[str] = []
    budget = stated_budget(system_text)
    if ideal.action in ("answer", "rerank") and draws.fires("synonym_spinning"):
        q = reader.paraphrase(question, searches, start=draws.rng.randrange(2))
        d = Decision("retrieve_again", (q,), reason="searching again to confirm")
        fired.append("synonym_spinning")
        if budget is not None and draws.fires("budget_thrift"):
            d = ideal
            fired.append("budget_thrift")
    elif ideal.action in ("retrieve_again", "insufficient") and ideal.partial and draws.fires("premature_stop"):
        d = Decision("answer", reason="the evidence seems sufficient")
        fired.append("premature_stop")
    elif ideal.action == "retrieve_again" and ideal.bridge and draws.fires("bridge_drop"):
        q = reader.drop_bridge(question, ideal.bridge, searches)
        d = replace(ideal, queries=(q,), bridge=None, reason="searching for the missing fact")
        fired.append("bridge_drop")
    if (d.action in ("answer", "rerank", "insufficient") and budget is not None
            and searches_run(system_text, searches) < budget and draws.fires("budget_anchoring")):
        q = reader.paraphrase(question, searches, start=draws.rng.randrange(3))
        d = Decision("retrieve_again", (q,),
                     reason=f"{budget - searches_run(system_text, searches)} searches left; searching more")
        fired.append("budget_anchoring")
    return replace(d, knobs=tuple(fired))
