r"""Names and identifiers in any English text, found from typography alone: ``name`` (a run of capitalised words,
joined by a few lower-case connectors), ``quoted`` (a short span in double quotes or backticks) and ``id`` (a
token mixing letters with digits or underscores, or starting with ``@``/``#``). No list of names or domain words."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rag_lab.llm.sim.text import STOPWORDS

_CONNECTORS = frozenset("of for the de da del der van von la le du di y & and in on at to a an".split())
_CAP = r"(?:[A-ZÀ-ÖØ-Þ][\w'’.\-]*[\w]|[A-ZÀ-ÖØ-Þ])"
_NAME = re.compile(rf"{_CAP}(?:\s+(?:(?:of|for|the|de|da|del|der|van|von|la|le|du|di|y|&|in|on|at|to|a|an)\s+)*{_CAP})*"
                   r"(?:\s+\d{1,3}(?![\d,.]*\d))?")
#: A code span (backticks): how technical text marks an identifier.
CODE_SPAN = r"`([^`\s][^`]{0,78}[^`\s])`"
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]|" + CODE_SPAN)
_CODE = re.compile(CODE_SPAN)
_ID = re.compile(r"(?<![\w@#])(?:[@#][A-Za-z0-9_][\w.\-]*|(?=[\w.\-]*\d)(?=[\w.\-]*[A-Za-z])[A-Za-z0-9][\w.\-]*[A-Za-z0-9]"
                 r"|[A-Za-z0-9]+_[\w]+)")
_SENTENCE_START = re.compile(r"(^|[.!?:;\"“(\[—–]\s*)$")
_MONTHS = frozenset("january february march april may june july august september october november december".split())
_DAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())


@dataclass(frozen=True)
class Entity:
    """One entity as written (``text``), its kind, and the lower-cased ``key`` used for matching."""

    text: str
    kind: str
    key: str

    @property
    def tokens(self) -> tuple[str, ...]:
        """The significant lower-cased words of the entity (no connectors, no bare punctuation)."""
        return _key_tokens(self.key)

    @property
    def full(self) -> bool:
        """A full name (two significant words or more) or a quoted title: surer to name one thing than a lone word."""
        return len(self.tokens) >= 2 or self.kind == "quoted"


@lru_cache(maxsize=65536)
def _key_tokens(key: str) -> tuple[str, ...]:
    return tuple(t for t in re.findall(r"[\w'’]+", key) if t not in _CONNECTORS and len(t) > 1)


def _trim(span: str) -> tuple[str, int]:
    """Drop leading function words ("The", "Which", "In") and trailing connectors; a possessive
    ``'s`` goes. Returns the name and how many characters were dropped in front."""
    tokens = span.split()
    dropped = 0
    while tokens and (tokens[0].lower().strip("'’") in STOPWORDS or tokens[0].lower() in _MONTHS | _DAYS):
        dropped += len(tokens[0]) + 1
        tokens = tokens[1:]
    while tokens and tokens[-1].lower() in _CONNECTORS:
        tokens = tokens[:-1]
    text = re.sub(r"['’]s$", "", " ".join(tokens)).strip(".-")
    return text, dropped


@lru_cache(maxsize=65536)
def extract(text: str, question: bool = False) -> tuple[Entity, ...]:
    """Entities of ``text`` in order of first appearance, without duplicates. In a ``question`` a capitalised word
    opening the text may be a name; in running text it is not (unless it repeats inside a sentence elsewhere)."""
    found: list[tuple[int, Entity]] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, entity: Entity) -> None:
        if any(start < e and s < end for s, e in taken):
            return
        taken.append((start, end))
        found.append((start, entity))

    for m in _QUOTED.finditer(text):
        g = 1 if m.group(1) is not None else 2
        inner = m.group(g).strip()
        if inner:
            add(m.start(g), m.end(g), Entity(inner, "quoted", inner.lower()))
    for m in _ID.finditer(text):
        token = m.group(0).rstrip(".")
        if re.fullmatch(r"\d[\d.,]*|\d+(st|nd|rd|th|s)", token, re.I):
            continue
        add(m.start(), m.start() + len(token), Entity(token, "id", token.lower()))
    for m in _NAME.finditer(text):
        name, dropped = _trim(m.group(0))
        start = m.start() + dropped
        if len(name) < 2 or name.lower() in STOPWORDS:
            continue
        single = " " not in name
        if single and dropped == 0 and not question and bool(_SENTENCE_START.search(text[max(0, start - 3):start])):
            continue
        if single and name.isupper() and len(name) <= 2:
            continue
        add(start, start + len(name), Entity(name, "name", name.lower()))
    found.sort(key=lambda pair: pair[0])
    seen: set[str] = set()
    out = []
    for _, e in found:
        if e.key not in seen:
            seen.add(e.key)
            out.append(e)
    return tuple(out)


def numeric(text: str) -> bool:
    """Whether ``text`` is only digits, spaces and number punctuation (a number, a date, a range): never a name."""
    return re.fullmatch(r"[\d\s,.\-–]+", text) is not None


@lru_cache(maxsize=65536)
def whole_words(key: str) -> re.Pattern[str]:
    """``key`` as whole words, in any case (compiled once a key: the ``re`` module's own cache holds 512)."""
    return re.compile(r"(?<![\w])" + re.escape(key) + r"(?![\w])", re.IGNORECASE)


def code_spans(text: str) -> list[str]:
    """The spans ``text`` writes as code (between backticks)."""
    return _CODE.findall(text)


def mentions(text: str, entity: Entity) -> bool:
    """Whether ``text`` names ``entity``: the whole name, or every significant word of a
    multi-word name (``Nolan's`` film names ``Christopher Nolan`` only with both words)."""
    if whole_words(entity.key).search(text):
        return True
    tokens = entity.tokens
    if len(tokens) >= 2:
        return all(whole_words(t).search(text) for t in tokens)
    return False
