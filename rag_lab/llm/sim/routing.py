"""The route role and the query-expansion roles (rewrite, HyDE).

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

import re

from rag_lab.llm.sim.knobs import CallRandom
from rag_lab.llm.sim.paraphrase import passages, variants
from rag_lab.llm.sim.question import QuestionAnalysis

_N = re.compile(r"\bWrite (\d+) (?:alternative|short hypothetical|hypothetical)", re.IGNORECASE)


def requested_count(system_text: str, default: int = 3) -> int:
    """The ``n`` the instruction asks for ("Write 3 alternative search queries")."""
    m = _N.search(system_text)
    return max(1, min(16, int(m.group(1)))) if m else default


def route(qa: QuestionAnalysis, draws: CallRandom) -> tuple[dict[str, str], str | None]:
    """The route decision and the knob that changed it (if any)."""
    if qa.comparison:
        if draws.fires("comparison_underrate"):
            return {"route": "SIMPLE", "reason": "one lookup per named thing"}, "comparison_underrate"
        return {"route": "COMPLEX", "reason": "compares " + " and ".join(qa.focus_names()[:2])}, None
    if qa.chain is not None:
        return {"route": "COMPLEX", "reason": f"relation chain through '{qa.chain.cue.strip()}'"}, None
    named = [e for e in qa.foci if e.kind not in ("version", "date", "word")]
    if len(named) >= 2 and re.search(r"\b(and|or)\b|,", qa.text):
        return {"route": "COMPLEX", "reason": "several things named: " + ", ".join(e.text for e in named)}, None
    if qa.vague:
        return {"route": "COMPLEX", "reason": "vague: no clearly named subject"}, None
    return {"route": "SIMPLE", "reason": "one fact about " + (qa.focus_names()[0] if qa.focus_names() else "one thing")}, None


def rewrite(question: str, n: int, draws: CallRandom) -> dict[str, list[str]]:
    """``n`` rephrasings; the seeded RNG decides the order of the less faithful ones."""
    options = variants(question)
    head, tail = options[:2], options[2:]
    draws.rng.shuffle(tail)
    out = (head + tail)[:n]
    return {"queries": out or [question]}


def hyde(question: str, n: int, draws: CallRandom) -> dict[str, list[str]]:
    """``n`` declarative passages that restate the question (no facts added)."""
    return {"passages": passages(question, n, pick=draws.rng.randrange(2))}
