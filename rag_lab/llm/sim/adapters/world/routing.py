"""The world adapter's route role and query-expansion roles (rewrite, HyDE).

**route** — ``COMPLEX`` when the question compares (vs, compare, difference between, both, "X or
Y" with a comparative…), follows a relation chain ("the team that owns X", "the service affected
by …"), names several things at once, or is vague (names nothing, or says "stuff", "folks",
"again"…); otherwise ``SIMPLE``. With the ``comparison_underrate`` knob a comparison is routed
``SIMPLE``.

**rewrite** — ``n`` rephrasings (``n`` read from the instruction "Write {n} alternative…"):
synonym swaps from the general lexicon, keyword queries, a declarative restatement. Names and
identifiers are kept exactly.

**hyde** — ``n`` passages that restate the question as statements. The simulator has no world
knowledge: a HyDE passage can only rephrase the question (its entities, its relation words and
general synonyms); it never contains an answer or an invented fact.
"""

from __future__ import annotations

import random
import re

from rag_lab.llm.sim.adapters.world.paraphrase import passages, variants
from rag_lab.llm.sim.adapters.world.question import QuestionAnalysis


def route(qa: QuestionAnalysis) -> dict[str, str]:
    """The route decision (the ``comparison_underrate`` knob is applied by the caller)."""
    if qa.comparison:
        return {"route": "COMPLEX", "reason": "compares " + " and ".join(qa.focus_names()[:2])}
    if qa.chain is not None:
        return {"route": "COMPLEX", "reason": f"relation chain through '{qa.chain.cue.strip()}'"}
    named = [e for e in qa.foci if e.kind not in ("version", "date", "word")]
    if len(named) >= 2 and re.search(r"\b(and|or)\b|,", qa.text):
        return {"route": "COMPLEX", "reason": "several things named: " + ", ".join(e.text for e in named)}
    if qa.vague:
        return {"route": "COMPLEX", "reason": "vague: no clearly named subject"}
    return {"route": "SIMPLE", "reason": "one fact about " + (qa.focus_names()[0] if qa.focus_names() else "one thing")}


def rewrite(question: str, n: int, rng: random.Random) -> list[str]:
    """``n`` rephrasings; the seeded RNG decides the order of the less faithful ones."""
    options = variants(question)
    head, tail = options[:2], options[2:]
    rng.shuffle(tail)
    return (head + tail)[:n] or [question]


def hyde(question: str, n: int, rng: random.Random) -> list[str]:
    """``n`` declarative passages that restate the question (no facts added)."""
    return passages(question, n, pick=rng.randrange(2))
