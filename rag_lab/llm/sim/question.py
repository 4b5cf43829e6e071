"""What a question asks, read from its wording with general English only: the names it
holds (foci), its remaining content words (terms), the question word and the kind of value it
expects, whether it is a yes/no question, and whether it compares two named things — and then
what it compares (a year for born / older / first / founded…, whatever the question word; a
number for more / larger / how many…) and in which direction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rag_lab.llm.sim.entities import Entity, extract
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
    (re.compile(r"\bhow\s+(many|much|long|old|tall|far|big|large)\b|\bwhat\s+(number|percentage|amount)\b", re.I),
     "number"),
    (re.compile(r"^\s*where\b|\bwhere\s+(is|was|are|were|did|does)\b|\b(what|which)\s+(city|country|state|town|"
                r"county|region|place|island|province|continent|location)\b", re.I), "place"),
    (re.compile(r"^\s*(who|whom|whose)\b|[,;:]\s*(who|whom)\b|\b(what|which)\s+(person|man|woman)\b", re.I), "person"),
)
_WH_NOUN = re.compile(r"\b(?:which|what)\s+([a-z]+)\b", re.I)
_AUX = frozenset("is are was were does do did has have had can could will would should".split())


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

    @property
    def multi_part(self) -> bool:
        return self.comparison

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


@lru_cache(maxsize=8192)
def analyse(question: str, titles: tuple[str, ...] = ()) -> QuestionAnalysis:
    """Read a question (cached: the same text is analysed once per process). ``titles``: the
    titles of the evidence items shown with it (a name the question spells out is a focus)."""
    text = " ".join(question.split())
    low = text.lower()
    foci = tuple(e for e in extract(text, question=True) if not re.fullmatch(r"[\d\s,.\-–]+", e.text))
    foci = _with_titles(text, foci, titles)
    tokens = words(text)
    yes_no = bool(_YES_NO.match(text)) and " or " not in low  # "Was A or B …?" asks which
    answer_type = next((kind for pattern, kind in _TYPES if pattern.search(text)), None)
    if yes_no:
        answer_type = None
    wh = _WH_NOUN.search(text)
    head = wh.group(1).lower() if wh and wh.group(1).lower() not in _AUX | STOPWORDS else None

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
    return QuestionAnalysis(
        text=text, foci=foci, terms=terms, term_words=tuple(dict.fromkeys(term_words)), head=head,
        answer_type=answer_type, yes_no=yes_no, comparison=comparison, kind=kind, measure=measure,
        direction=direction,
    )
