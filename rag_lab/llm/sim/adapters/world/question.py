"""What a question asks, read from its wording alone: foci, comparison, relation chain, the
attribute asked for, the expected kind of answer, whether it is about the present, whether it is
vague. General English question patterns; nothing corpus-specific.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from rag_lab.llm.sim.adapters.world.entities import Entity, extract, primary
from rag_lab.llm.sim.adapters.world.lexicon import TOPIC_CONCEPTS, concepts_of
from rag_lab.llm.sim.adapters.world.text import (
    GENERIC_NOUNS,
    LIGHT_VERBS,
    STOPWORDS,
    VAGUE_WORDS,
    asks_current,
    content_words,
    stem,
    words,
)

#: Nouns that name a thing with its own page (so "the <noun> that …" is a hop to another page).
ENTITY_NOUNS = frozenset(
    """service system app application team group squad unit department person people man woman
    engineer employee member owner manager lead leader company organization organisation firm
    corporation business band film movie album book song novel city country state flag feature
    switch project incident release product tool library school university college magazine
    newspaper show series game player actor actress singer writer author director artist hotel
    airport river station building family musician producer club party spouse wife husband father
    mother son daughter founder creator publisher label network channel platform vendor
    customer""".split()
)

_COMPARISON_MARKER = re.compile(
    r"\b(vs\.?|versus|compare[ds]?|comparison|difference between|differ|respectively|both|the same|either)\b",
    re.IGNORECASE,
)
MORE_WORDS = ("more", "most", "larger", "largest", "bigger", "biggest", "higher", "highest", "greater", "later",
              "latest", "newer", "newest", "younger", "youngest", "longer", "longest", "heavier", "taller",
              "recent", "recently")
LESS_WORDS = ("fewer", "fewest", "less", "least", "smaller", "smallest", "lower", "lowest", "earlier",
              "earliest", "first", "older", "oldest", "shorter", "shortest", "lighter", "before", "sooner")
_COMPARATIVE = {w: "max" for w in MORE_WORDS} | {w: "min" for w in LESS_WORDS}

_NOUN = r"([A-Za-z]+)"
#: "the service that evaluates X", "a hotel company which has …"
_RELATIVE = re.compile(rf"\b(?:the|a|an)\s+(?:[a-z]+\s+)?{_NOUN}\s+(?:that|which|who|whose)\s+", re.IGNORECASE)
#: "the service affected by X", "the team responsible for X", "the flag behind X"
_PARTICIPLE = re.compile(
    rf"\b(?:the|a|an)\s+{_NOUN}\s+(?:affected|owned|run|used|read|evaluated|managed|led|written|maintained|"
    r"directed|founded|created|hit|built|developed|produced|released|published|owning|running|hosting|"
    r"behind|responsible\s+for|in\s+charge\s+of|that\s+owns|associated\s+with|named\s+after|founded\s+by)\b",
    re.IGNORECASE,
)
#: "the team Dana Ortiz belongs to", "the company X works for"
_BELONGS = re.compile(
    rf"\b(?:the|a|an)\s+{_NOUN}\s+(?:[A-Z@][\w'’.\-]*\s+){{1,4}}(?:belongs\s+to|works\s+(?:in|on|for|at)|is\s+(?:in|on|"
    r"part\s+of|a\s+member\s+of)|reports\s+to|joined|manages|leads|owns|maintains|uses|founded|directed|wrote)\b"
)
#: "…; which language is that service in?", "…. Which service reads that flag?"
_ANAPHORA = re.compile(r"\b(?:that|this|the\s+same|said)\s+([a-z]+)\b", re.IGNORECASE)
#: "X hit one of our services. Which team owns it?"
_ONE_OF = re.compile(r"\bone\s+of\s+(?:our|the|its|their|his|her|your)\s+([a-z]+?)s?\b", re.IGNORECASE)
#: "the spouse of the director of Jaws"
_OF_THE = re.compile(rf"\bthe\s+(?:[a-z]+\s+)?([a-z]+)\s+of\s+the\s+{_NOUN}\s+(?:of|for|in|at|behind|from)\b",
                     re.IGNORECASE)
_CLAUSE_SPLIT = re.compile(r"[.;?!]\s+")

#: Expected kind of answer, from the question word or the concept asked about.
_TYPE_BY_PATTERN = (
    (re.compile(r"\b(what|which)\s+(percentage|percent|share|fraction|proportion)\b|\bhow much of\b", re.I),
     "percent"),
    (re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b|\bhow much\b", re.I), "number"),
    (re.compile(r"\b(what|which|in what|in which)\s+year\b|^\s*when\b", re.I), "year"),
    (re.compile(r"\b(what|which)\s+(city|country|town|place|state|region|continent|location)\b", re.I), "place"),
    (re.compile(r"\b(which|what)\s+(tcp\s+|network\s+)?port\b|\bon which port\b", re.I), "number"),
    (re.compile(r"^\s*(who|whom|whose)\b|[,;:—–-]\s*(who|whom)\b", re.I), "person"),
)
_TYPE_BY_CONCEPT = {"port": "number", "replica": "number", "rollout": "percent", "channel": "channel",
                    "handle": "handle", "launch": "year", "lead": "person", "birth": "year", "location": "place"}
_COMPARISON_WORDS = ("vs", "versus", "compare", "compared", "comparison", "between", "respectively", "both",
                     "either", "same", "differ", "different", "difference")
_MONTH_WORDS = ("january february march april may june july august september october november december "
                "jan feb mar apr jun jul aug sep sept oct nov dec").split()

_YES_NO = re.compile(r"^\s*(are|is|was|were|do|does|did|has|have|had|can|could|will|would|should)\b", re.I)
_AUX_WORDS = r"(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|of|in|on)"
#: The noun right after "which"/"what" ("which port", "what programming language"): the head of
#: what is asked, weighted double when matching evidence.
_WH_NOUN = re.compile(rf"\b(?:which|what)\s+((?!{_AUX_WORDS}\b)[a-z]+)(?:\s+((?!{_AUX_WORDS}\b)[a-z]+))?", re.I)


@dataclass(frozen=True)
class Chain:
    """A relation chain: the answer lies one hop away from the question's entity, through a
    ``noun`` (the kind of bridge: service, team, company…). ``link`` holds the stems that describe
    the first hop; the question's ``attribute`` stems describe the last one."""

    noun: str
    cue: str
    link: frozenset[str]


@dataclass(frozen=True)
class QuestionAnalysis:
    """Everything the simulator reads off a question."""

    text: str
    entities: tuple[Entity, ...]
    foci: tuple[Entity, ...]
    keywords: tuple[str, ...]
    attribute: frozenset[str]
    attribute_words: tuple[str, ...]
    comparison: bool
    comparison_kind: str | None
    direction: str | None
    chain: Chain | None
    answer_type: str | None
    current: bool
    vague: bool
    yes_no: bool
    values: tuple[str, ...] = field(default=())
    head: frozenset[str] = field(default=frozenset())
    context: frozenset[str] = field(default=frozenset())

    @property
    def multi_focus(self) -> bool:
        return self.comparison or self.chain is not None

    def focus_names(self) -> list[str]:
        return [e.text for e in self.foci] or list(self.keywords)


def _stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)}


def _entity_stems(entities: tuple[Entity, ...]) -> set[str]:
    out: set[str] = set()
    for e in entities:
        for w in words(e.text):
            out.add(stem(w))
    return out


def _noun(word: str) -> str:
    """A noun in the singular, as listed in :data:`ENTITY_NOUNS` ("owners" → "owner")."""
    w = word.lower()
    if w in ENTITY_NOUNS:
        return w
    if w.endswith("ies") and w[:-3] + "y" in ENTITY_NOUNS:
        return w[:-3] + "y"
    if w.endswith("s") and w[:-1] in ENTITY_NOUNS:
        return w[:-1]
    return w


def _find_chain(text: str, foci: tuple[Entity, ...]) -> Chain | None:
    """The first relation-chain cue in ``text``, with the stems of its first hop."""
    clauses = [c for c in _CLAUSE_SPLIT.split(text.strip()) if c.strip()]
    focus_keys = [e.key for e in foci]

    m = _BELONGS.search(text)
    if m and _noun(m.group(1)) in ENTITY_NOUNS:
        return Chain(stem(_noun(m.group(1))), m.group(0), frozenset(_stems(m.group(0))))
    m = _PARTICIPLE.search(text)
    if m and _noun(m.group(1)) in ENTITY_NOUNS:
        link = text[m.start():]
        return Chain(stem(_noun(m.group(1))), m.group(0), frozenset(_stems(link)))
    m = _RELATIVE.search(text)
    if m and _noun(m.group(1)) in ENTITY_NOUNS:
        after = text[m.end():]
        ends = [after.lower().find(k) + len(k) for k in focus_keys if k in after.lower()]
        # the relative clause holds the first hop when it names the focus ("the service that
        # evaluates X"); otherwise it asks the last hop ("a company that has a head office in …")
        link_text = m.group(0) + after[: max(ends)] if ends else text[: m.end(1)]
        return Chain(stem(_noun(m.group(1))), m.group(0), frozenset(_stems(link_text)))
    if len(clauses) > 1:
        last = clauses[-1]
        for pattern in (_ANAPHORA, _ONE_OF):
            for part in (last, *clauses[:-1]):
                m = pattern.search(part)
                if m and m.group(1).lower().rstrip("s") in ENTITY_NOUNS | {w.rstrip("s") for w in ENTITY_NOUNS}:
                    noun = m.group(1).lower()
                    earlier = " ".join(clauses[:-1])
                    return Chain(stem(noun), m.group(0), frozenset(_stems(earlier) | {stem(noun)}))
    m = _OF_THE.search(text)
    if m and _noun(m.group(2)) in ENTITY_NOUNS:
        return Chain(stem(_noun(m.group(2))), m.group(0), frozenset(_stems(text[m.start(2):])))
    return None


def _comparison_foci(text: str, foci: tuple[Entity, ...]) -> tuple[Entity, ...]:
    """The two things compared: the foci joined by and / or / vs, else the first two foci."""
    if len(foci) <= 2:
        return foci
    low = text.lower()
    for i, a in enumerate(foci):
        for b in foci[i + 1:]:
            if re.search(re.escape(a.key) + r".{0,12}\b(and|or|vs\.?|versus|with)\b.{0,12}" + re.escape(b.key), low):
                return (a, b)
    return foci[:2]


@lru_cache(maxsize=8192)
def analyse(question: str) -> QuestionAnalysis:
    """Read a question (cached: the same text is analysed once per process)."""
    text = " ".join(question.split())
    entities = extract(text, question=True)
    foci = tuple(primary(list(entities)))
    low = text.lower()
    tokens = words(text)

    direction = None
    for w in tokens:
        if w in _COMPARATIVE:
            direction = _COMPARATIVE[w]
            break
    marker = _COMPARISON_MARKER.search(text)
    joined = len(foci) >= 2 and bool(re.search(r"\b(or|and|vs\.?|versus|between)\b", low))
    comparison = bool(marker) and len(foci) >= 2 or (joined and (direction is not None or " or " in low
                                                                  or low.startswith(("are both", "is both"))))
    if marker and marker.group(1).lower() in ("vs", "vs.", "versus", "compare", "compared", "compares",
                                              "comparison", "difference between", "respectively"):
        comparison = True
    yes_no = bool(_YES_NO.match(text))
    kind = None
    if comparison:
        foci = _comparison_foci(text, foci)
        if "same" in tokens or "different" in tokens or "differ" in tokens:
            kind = "same"
        elif yes_no and ("both" in tokens or "either" in tokens):
            kind = "both"
        elif direction is not None:
            kind = "select"
        else:
            kind = "plain"

    chain = None if comparison else _find_chain(text, foci)

    entity_stems = _entity_stems(entities)
    removable = entity_stems | {stem(w) for w in _COMPARATIVE} | {stem(w) for w in VAGUE_WORDS}
    removable |= {stem(w) for w in _COMPARISON_WORDS}
    if any(e.kind == "date" for e in entities):
        removable |= {stem(w) for w in _MONTH_WORDS} | {e.key[:4] for e in entities if e.kind == "date"}
    removable |= {stem(w) for w in ("current", "currently", "today", "now", "right", "day", "days", "moment",
                                    "present", "latest", "still", "thing", "things", "one", "which", "go")}
    removable |= {stem(w) for w in LIGHT_VERBS}
    # a kind-noun right next to a focus names what the focus is, not what is asked
    # ("incident INC-1055", "the ledger-sync service")
    for e in foci:
        for m in re.finditer(r"(\w+)\s+" + re.escape(e.text) + r"|" + re.escape(e.text) + r"\s+(\w+)", text):
            w = (m.group(1) or m.group(2) or "").lower()
            if w in ENTITY_NOUNS or w in GENERIC_NOUNS:
                removable.add(stem(w))
    # "What caused it when <clause>?": the clause describes the event, it is not what is asked
    context: set[str] = set()
    m = re.search(r"\b(?:when|while|after|during)\b\s+(.+)$", text, re.IGNORECASE)
    if m and not re.match(r"^\s*(?:when|while|after|during|as)\b", low) and m.start() > 0:
        context = _stems(m.group(1)) - {stem(w) for w in ("caus", "fix")}
    removable |= context
    ordered: list[str] = []
    if re.match(r"^\s*why\b", low) or re.search(r"\bwhy\s+(did|does|do|was|is|were)\b", low):
        ordered.append(stem("cause"))
    if re.search(r"\bwhat\s+(?:does|do|did)\b.*\bdo\b(?!\s+to\b)", low):
        ordered.append(stem("role"))  # "what does X do?" asks for a job or a function
    for w in content_words(text):
        s = stem(w)
        if s in removable or w in STOPWORDS:
            continue
        if chain is not None and s in chain.link:
            continue
        if s not in ordered:
            ordered.append(s)
    attribute_words = [w for w in content_words(text) if stem(w) in ordered and not any(
        w in e.key.split() for e in entities)]
    # the thing a yes/no comparison checks ("written in Kotlin" → Kotlin)
    values = tuple(e.text for e in entities if e not in foci and e.kind in ("word", "name", "version"))
    attribute = [s for s in ordered if stem(s) not in {stem(v.lower()) for v in values}]
    if comparison:
        attribute = [s for s in attribute if s not in {stem(w) for w in GENERIC_NOUNS}] or attribute
    keywords: tuple[str, ...] = ()
    if not foci:
        keywords = tuple(w for w in dict.fromkeys(content_words(text))
                         if concepts_of(stem(w)) <= TOPIC_CONCEPTS and w not in GENERIC_NOUNS and w not in VAGUE_WORDS
                         and stem(w) not in removable and len(w) > 2 and not w.isdigit())
        attribute = [a for a in attribute if a not in {stem(k) for k in keywords}] or attribute

    answer_type = None
    for pattern, kind_name in _TYPE_BY_PATTERN:
        if pattern.search(text):
            answer_type = kind_name
            break
    # the kind of value, from the concept asked about: only when that concept is the head of the
    # question ("which office") or the only thing asked ("where do pages go")
    wh = _WH_NOUN.search(text)
    head_stems = {stem(w.lower()) for w in wh.groups() if w} if wh else set()
    single_unit = len({frozenset(concepts_of(a)) or frozenset({a}) for a in attribute}) == 1
    if answer_type is None:
        for s in attribute:
            if not (s in head_stems or single_unit):
                continue
            concept = next((c for c in sorted(concepts_of(s)) if c in _TYPE_BY_CONCEPT), None)
            if concept is not None:
                answer_type = _TYPE_BY_CONCEPT[concept]
                break

    head: set[str] = set()
    if wh:
        head = head_stems & set(attribute)
        if answer_type is None and wh.group(1).lower() in ENTITY_NOUNS:
            answer_type = "entity"

    # a comparison in time ("older", "launched first") compares years
    temporal = {"earlier", "earliest", "first", "older", "oldest", "later", "latest", "newer", "newest", "younger",
                "youngest", "before", "sooner", "recent", "recently"}
    if comparison and answer_type is None and any(w in temporal for w in tokens):
        answer_type = "year"
    # words that only name the kind of value asked are satisfied by a value of that kind
    type_words = {"year": {"year", "date", "age"}, "percent": {"percentag", "percent"},
                  "number": {"number", "count"}}
    if answer_type in type_words:
        attribute = [a for a in attribute if a not in type_words[answer_type]] or attribute
        head = head & set(attribute)

    vague = (not foci) or any(w in VAGUE_WORDS for w in tokens) or ("which one" in low and not comparison)
    return QuestionAnalysis(
        text=text,
        entities=entities,
        foci=foci,
        keywords=keywords,
        attribute=frozenset(attribute),
        attribute_words=tuple(dict.fromkeys(attribute_words)),
        comparison=comparison,
        comparison_kind=kind,
        direction=direction,
        chain=chain,
        answer_type=answer_type,
        current=asks_current(text),
        vague=vague,
        yes_no=yes_no,
        values=values,
        head=frozenset(head),
        context=frozenset(context),
    )
