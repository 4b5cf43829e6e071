"""The ideal output of every role — what the simulated model writes with every knob off — from the prompt alone
(:class:`~rag_lab.llm.sim.prompt.Prompt`) and the reading modules. Per role: ``route`` —
:meth:`IdealModel.route`; ``rewrite`` / ``hyde`` — :mod:`.paraphrase`; ``controller`` —
:func:`.controller_decision.ideal_decision`; ``answer`` — :func:`.extractive_answer.answer`; ``judge`` /
``grade`` — :mod:`.judging`. The knobs are applied on top by :mod:`.knobs`."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from rag_lab.llm.prompts import EvidenceItem
from rag_lab.llm.sim.controller_decision import Decision, ideal_decision
from rag_lab.llm.sim.evidence import Evidence, title_label
from rag_lab.llm.sim.extractive_answer import answer
from rag_lab.llm.sim.judging import grade, judge_draft_only, judge_with_evidence
from rag_lab.llm.sim.names import code_spans
from rag_lab.llm.sim.paraphrase import passages, variants
from rag_lab.llm.sim.question import DESCRIBED, analyse
from rag_lab.llm.sim.similarity import Similarity

#: A description of several words ("the last active ruler of …", "a commentator of …", "a language spoken
#: between …") or a second predicate ("was born in 1984 and played …", "…, and its beginning …"): the
#: question chains two facts even when it names one thing.
_CHAINED = re.compile(r"\b(?:the|a|an)\s+(?:[a-z\-]+\s+){0,2}[a-z\-]+\s+(?:of|that|who|whom|whose|which|where|"
                      r"[a-z]+ed\s+(?:by|in|at|on|for|from)|spoken|written|known)\b|"
                      r"(?:,\s*and|\band)\s+(?:its|his|her|their|was|is|were|are|has|had|[a-z]+ed)\b")


class IdealModel:
    """Each role's ideal output (see the module doc). ``similarity``: the embedding similarity the
    reading uses (None: no embeddings, lexical signals only); ``sentence_items``: how many of the
    most similar items are also read sentence by sentence with embeddings."""

    def __init__(self, similarity: Similarity | None, sentence_items: int = 4) -> None:
        self.similarity = similarity
        self.sentence_items = sentence_items

    def evidence(self, question: str, items: list[EvidenceItem], sentence_items: int | None = None) -> Evidence:
        """The evidence read against the question; a title, or a span the evidence writes as code, that the
        question spells out is one of its names (``Le roi malgré lui``, ``user-api``)."""
        titles = [title_label(it.title) for it in items]
        titles += [span for it in items for span in code_spans(it.text)]
        titles = tuple(dict.fromkeys(titles))
        return Evidence(analyse(question, titles), items, self.similarity,
                        sentence_items=self.sentence_items if sentence_items is None else sentence_items)

    def is_comparison(self, question: str) -> bool:
        return analyse(question).comparison

    def route(self, question: str) -> dict[str, str]:
        """COMPLEX for a comparison, for several names, or for a question that describes its subject instead of naming
        it (a relative clause: "the band who …", "the company that …"); SIMPLE for one name and one asked fact."""
        qa = analyse(question)
        if qa.comparison:
            return {"route": "COMPLEX", "reason": "compares " + " and ".join(qa.names()[:2])}
        if len(qa.foci) >= 2:
            return {"route": "COMPLEX", "reason": "several names: " + ", ".join(qa.names()[:3])}
        low = f" {qa.text.lower()} "
        if any(f" {w} " in low for w in ("who", "which", "that", "whose", "whom")) and not low.strip().startswith(
                ("who ", "which ", "whose ", "whom ")) or "'s " in low or "’s " in low or DESCRIBED.search(qa.text) \
                or _CHAINED.search(qa.text):
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
        ev = self.evidence(question, items)
        return ideal_decision(ev.qa, ev, searches)

    def answer(self, question: str, items: list[EvidenceItem], template: str,
               allow_partial: Callable[[], bool] = lambda: False) -> str:
        ev = self.evidence(question, items)
        return answer(ev.qa, ev, template, allow_partial)

    def judge(self, question: str, draft: str, items: list[EvidenceItem] | None) -> dict[str, object]:
        if items is None:
            return judge_draft_only(analyse(question), draft)
        ev = self.evidence(question, items, sentence_items=0)
        return judge_with_evidence(ev.qa, draft, ev)

    def grade(self, question: str, item: EvidenceItem) -> dict[str, float]:
        ev = self.evidence(question, [item], sentence_items=0)
        return grade(ev.qa, ev)
