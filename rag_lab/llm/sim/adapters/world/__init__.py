"""The opt-in world adapter: the reader written for rag_lab's synthetic software company.

It reads with hand-written knowledge of the world's question templates and wiki conventions
(relation-chain regexes, an IT/encyclopedia synonym lexicon, rename and bridge rules, archived
page markers, a prompt-injection detector). It is **off by default**: select it with
``SimulatorProfile(reader="world")`` (or ``--sim reader=world``). The default reader
(:mod:`rag_lab.llm.sim.reader`) uses only generic signals and is the one measured on real text;
this adapter shows how much world-specific reading is worth on the world.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from rag_lab.llm.prompts import EvidenceItem
from rag_lab.llm.sim.adapters.world.answer import answer
from rag_lab.llm.sim.adapters.world.controller import ideal_decision
from rag_lab.llm.sim.adapters.world.evidence import Evidence
from rag_lab.llm.sim.adapters.world.judging import grade, judge_draft_only, judge_with_evidence
from rag_lab.llm.sim.adapters.world.paraphrase import keyword_query, paraphrase
from rag_lab.llm.sim.adapters.world.question import analyse
from rag_lab.llm.sim.adapters.world.routing import hyde, rewrite, route
from rag_lab.llm.sim.controller import fresh
from rag_lab.llm.sim.decision import Decision
from rag_lab.llm.sim.vectors import Similarity


class WorldReader:
    """The world adapter behind the :class:`~rag_lab.llm.sim.reader.Reader` interface."""

    name = "world"

    def __init__(self, similarity: Similarity | None, sentence_items: int = 4) -> None:
        self.similarity = similarity
        self.sentence_items = sentence_items

    def _evidence(self, question: str, items: list[EvidenceItem]) -> Evidence:
        return Evidence(analyse(question), items, self.similarity, sentence_items=self.sentence_items)

    def is_comparison(self, question: str) -> bool:
        return analyse(question).comparison

    def route(self, question: str) -> dict[str, str]:
        return route(analyse(question))

    def rewrite(self, question: str, n: int, rng: random.Random) -> list[str]:
        return rewrite(question, n, rng)

    def hyde(self, question: str, n: int, rng: random.Random) -> list[str]:
        return hyde(question, n, rng)

    def decide(self, question: str, items: list[EvidenceItem], searches: list[str]) -> Decision:
        return ideal_decision(analyse(question), self._evidence(question, items), searches)

    def paraphrase(self, question: str, searches: list[str], start: int = 0) -> str:
        return paraphrase(question, searches, start=start)

    def drop_bridge(self, question: str, bridge: str, searches: list[str]) -> str:
        words = [w for w in keyword_query(question).split() if w.lower() not in bridge.lower().split()]
        return fresh([" ".join(words), keyword_query(question, synonyms=1), paraphrase(question, searches)],
                     searches) or " ".join(words)

    def answer(self, question: str, items: list[EvidenceItem], template: str,
               allow_partial: Callable[[], bool]) -> str:
        return answer(analyse(question), self._evidence(question, items), template, allow_partial)

    def judge(self, question: str, draft: str, items: list[EvidenceItem] | None) -> dict[str, object]:
        qa = analyse(question)
        if items is None:
            return judge_draft_only(qa, draft)
        return judge_with_evidence(qa, draft, self._evidence(question, items))

    def grade(self, question: str, item: EvidenceItem) -> dict[str, float]:
        return grade(analyse(question), self._evidence(question, [item]))
