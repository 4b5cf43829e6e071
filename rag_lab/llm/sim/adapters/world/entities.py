"""Entities and identifiers the simulator can see in a text, found with general regexes.

Kinds (all general conventions of engineering and encyclopedic writing):

* ``slug``    hyphenated lower-case names (``ledger-sync``, ``badger-2``): services, hosts, repos;
* ``code``    UPPER_SNAKE identifiers (``ENABLE_FAST_REFUND``): flags, config keys, constants;
* ``ticket``  ``ABC-123`` tracker ids (``INC-1234``);
* ``handle``  ``@handle`` chat / social handles;
* ``channel`` ``#channel`` chat channels;
* ``version`` dotted versions (``3.14.0``);
* ``date``    calendar dates (ISO or written out), keyed as ISO ``YYYY-MM-DD``;
* ``name``    capitalised multi-word names (``Team Aurora``, ``Dana Ortiz``, ``Arthur's Magazine``);
* ``word``    a single capitalised word inside a sentence (``Kotlin``, ``Nairobi``, ``Indigo``).

``primary`` entities (everything but ``word``; ``word`` only when nothing else is there) are the
foci of a question; the rest are extra signal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rag_lab.llm.sim.adapters.world.text import GENERIC_NOUNS, STOPWORDS, dates

#: Capitalised words that start sentences or questions without naming anything.
_COMMON_CAPITALISED = frozenset(
    """between compare among according during after before since until while per hey hi ok okay also
    yes no what's who's where's how's that's it's there's here here's note see please thanks incident
    summary root severity release rename launching changes heads attendees next brief questions
    internally under customers support marketing update old logs restart dashboards turning production
    pages mitigated resolved introduced added defined started joined reach chat based escalations
    most clients state rollout last archived superseded weekly sync system override
    monday tuesday wednesday thursday friday saturday sunday january february march april may june
    july august september october november december""".split()
) | STOPWORDS

#: Hyphenated compounds of everyday English, never names.
_COMMON_HYPHEN_PARTS = frozenset(
    """well long short high low self so non re co pre post per multi inter intra in on off up down built
    read write real full part first second third one two three four five six seven eight nine ten day
    week month year hour minute time end state left right open close half all any ever never top mid
    cross sub semi anti over under out by e x""".split()
)
#: Second halves of everyday compounds ("TLS-only", "long-running", "cloud-based").
_COMMON_HYPHEN_TAILS = frozenset(
    """only based wide free like aware level time day days term running related specific friendly ready
    side facing owned driven oriented safe proof scale style""".split()
)

_TICKET = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]{1,9}-\d+(?![\w-])")
_CODE = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w-])")
_HANDLE = re.compile(r"(?<![\w@])@[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?")
_CHANNEL = re.compile(r"(?<![\w#&])#[A-Za-z][A-Za-z0-9_-]*[A-Za-z0-9]")
_VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+\.\d+(?:[-+.][0-9A-Za-z]+)*(?![\w.]*\d)")
_SLUG = re.compile(r"(?<![\w@#/.\-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w\-])")
_CAPWORD = r"(?:[A-Z][a-z]*[A-Z][A-Za-z]+|[A-Z][a-z0-9]+(?:['’][a-z]+)?|[A-Z]{2,5}(?![_\-\w]))"
_CONNECTOR = r"(?:of|for|the|de|da|del|der|van|von|la|le|du|&)"
_NAME = re.compile(rf"(?<![\w@#\-]){_CAPWORD}(?:\s+(?:{_CONNECTOR}\s+)?{_CAPWORD})*(?:(?<=[a-z])\s+\d{{1,2}}(?![\d.,:%]?\w))?")
_SENTENCE_START = re.compile(r"(^|[.!?;\"“(\[—–]\s*|\s[-–—]\s)$")

PRIMARY_KINDS = frozenset({"slug", "code", "ticket", "handle", "channel", "version", "date", "name"})
#: Kinds that can be a bridge to a next hop (a thing with its own page), by preference.
BRIDGE_KINDS = ("name", "slug", "code", "ticket", "word")


@dataclass(frozen=True)
class Entity:
    """One entity as written (``text``), its kind, and the lower-cased ``key`` used for matching."""

    text: str
    kind: str
    key: str

    @property
    def primary(self) -> bool:
        return self.kind in PRIMARY_KINDS


def _slug_ok(slug: str) -> bool:
    pieces = slug.split("-")
    if all(p in _COMMON_HYPHEN_PARTS or p.isdigit() for p in pieces):
        return False
    if len(pieces) == 2 and (pieces[0] in _COMMON_HYPHEN_PARTS or pieces[1] in _COMMON_HYPHEN_TAILS):
        return False
    return True


def _at_sentence_start(text: str, start: int) -> bool:
    return bool(_SENTENCE_START.search(text[max(0, start - 3) : start])) or start == 0


def _trim_name(name: str) -> tuple[str, int]:
    """Drop leading common words (``The``, ``Which``…) and a trailing possessive; returns the
    name and how many characters were dropped at the front."""
    tokens = name.split()
    dropped = 0
    while tokens and (tokens[0].lower().strip("'’") in _COMMON_CAPITALISED or tokens[0].lower() in STOPWORDS):
        dropped += len(tokens[0]) + 1
        tokens = tokens[1:]
    while tokens and tokens[-1].lower() in {"of", "for", "the", "de", "da", "del", "der", "van", "von", "la",
                                             "le", "du", "&"}:
        tokens = tokens[:-1]
    text = " ".join(tokens)
    text = re.sub(r"['’]s$", "", text)
    return text, dropped


@lru_cache(maxsize=32768)
def extract(text: str, question: bool = False) -> tuple[Entity, ...]:
    """Entities in ``text``, in order of first appearance, without duplicates. With
    ``question=True`` a capitalised word opening the text may be a name ("Kestrel folks — …")."""
    found: list[tuple[int, Entity]] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, entity: Entity) -> None:
        if any(start < e and s < end for s, e in taken):
            return
        taken.append((start, end))
        found.append((start, entity))

    for pattern, kind in ((_TICKET, "ticket"), (_CODE, "code"), (_HANDLE, "handle"), (_CHANNEL, "channel"),
                          (_VERSION, "version")):
        for m in pattern.finditer(text):
            add(m.start(), m.end(), Entity(m.group(0), kind, m.group(0).lower()))
    for iso in dict.fromkeys(dates(text)):
        # dates have no single span to reserve; their key is what matters
        found.append((text.find(iso[:4]) if iso[:4] in text else len(text), Entity(iso, "date", iso)))
    for m in _SLUG.finditer(text):
        if _slug_ok(m.group(0)):
            add(m.start(), m.end(), Entity(m.group(0), "slug", m.group(0)))
    for m in _NAME.finditer(text):
        start = m.start()
        sentence_start = _at_sentence_start(text, start)
        name, dropped = _trim_name(m.group(0))
        if len(name) < 2 or name.lower() in _COMMON_CAPITALISED:
            continue
        start += dropped
        single = " " not in name
        if all(t.isupper() for t in name.split()):
            continue  # acronyms (TCP, JSON, SEV2) and shouted markers (ARCHIVED PAGE) are not names
        if single and dropped == 0 and sentence_start and not question:
            continue  # a capitalised word opening a sentence is usually just a sentence opening
        if single is False and re.fullmatch(r"\S+\s+\d{1,2}", name):
            name = name.rsplit(" ", 1)[0]  # a numbered single word ("Apollo 11") stays a word
            single = True
        kind = "word" if single else "name"
        add(start, start + len(name), Entity(name, kind, name.lower()))
    found.sort(key=lambda pair: pair[0])
    seen: set[tuple[str, str]] = set()
    out = []
    for _, e in found:
        if (e.kind, e.key) not in seen:
            seen.add((e.kind, e.key))
            out.append(e)
    return tuple(out)


def primary(entities: tuple[Entity, ...] | list[Entity]) -> list[Entity]:
    """The foci among ``entities``: primary kinds, or the single words when nothing else is there."""
    strong = [e for e in entities if e.primary and e.kind != "version"]
    if strong:
        versions = [e for e in entities if e.kind == "version"]
        return strong + versions
    return [e for e in entities if e.kind in ("word", "version")]


def significant_tokens(entity: Entity) -> tuple[str, ...]:
    """The words of a name that must all appear for a loose match (``Team Aurora`` → ``aurora``)."""
    if entity.kind not in ("name", "word"):
        return ()
    tokens = [t for t in re.split(r"\s+", entity.key) if t]
    keep = tuple(t for t in tokens if t not in STOPWORDS and t not in GENERIC_NOUNS and t not in
                 {"of", "for", "the", "de", "da", "del", "der", "van", "von", "la", "le", "du", "&"})
    return keep if keep else tuple(tokens)


@lru_cache(maxsize=65536)
def _exact_pattern(key: str, name: bool = False) -> re.Pattern[str]:
    # a name followed by a small number is another thing ("Content Boost 2" is not "Content Boost")
    tail = r"(?!\s+\d{1,2}\b)" if name else ""
    return re.compile(r"(?<![\w\-@#])" + re.escape(key) + r"(?![\w\-]*\w)" + tail + r"|(?<![\w\-@#])"
                      + re.escape(key) + r"(?=['’]s\b)", re.IGNORECASE)


@lru_cache(maxsize=65536)
def _word_pattern(token: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w\-@#])" + re.escape(token) + r"(?!\w)", re.IGNORECASE)


def mentions(text: str, entity: Entity) -> bool:
    """Whether ``text`` mentions ``entity``: the exact identifier / name, a date in any written
    form, or every significant word of a name (``the Aurora team`` mentions ``Team Aurora``)."""
    if entity.kind == "date":
        return entity.key in dates(text)
    if _exact_pattern(entity.key, entity.kind in ("name", "word")).search(text):
        return True
    tokens = significant_tokens(entity)
    if entity.kind == "name" and tokens and len(tokens) < len(entity.key.split()):
        return all(_word_pattern(t).search(text) for t in tokens)
    return False


def same(a: Entity, b: Entity) -> bool:
    """Whether two entities are the same thing: the same key, or two multi-word names with the
    same significant words (``Team Aurora`` / ``Aurora Team``)."""
    if a.key == b.key:
        return True
    if a.kind != "name" or b.kind != "name":
        return False
    ta, tb = significant_tokens(a), significant_tokens(b)
    return bool(ta) and sorted(ta) == sorted(tb)
