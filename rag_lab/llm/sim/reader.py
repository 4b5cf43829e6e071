"""How the simulator reads a prompt: the :class:`Reader` interface, the default
:class:`GenericReader`, and :func:`make_reader`.

A reader turns what a prompt holds (question, searches, numbered evidence, draft) into each role's
*ideal* output; the behaviour knobs are applied on top by the simulator, the same way for every
reader. The generic reader uses only signals any English text has (sentences, MiniLM similarity,
capitalised names, numbers and dates, question words, which item's title another item names).
The world adapter (:mod:`rag_lab.llm.sim.adapters.world`) is opt-in
(``SimulatorProfile(reader="world")``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Protocol

from rag_lab.llm.prompts import EvidenceItem
from rag_lab.llm.sim.answer import answer
from rag_lab.llm.sim.controller import fresh
from rag_lab.llm.sim.decision import Decision
from rag_lab.llm.sim.evidence import Evidence
from rag_lab.llm.sim.ideal import ideal_decision
from rag_lab.llm.sim.judging import grade, judge_draft_only, judge_with_evidence
from rag_lab.llm.sim.paraphrase import keyword_query, paraphrase, passages, variants
from rag_lab.llm.sim.question import analyse
from rag_lab.llm.sim.vectors import Similarity


class Reader(Protocol):
    """What the simulator needs from a reader (one method per role, plus query helpers)."""

    name: str

    def is_comparison(self, question: str) -> bool: ...
    def route(self, question: str) -> dict[str, str]: ...
    def rewrite(self, question: str, n: int, rng: random.Random) -> list[str]: ...
    def hyde(self, question: str, n: int, rng: random.Random) -> list[str]: ...
    def decide(self, question: str, items: list[EvidenceItem], searches: list[str]) -> Decision: ...
    def paraphrase(self, question: str, searches: list[str], start: int = 0) -> str: ...
    def drop_bridge(self, question: str, bridge: str, searches: list[str]) -> str: ...
    def answer(self, question: str, items: list[EvidenceItem], template: str,
               allow_partial: Callable[[], bool]) -> str: ...
    def judge(self, question: str, draft: str, items: list[EvidenceItem] | None) -> dict[str, object]: ...
    def grade(self, question: str, item: EvidenceItem) -> dict[str, float]: ...


class GenericReader:
    """The default reader: generic signals only (see the module doc)."""

    name = "generic"

    def __init__(self, similarity: Similarity | None, sentence_items: int = 4) -> None:
        self.similarity = similarity
        self.sentence_items = sentence_items

    def _evidence(self, question: str, items: list[EvidenceItem], sentence_items: int | None = None) -> Evidence:
        """The evidence read against the question; a title the question spells out is one of its names."""
        titles = tuple(dict.fromkeys(re.sub(r"\s*\([^)]*\)\s*$", "", it.title).strip() for it in items))
        return Evidence(analyse(question, titles), items, self.similarity,
                        sentence_items=self.sentence_items if sentence_items is None else sentence_items)

    def is_comparison(self, question: str) -> bool:
        return analyse(question).comparison

    def route(self, question: str) -> dict[str, str]:
        """COMPLEX for a comparison, for several names, or for a question that describes its
        subject instead of naming it (a relative clause: "the band who …", "the company that …");
        SIMPLE for one name and one asked fact."""
        qa = analyse(question)
        if qa.comparison:
            return {"route": "COMPLEX", "reason": "compares " + " and ".join(qa.names()[:2])}
        if len(qa.foci) >= 2:
            return {"route": "COMPLEX", "reason": "several names: " + ", ".join(qa.names()[:3])}
        low = f" {qa.text.lower()} "
        if any(f" {w} " in low for w in ("who", "which", "that", "whose", "whom")) and not low.strip().startswith(
                ("who ", "which ", "whose ", "whom ")) or "'s " in low or "’s " in low:
            return {"route": "COMPLEX", "reason": "the subject is described, not named: a lookup chain"}
        if not qa.foci:
            return {"route": "COMPLEX", "reason": "names nothing: ambiguous"}
        return {"route": "SIMPLE", "reason": f"one fact about {qa.names()[0]}"}

    def rewrite(self, question: str, n: int, rng: random.Random) -> list[str]:
        options = list(variants(question))
        head, tail = options[:2], options[2:]
        rng.shuffle(tail)
        return (head + tail)[:n] or [question]

    def hyde(self, question: str, n: int, rng: random.Random) -> list[str]:
        return passages(question, n, pick=rng.randrange(2))

    def decide(self, question: str, items: list[EvidenceItem], searches: list[str]) -> Decision:
        ev = self._evidence(question, items)
        return ideal_decision(ev.qa, ev, searches)

    def paraphrase(self, question: str, searches: list[str], start: int = 0) -> str:
        return paraphrase(question, searches, start=start)

    def drop_bridge(self, question: str, bridge: str, searches: list[str]) -> str:
        """The next-hop query a model writes when it forgets the bridge: the question's own words."""
        words = [w for w in keyword_query(question).split() if w.lower() not in bridge.lower().split()]
        return fresh([" ".join(words), paraphrase(question, searches)], searches) or " ".join(words)

    def answer(self, question: str, items: list[EvidenceItem], template: str,
               allow_partial: Callable[[], bool]) -> str:
        ev = self._evidence(question, items)
        return answer(ev.qa, ev, template, allow_partial)

    def judge(self, question: str, draft: str, items: list[EvidenceItem] | None) -> dict[str, object]:
        if items is None:
            return judge_draft_only(analyse(question), draft)
        ev = self._evidence(question, items, sentence_items=0)
        return judge_with_evidence(ev.qa, draft, ev)

    def grade(self, question: str, item: EvidenceItem) -> dict[str, float]:
        ev = self._evidence(question, [item], sentence_items=0)
        return grade(ev.qa, ev)


def make_reader(name: str, similarity: Similarity | None, sentence_items: int = 4) -> Reader:
    """The reader called ``name``: ``generic`` (default) or ``world`` (the opt-in adapter)."""
    if name == "generic":
        return GenericReader(similarity, sentence_items)
    if name == "world":
        from rag_lab.llm.sim.adapters.world import WorldReader

        return WorldReader(similarity, sentence_items)
    raise ValueError(f"unknown simulator reader {name!r}; choose generic or world")
