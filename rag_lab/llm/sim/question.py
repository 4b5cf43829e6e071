"""What a question asks, read from its wording with general English only: the names it holds (foci), its remaining
content words (terms), the question word and the kind of value it expects, whether it is a yes/no question, and whether
it compares two named things — and then what it compares (a year for born / older / first / founded…, whatever the
question word; a number for more / larger / how many…) and in which direction."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rag_lab.llm.sim.names import Entity, extract, numeric
from rag_lab.llm.sim.text import STOPWORDS, content_words, stem, words

#: Comparatives and superlatives of general English, with the direction they select.
_LOW_WORDS = ("older oldest first earlier earliest before sooner fewer fewest less least smaller smallest lower "
              "lowest shorter shortest").split()
_HIGH_WORDS = ("younger youngest later latest newer newest recent recently more most larger largest bigger biggest "
               "higher highest greater greatest longer longest taller tallest").split()
_DIRECTION = {w: "min" for w in _LOW_WORDS} | {w: "max" for w in _HIGH_WORDS}
#: Words that make a comparison one of time: the compared value is a year.
_TIME_WORDS = frozenset(
    """born birth older oldest younger youngest first earlier earliest later latest newer newest founded formed
    established released published created opened built started began begun debuted premiered launched
    recent recently date year years age old young""".split()
)
_COMPARE_WORDS = frozenset("both same different differ difference compare compared between vs versus either "
                           "neither respectively".split())
_YES_NO = re.compile(r"^\s*(are|is|was|were|do|does|did|has|have|had|can|could|will|would|should)\b", re.I)
_TYPES = (
    (re.compile(r"\b(what|which|in what|in which)\s+year\b|^\s*when\b|\bwhen\s+(was|were|did|is|does)\b", re.I), "year"),
    (re.compile(r"\bhow\s+(many|much|long|old|tall|far|big|large)\b|\bwhat\s+(number|percentage|amount)\b|"
                r"\b(?:what|which)\s+(?:is|are|was|were)\s+the\s+(?:[a-z]+\s+){0,2}(?:percentage|percent|number|count|"
                r"amount|total)\s+of\b", re.I), "number"),
    (re.compile(r"^\s*where\b|\bwhere\s+(is|was|are|were|did|does)\b|\b(what|which)\s+(city|country|state|town|"
                r"county|region|place|island|province|continent|location)\b", re.I), "place"),
    (re.compile(r"^\s*(who|whom|whose)\b|[,;:]\s*(who|whom)\b|\b(what|which)\s+(person|man|woman)\b|"
                r"\b(?:by|for|to|with|from|of)\s+(?:who|whom)\s*\??\s*$", re.I), "person"),
)
_WH_NOUN = re.compile(r"\b(?:which|what)\s+([a-z]+)(?:\s+([a-z]+))?(?:\s+([a-z]+))?", re.I)
_WHAT_IS_THE = re.compile(r"\b(?:which|what)\s+(?:is|are|was|were)\s+the\s+([a-z]+)(?:\s+([a-z]+))?\s+"
                          r"(of|for|in|on|at|behind|that|who)\b", re.I)
_AUX = frozenset("is are was were does do did has have had can could will would should".split())


def _head(text: str) -> str | None:
    """The noun a which/what question asks for: the word after "which"/"what", or the last word of a two-word compound
    when an auxiliary follows it ("which record label did …" → label; English compounds are head-final)."""
    desc = _WHAT_IS_THE.search(text)
    if desc:  # "what is the home ground of …": the description's noun
        first, second, third = (g.lower() if g else None for g in desc.groups())
        return second if second and third else first
    wh = _WH_NOUN.search(text)
    if not wh:
        return None
    first, second, third = (g.lower() if g else None for g in wh.groups())
    if first in _AUX or first in STOPWORDS:
        return None
    if second and third in _AUX and second not in _AUX | STOPWORDS:
        return second
    return first


#: A definite description standing for a thing the question does not name: "the ship sunk by …",
#: "the director of the film …", "the club that …" / "the band who …", "the label behind …".
DESCRIBED = re.compile(r"\bthe\s+[a-z]+\s+(?:that|who|whom|whose|which|where|[a-z]+ed\s+by|of(?=\s+(?:the|a|an)\s|\s+[A-Z])|"
                       r"behind|responsible\s+for)\b")
#: The two things an English comparison sets side by side, whatever their case: "…, A or B?", "A vs B:",
#: "between A and B", "compare A and B", "both A and B <verb>".
_PAIRS = (
    re.compile(r",\s*(?:the\s+)?([^,?]{2,60}?)\s+or\s+(?:the\s+)?([^,?]{2,60}?)\s*\?\s*$", re.I),
    re.compile(r"^\s*([^\s:,]+(?:\s+[^\s:,]+){0,3}?)\s+(?:vs\.?|versus)\s+([^:,?]{2,60}?)\s*[:,?]", re.I),
    re.compile(r"\bbetween\s+(?:the\s+)?([^,?]{2,60}?)\s+and\s+(?:the\s+)?([^,?—–]{2,60}?)\s*(?:,|\?|$|\s+in\s|[—–])",
               re.I),
    re.compile(r"\bcompare\s+(?:the\s+)?([^,?]{2,60}?)\s+and\s+(?:the\s+)?([^,?—–]{2,60}?)\s*(?:[—–,?]|\s-\s|$)",
               re.I),
    re.compile(r"\bboth\s+(\S{3,60})\s+and\s+(\S{3,60})\s+(?:are|were|is|was|have|had|\w+ed|\w+en)\b", re.I))


def _with_pair(text: str, found: tuple[Entity, ...]) -> tuple[Entity, ...]:
    """``found`` with the two compared spans of a comparison's syntax added as names when no name
    found already covers them (a lower-case identifier such as ``user-api`` is a name there too)."""
    for pattern in _PAIRS:
        m = pattern.search(text)
        if not m:
            continue
        out = list(found)
        for g in (1, 2):
            span = m.group(g).strip(" \"'“”’`.")
            key = span.lower()
            if len(key) < 2 or len(span.split()) > 6 or any(e.key in key or key in e.key for e in found):
                continue
            out.append(Entity(span, "name", key))
        low = text.lower()
        return tuple(sorted(out, key=lambda e: low.find(e.key)))
    return found


@dataclass(frozen=True)
class QuestionAnalysis:
    """Everything the generic reader reads off a question."""

    text: str
    foci: tuple[Entity, ...]
    terms: tuple[str, ...]
    term_words: tuple[str, ...]
    head: str | None
    answer_type: str | None
    yes_no: bool
    comparison: bool
    kind: str | None = None
    measure: str | None = None
    direction: str | None = None
    relation: tuple[str, ...] = ()
    asked: tuple[str, ...] = ()

    def names(self) -> list[str]:
        return [e.text for e in self.foci]


def _compared(text: str, foci: tuple[Entity, ...]) -> tuple[Entity, ...]:
    """The two things compared: the last pair of foci with only "or" / "and" / "vs" / a comma
    between them, else the last two foci."""
    low = text.lower()
    pairs = []
    for i, a in enumerate(foci):
        for b in foci[i + 1:]:
            pa, pb = low.find(a.key), low.find(b.key)
            gap = low[pa + len(a.key):pb] if 0 <= pa < pb else None
            if gap is not None and re.fullmatch(r"[\s,\"“”'’]*(or|and|vs\.?|versus|,)[\s\"“”'’]*(the\s+)?", gap):
                pairs.append((a, b))
    return pairs[-1] if pairs else foci[-2:]


def _with_titles(text: str, found: tuple[Entity, ...], titles: tuple[str, ...]) -> tuple[Entity, ...]:
    """``found`` with every title in ``titles`` that the question spells out (an evidence item's
    title, when the prompt has evidence) as a name, in place of the partial names it overlaps
    ("Le roi malgré lui" is one name although only its first word is capitalised)."""
    low = text.lower()
    spans: list[tuple[int, int, Entity]] = []
    for t in sorted(set(titles), key=len, reverse=True):
        key = t.lower()
        at = low.find(key)
        end = at + len(key)
        if len(key) < 3 or at < 0 or any(a < end and at < b for a, b, _ in spans):
            continue
        if (at > 0 and low[at - 1].isalnum()) or (end < len(low) and low[end].isalnum()):
            continue
        spans.append((at, end, Entity(text[at:end], "name", key)))
    if not spans:
        return found
    placed = []
    for e in found:
        pos = low.find(e.key)
        if pos >= 0 and any(a < pos + len(e.key) and pos < b for a, b, _ in spans):
            continue  # covered by a title
        placed.append((pos, e))
    placed += [(a, e) for a, _, e in spans]
    return tuple(e for _, e in sorted(placed, key=lambda p: p[0]))


_WH = frozenset("what which who whom whose when where how".split())
_PREPOSITIONS = frozenset("in on at by for from of to with as into after about under during".split())
#: Heads that name no kind of thing ("what name", "which one"): the asked words come from around them.
_GENERIC_HEADS = frozenset("name names type kind sort one ones thing things part".split())
#: How many words next to the question word say what it asks.
ASKED_WINDOW = 4
#: Auxiliaries that may stand between an opening question word and the verb it asks about ("Who was
#: married to …", "Who has played for …").
_AUXILIARIES = frozenset("is are was were has have had been".split())


_DESCRIPTION = re.compile(r"^\s*(?:who|what|which)\s+(?:is|are|was|were)\s+the\s+((?:[a-z\-]+\s+){0,3}?[a-z\-]+)\s+"
                          r"(?:of|for|in|on|at|behind|that|who|whose)\b", re.I)


def _asked(text: str, terms: tuple[str, ...], head: str | None) -> tuple[str, ...]:
    """The stems of what a question asks, read from where its question word stands (the description it asks for,
    else the terms just before a late question word, else the last words), nearest to the question word first.
    Only "what", or a question word that opens the question, ends it or follows a preposition, counts as one."""
    termset = set(terms)
    out: list[str] = []
    desc = _DESCRIPTION.match(text)
    if desc:
        out = [stem(w) for w in reversed(desc.group(1).split()) if stem(w) in termset]
    else:
        toks = [t.lower() for t in re.findall(r"[A-Za-z0-9][\w'’\-]*", text)]
        at = next((k for k, w in enumerate(toks) if w in _WH and (w in ("what", "how") or k == 0 or k == len(toks) - 1
                                                                 or toks[k - 1] in _PREPOSITIONS)), None)
        if at is None:
            return ()
        opening = at == 0 or (at == 1 and toks[0] in _PREPOSITIONS)
        if opening:
            window = toks[-ASKED_WINDOW:]
            # a question word that is the subject, then its verb ("Who married …", "What caused …", "Who was
            # given …"): the verb is the relation asked, nearest to the question word
            k = at + 1 + (at + 1 < len(toks) and toks[at + 1] in _AUXILIARIES)
            if head is None and k < len(toks) - 1 and toks[k] not in _PREPOSITIONS and stem(toks[k]) in termset:
                out.append(stem(toks[k]))
        else:
            end = at - 1 if toks[at - 1] in _PREPOSITIONS else at
            window = toks[max(0, end - ASKED_WINDOW):end]
        out += [stem(w) for w in reversed(window) if stem(w) in termset]  # the nearest to the question word first
    if head is not None and head not in _GENERIC_HEADS:
        out.append(stem(head))
    counted = re.search(r"\bhow\s+(?:many|much)\s+([a-z]+)", text, re.I)  # "how many copies": copies are asked
    if counted and stem(counted.group(1)) in termset:
        out.append(stem(counted.group(1)))
    return tuple(dict.fromkeys(out))


@lru_cache(maxsize=8192)
def analyse(question: str, titles: tuple[str, ...] = ()) -> QuestionAnalysis:
    """Read a question (cached: the same text is analysed once per process). ``titles``: the
    titles of the evidence items shown with it (a name the question spells out is a focus)."""
    text = " ".join(question.split())
    low = text.lower()
    foci = tuple(e for e in extract(text, question=True) if not numeric(e.text))
    foci = _with_titles(text, foci, titles)
    foci = _with_pair(text, foci)
    tokens = words(text)
    yes_no = bool(_YES_NO.match(text)) and " or " not in low  # "Was A or B …?" asks which
    answer_type = next((kind for pattern, kind in _TYPES if pattern.search(text)), None)
    if yes_no:
        answer_type = None
    head = _head(text)

    joined = re.search(r"\b(or|vs\.?|versus)\b", low) is not None or re.search(r"\band\b", low) is not None
    marker = any(w in _COMPARE_WORDS for w in tokens)
    direction = next((_DIRECTION[w] for w in tokens if w in _DIRECTION), None)
    comparison = len(foci) >= 2 and joined and (marker or direction is not None or " or " in low)
    kind = measure = None
    if comparison:
        foci = _compared(text, foci)
        if "same" in tokens or "different" in tokens or "differ" in tokens:
            kind = "same"
        elif yes_no and direction is not None:
            kind = "order"  # "Was A born before B?"
        elif yes_no:
            kind = "both"
        elif direction is not None or any(w in _TIME_WORDS for w in tokens):
            kind = "select"
        else:
            kind = "plain"
        if any(w in _TIME_WORDS for w in tokens) or answer_type == "year":
            measure = "year"
            if direction is None:
                direction = "min"
        elif direction is not None or answer_type == "number":
            measure = "number"

    focus_words = {w for e in foci for w in words(e.text)}
    term_words = [w for w in content_words(text) if w not in focus_words and w not in _COMPARE_WORDS
                  and w not in _DIRECTION and not w.isdigit()]
    if answer_type is not None and head is not None:
        term_words = [w for w in term_words if w != head]  # "what year", "which city": the kind, not a term
    terms = tuple(dict.fromkeys(stem(w) for w in term_words))
    described = next(reversed(list(DESCRIBED.finditer(text))), None)  # the innermost description
    relation = ()
    if described and not comparison:  # "the coach of | the club that signed X": what is asked of the described thing
        before = {stem(w) for w in content_words(text[:described.start()])}
        relation = tuple(t for t in terms if t in before)
    return QuestionAnalysis(
        text=text, foci=foci, terms=terms, term_words=tuple(dict.fromkeys(term_words)), head=head,
        answer_type=answer_type, yes_no=yes_no, comparison=comparison, kind=kind, measure=measure,
        direction=direction, relation=relation, asked=() if comparison or yes_no else _asked(text, terms, head))
