"""Rephrasing a question without knowing anything and without a vocabulary: keyword queries
(names first, then the remaining content words), the question without its question word, and
re-orderings. Used by the rewrite and HyDE roles and by a controller that re-searches. Names come
out exactly as written; nothing here can add a fact the question does not hold."""

from __future__ import annotations

import re
from functools import lru_cache

from rag_lab.llm.sim.question import analyse
from rag_lab.llm.sim.text import normalise

_LEAD = re.compile(r"^\s*(?:(?:in|on|at|for|from|to|with|by)\s+)?(?:what|which|who|whom|whose|where|when|why|how"
                   r"(?:\s+(?:many|much|long|old|often|far))?)\s+(?:(?:is|are|was|were|does|do|did|has|have|had|can|"
                   r"could|will|would)\s+)?", re.IGNORECASE)
_FILLERS = ("overview", "details", "information", "background")


def keyword_query(question: str) -> str:
    """The question's names and content words, names first ("Christopher Nolan magic themed drama")."""
    qa = analyse(question)
    parts = [*qa.names(), *qa.term_words]
    return " ".join(dict.fromkeys(parts)) or question


def statement(question: str) -> str:
    """The question without its question word and auxiliary, as a phrase ("In which city did X
    live?" → "City did X live")."""
    text = " ".join(question.split()).rstrip("?!. ")
    rest = _LEAD.sub("", text, count=1)
    return rest[0].upper() + rest[1:] if rest else text


@lru_cache(maxsize=8192)
def variants(question: str) -> tuple[str, ...]:
    """Distinct rephrasings of ``question``, most faithful first (the question itself excluded)."""
    qa = analyse(question)
    names, terms = qa.names(), list(qa.term_words)
    candidates = [keyword_query(question), statement(question), " ".join([*terms, *names]),
                  " ".join([*names, *terms[:3]]), " ".join([*names, *reversed(terms)])]
    base = keyword_query(question)
    candidates += [f"{base} {filler}" for filler in _FILLERS]
    out: list[str] = []
    seen = {normalise(question)}
    for c in candidates:
        c = " ".join(c.split())
        if c and normalise(c) not in seen:
            seen.add(normalise(c))
            out.append(c)
    return tuple(out) or (question,)


def paraphrase(question: str, avoid: list[str] | tuple[str, ...] = (), start: int = 0) -> str:
    """The first variant from position ``start`` that is not among ``avoid`` (normalised); the
    ``start``-th variant when every one has been used."""
    options = variants(question)
    used = {normalise(a) for a in avoid}
    for k in range(len(options)):
        c = options[(start + k) % len(options)]
        if normalise(c) not in used:
            return c
    return options[start % len(options)]


def passages(question: str, n: int, pick: int = 0) -> list[str]:
    """``n`` HyDE-style passages restating the question as statements; they hold the question's
    words only, never an answer."""
    qa = analyse(question)
    head = qa.names()[0] if qa.names() else ""
    said = statement(question)
    forms = [f"{said}.", f"{head}: {said}." if head else f"{said}.", f"{keyword_query(question)}.",
             f"{head} {' '.join(qa.term_words)}." if head else f"{' '.join(qa.term_words)}.", f"{question.strip()}"]
    forms = forms[pick % 2:] + forms[: pick % 2]
    out: list[str] = []
    for f in forms:
        f = " ".join(f.split())
        if f and f not in out:
            out.append(f)
    while len(out) < n:
        out.append(out[len(out) % len(out)])
    return out[:n]


def drop_bridge(question: str, bridge: str, searches: list[str]) -> str:
    """The next-hop query a model writes when it forgets the bridge: the question's own words."""
    words = [w for w in keyword_query(question).split() if w.lower() not in bridge.lower().split()]
    used = {normalise(s) for s in searches}
    for c in (" ".join(words), paraphrase(question, searches)):
        if c and normalise(c) not in used:
            return c
    return " ".join(words)
