"""Rephrasing a question without knowing anything: synonym swaps, keyword queries and
declarative restatements. Used by the rewrite and HyDE roles and by a controller that re-searches.

Names and identifiers are masked before any swap, so they come out exactly as written. The only
vocabulary used is the general synonym table of :mod:`~rag_lab.llm.sim.lexicon`; nothing here can
add a fact (a name, a number, a date) that the question does not already hold.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rag_lab.llm.sim.adapters.world.entities import extract
from rag_lab.llm.sim.adapters.world.lexicon import CONCEPTS, concepts_of, phrase_alternatives
from rag_lab.llm.sim.adapters.world.question import analyse
from rag_lab.llm.sim.adapters.world.text import normalise, stem

_AUX = r"(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)"
_WH = re.compile(
    r"^(?P<prep>(?:in|on|at|for|from|to|with|by|under|between)\s+)?"
    r"(?P<wh>what|which|who|whom|whose|where|when|why|how(?:\s+(?:many|much|long|old|often|big))?)"
    rf"(?P<noun>(?:\s+(?!{_AUX}\b)(?![a-z]+ed\b)[a-z][a-z\-]*){{0,2}})"
    rf"(?:\s+(?P<aux>{_AUX}))?\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
_YES_NO = re.compile(r"^(?P<aux>are|is|was|were|do|does|did|has|have|had|can|could|will|would)\s+(?P<rest>.+)$",
                     re.IGNORECASE)
_IRREGULAR_PAST = {"go": "went", "keep": "kept", "run": "ran", "lead": "led", "write": "wrote", "begin": "began",
                   "make": "made", "take": "took", "sit": "sat", "hold": "held", "get": "got", "come": "came",
                   "give": "gave", "find": "found", "leave": "left", "build": "built", "send": "sent",
                   "hit": "hit", "set": "set", "put": "put", "read": "read", "know": "knew", "do": "did",
                   "have": "had", "be": "was", "say": "said", "see": "saw", "pay": "paid", "sell": "sold"}
_FILLERS = ("details", "documentation", "overview", "information")


def _mask(text: str) -> tuple[str, list[str]]:
    """``text`` with every entity replaced by a placeholder, and the entities in order."""
    kept: list[str] = []
    masked = text
    for e in sorted(extract(text, question=True), key=lambda e: -len(e.text)):
        if e.kind == "date" or e.text not in masked:
            continue
        masked = masked.replace(e.text, f"\x00{len(kept)}\x00")
        kept.append(e.text)
    return masked, kept


def _unmask(text: str, kept: list[str]) -> str:
    return re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], text)


def swap(question: str, choice: int) -> str:
    """``question`` with every known phrase replaced by its ``choice``-th alternative (cycling)."""
    masked, kept = _mask(question)
    out, last = [], 0
    for m, alternatives in phrase_alternatives(masked):
        fresh = [a for a in alternatives if a.lower() != m.group(0).lower()] or list(alternatives)
        out.append(masked[last : m.start()])
        out.append(fresh[choice % len(fresh)])
        last = m.end()
    out.append(masked[last:])
    return _unmask("".join(out), kept)


def _inflect(verb: str, aux: str) -> str:
    low = verb.lower()
    if aux.lower() == "does":
        if low.endswith(("s", "sh", "ch", "x", "z", "o")):
            return verb + "es"
        if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
            return verb[:-1] + "ies"
        return verb + "s"
    if aux.lower() == "did":
        if low in _IRREGULAR_PAST:
            return _IRREGULAR_PAST[low]
        if low.endswith("e"):
            return verb + "d"
        return verb + "ed"
    return verb


def _is_masked(token: str) -> bool:
    return token.startswith("\x00")


_OBJECT_MARKERS = frozenset("its their the a an in on to at as for with from into by".split())
_ADVERBS = frozenset("first last ever still also actually originally currently usually".split())


def _verb_index(tokens: list[str]) -> int | None:
    """Where the verb sits in ``tokens`` (subject + verb phrase, auxiliary already removed):
    right after a leading masked entity (adverbs skipped), else just before the first object
    marker, else the last word."""
    if tokens and _is_masked(tokens[0]):
        i = 1
        while i < len(tokens) and tokens[i].lower() in _ADVERBS:
            i += 1
        return i if i < len(tokens) else None
    for i in range(1, len(tokens)):
        if tokens[i].lower() in _OBJECT_MARKERS:
            return i - 1
    return len(tokens) - 1 if len(tokens) > 1 else None


def _subject_end(tokens: list[str]) -> int:
    """Index just past the subject of ``tokens``: a masked entity, else determiners and one word."""
    if tokens and _is_masked(tokens[0]):
        return 1
    i = 0
    while i < len(tokens) - 1 and tokens[i].lower() in ("the", "a", "an", "its", "their", "our", "this", "that"):
        i += 1
    return min(i + 1, len(tokens))


@lru_cache(maxsize=8192)
def declarative(question: str) -> str:
    """A statement that restates the question ("Which port does X listen on?" → "X listens on
    the port."). It carries the question's words only: no answer, no new fact."""
    text = " ".join(question.split()).rstrip("?!. ")
    masked, kept = _mask(text)
    m = _WH.match(masked)
    y = _YES_NO.match(masked)
    if m:
        noun = (m.group("noun") or "").strip()
        aux = (m.group("aux") or "").lower()
        prep = (m.group("prep") or "").strip().lower()
        tokens = m.group("rest").strip().split()
        tail = " ".join(w for w in (prep, "the", noun) if w) if noun else ""
        if aux in ("does", "do", "did"):
            verb = _verb_index(tokens)
            if verb is not None:
                tokens[verb] = _inflect(tokens[verb], aux)
            statement = " ".join([*tokens, tail]).strip()
        elif aux in ("can", "could", "will", "would", "should"):
            cut = _subject_end(tokens)
            statement = " ".join([*tokens[:cut], aux, *tokens[cut:], tail])
        elif aux:
            if noun and tokens and _is_masked(tokens[0]):
                statement = " ".join([tokens[0], aux, *tokens[1:], tail])
            elif noun:
                statement = " ".join(["the", noun, aux, *tokens])
            else:
                statement = " ".join([*tokens, aux])
        elif noun:
            statement = " ".join(["the", noun, *tokens])
        else:
            statement = " ".join(tokens)
    elif y:
        tokens = y.group("rest").split()
        first = next((i for i, t in enumerate(tokens) if _is_masked(t)), None)
        insert = None
        if first is not None:
            insert = next((i for i in range(first + 1, len(tokens))
                           if not _is_masked(tokens[i]) and tokens[i].lower() not in ("and", "or", "&", ",")), None)
        if insert is None:
            insert = _subject_end(tokens)
        statement = " ".join([*tokens[:insert], y.group("aux").lower(), *tokens[insert:]])
    else:
        statement = masked
    statement = " ".join(_unmask(statement, kept).split())
    if not statement:
        statement = text
    if statement[0].islower() and not _starts_with_id(statement):
        statement = statement[0].upper() + statement[1:]
    return statement + "."


def _starts_with_id(text: str) -> bool:
    first = text.split()[0] if text.split() else ""
    return bool(re.match(r"[a-z0-9]+-[a-z0-9]|[@#]", first))


def keyword_query(question: str, synonyms: int = 0) -> str:
    """Names and attribute words of the question, plus ``synonyms`` general synonyms per
    attribute concept ("audit-broker port listen" → "audit-broker port listen bind tcp")."""
    qa = analyse(question)
    names = [e.text for e in qa.foci] or list(qa.keywords)
    attr_words = [w for w in qa.attribute_words if w.lower() not in {n.lower() for n in names}]
    parts = names + attr_words
    if qa.chain is not None:
        parts += [w for w in re.findall(r"[A-Za-z]+", qa.chain.cue) if w.lower() not in ("the", "a", "an", "that",
                                                                                            "which", "who")]
    if synonyms:
        seen = {stem(w.lower()) for w in parts}
        for w in attr_words:
            for concept in sorted(concepts_of(stem(w.lower()))):
                added = 0
                for syn in CONCEPTS[concept]:
                    if stem(syn) not in seen and added < synonyms:
                        parts.append(syn)
                        seen.add(stem(syn))
                        added += 1
    return " ".join(dict.fromkeys(parts)) or question


def variants(question: str) -> list[str]:
    """Distinct rephrasings of ``question``, most faithful first (the question itself excluded)."""
    candidates = [
        swap(question, 0),
        swap(question, 1),
        keyword_query(question),
        keyword_query(question, synonyms=1),
        declarative(question),
        keyword_query(question, synonyms=2),
        swap(declarative(question), 0),
    ]
    out: list[str] = []
    seen = {normalise(question)}
    for c in candidates:
        c = " ".join(c.split())
        if c and normalise(c) not in seen:
            seen.add(normalise(c))
            out.append(c)
    base = keyword_query(question)
    for filler in _FILLERS:
        c = f"{base} {filler}"
        if normalise(c) not in seen:
            seen.add(normalise(c))
            out.append(c)
    return out


def paraphrase(question: str, avoid: list[str] | tuple[str, ...] = (), start: int = 0) -> str:
    """The first variant from position ``start`` that is not among ``avoid`` (normalised);
    the ``start``-th variant when every one has been used."""
    options = variants(question)
    used = {normalise(a) for a in avoid}
    for k in range(len(options)):
        c = options[(start + k) % len(options)]
        if normalise(c) not in used:
            return c
    return options[start % len(options)]


def passages(question: str, n: int, pick: int = 0) -> list[str]:
    """``n`` HyDE-style passages restating the question as statements (with synonym swaps and a
    wiki-like header). They hold the question's words and general synonyms, never an answer."""
    qa = analyse(question)
    head = qa.focus_names()[0] if qa.focus_names() else ""
    base = declarative(question)
    forms = [
        base,
        f"{head}: {declarative(swap(question, pick))}" if head else declarative(swap(question, pick)),
        declarative(swap(question, pick + 1)),
        f"{head} overview. {base} {keyword_query(question, synonyms=2)}." if head else
        f"{base} {keyword_query(question, synonyms=2)}.",
        f"{keyword_query(question, synonyms=1)}.",
    ]
    out: list[str] = []
    for f in forms:
        f = " ".join(f.split())
        if f not in out:
            out.append(f)
    while len(out) < n:
        out.append(forms[len(out) % len(forms)])
    return out[:n]
