"""Reading numbered evidence against a question: which items mention which focus, which
sentences state the asked attribute, what bridge entity a relation chain passes through, and
whether each focus is covered.

Signals, all taken from the prompt: entity mentions (:mod:`~rag_lab.llm.sim.entities`), attribute
words matched through the general synonym groups (:mod:`~rag_lab.llm.sim.lexicon`), the presence
of a value of the expected kind (a year for "when", a number for "how many"…), embedding
similarity of question and item (and, for the few items the answer role reads closely, of
question and sentence), and a page's own "archived"/date markers. Sentences that read as
instructions to the model (prompt injection) never count as evidence.

A sentence's attribute match (:meth:`Evidence.attr_score`) is the weighted share of the
question's attribute units it matches: words sharing a synonym group form one unit, the head of
the question ("which *port*") weighs 2, and an expected-kind value counts as one more unit.

Thresholds (cosine similarity of the packaged MiniLM, question vs ``"{title}. {text}"``):

* :data:`SIM_COVER` (0.62): when the question asks no particular attribute ("tell me about X"), an
  item that mentions every focus and is this similar covers it (names inflate similarity, so a
  question that does ask an attribute needs the attribute words or an expected-kind value);
* :data:`SIM_RELATED` (0.30): below this, an item that mentions no focus is unrelated;
* :data:`ATTR_COVER` (0.5): share of the question's attribute words (an expected-kind value
  counts as one word) a sentence must match to state the asked fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from rag_lab.llm.prompts import EvidenceItem
from rag_lab.llm.sim.adapters.world.entities import BRIDGE_KINDS, Entity, extract, mentions, same
from rag_lab.llm.sim.adapters.world.lexicon import concepts_of, meanings
from rag_lab.llm.sim.adapters.world.question import QuestionAnalysis
from rag_lab.llm.sim.adapters.world.text import (
    GENERIC_NOUNS,
    STOPWORDS,
    content_stems,
    dates,
    is_archived,
    is_instruction,
    numbers,
    percents,
    sentences,
    stem,
    years,
)
from rag_lab.llm.sim.vectors import Similarity

SIM_COVER = 0.62
SIM_RELATED = 0.30
ATTR_COVER = 0.5

_ALIAS_PATTERNS = (
    re.compile(r"(?P<a>[\w@#.\-]+)\s+(?:is now|was renamed(?: to)?|has been renamed(?: to)?|became|is now called)\s+"
               r"(?P<b>[\w@#.\-]+)", re.IGNORECASE),
    re.compile(r"\brenamed\s+(?P<a>[\w@#.\-]+)\s+(?:to|as)\s+(?P<b>[\w@#.\-]+)", re.IGNORECASE),
    re.compile(r"(?P<a>[\w@#.\-]+)\s*(?:→|->|=>)\s*(?P<b>[\w@#.\-]+)"),
    re.compile(r"(?P<b>[\w@#.\-]+),?\s+\(?(?:formerly|previously)(?: known as| called)?\s+(?P<a>[\w@#.\-]+)",
               re.IGNORECASE),
    re.compile(r"(?P<b>[\w@#.\-]+),?\s+\(?(?:also known as|aka|a\.k\.a\.)\s+(?P<a>[\w@#.\-]+)", re.IGNORECASE),
)
_TYPE_VALUE_KINDS = {"channel": ("channel",), "handle": ("handle",), "person": ("name",),
                     "place": ("word", "name"), "entity": ("name", "slug", "code", "word")}


@dataclass(frozen=True)
class Sentence:
    """One sentence of an evidence item with what the simulator reads off it."""

    text: str
    index: int
    stems: frozenset[str]
    meanings: frozenset[str]
    entities: tuple[Entity, ...]
    instruction: bool
    has_year: bool
    has_number: bool
    has_percent: bool


@dataclass(frozen=True)
class ParsedItem:
    """An evidence item's text cut into sentences, with its entities, its subject (what the
    page is about: the entity named in its title, else the first one in its text), whether it
    calls itself archived, and its latest ISO date."""

    title: str
    text: str
    full: str
    sentences: tuple[Sentence, ...]
    entities: tuple[Entity, ...]
    subject: Entity | None
    archived: bool
    date: str | None
    stems: frozenset[str]
    renames: tuple[tuple[str, str], ...]


def _renames(title: str, sents: list[Sentence]) -> tuple[tuple[str, str], ...]:
    """``(old name, new name)`` pairs the item states ("X is now Y", "Y, formerly X", "X → Y")."""
    out: list[tuple[str, str]] = []
    for text in (title, *(s.text for s in sents if not s.instruction)):
        for pattern in _ALIAS_PATTERNS:
            for m in pattern.finditer(text):
                a, b = m.group("a").strip(".,").lower(), m.group("b").strip(".,").lower()
                if _alias_ok(a) and _alias_ok(b) and a != b and (a, b) not in out:
                    out.append((a, b))
    return tuple(out)


def _sentence_meanings(stems: frozenset[str], text: str) -> tuple[frozenset[str], bool, bool, bool]:
    out: set[str] = set()
    for s in stems:
        out |= meanings(s)
    has_year = bool(years(text)) or bool(dates(text))
    has_percent = bool(percents(text))
    has_number = bool(numbers(text))
    if has_year:
        out.add("#year")
    if has_percent:
        out.add("#percent")
    if has_number:
        out.add("#number")
    return frozenset(out), has_year, has_number, has_percent


@lru_cache(maxsize=16384)
def parse_item(title: str, text: str) -> ParsedItem:
    """Parse one item (cached by title and text: the same chunk is parsed once per process)."""
    sents = []
    for i, s in enumerate(sentences(text)):
        stems = frozenset(content_stems(s))
        m, has_year, has_number, has_percent = _sentence_meanings(stems, s)
        sents.append(Sentence(s, i, stems, m, extract(s), is_instruction(s), has_year, has_number, has_percent))
    # the subject: an identifier or multi-word name in the title; a single capitalised word only
    # when it is the whole title ("Feature flag X" is about X, "Kestrel" about Kestrel)
    title_entities = [e for e in extract(title, question=True)
                      if e.kind not in ("date", "word", "version") or e.text.strip() == title.strip()]
    text_entities = [e for e in extract(text) if e.kind not in ("date", "version")]
    subject = title_entities[0] if title_entities else (text_entities[0] if text_entities else None)
    found_dates = dates(f"{title} {text}")
    all_stems: set[str] = set(content_stems(title))
    for sent in sents:
        all_stems |= sent.stems
    return ParsedItem(
        title=title,
        text=text,
        full=f"{title}. {text}" if title else text,
        sentences=tuple(sents),
        entities=tuple(extract(f"{title}. {text}")),
        subject=subject,
        archived=is_archived(f"{title} {text}"),
        date=max(found_dates) if found_dates else None,
        stems=frozenset(all_stems),
        renames=_renames(title, sents),
    )


@dataclass
class Focus:
    """One thing the question is about: an entity (with aliases found in the evidence), or the
    question's distinctive keywords when it names nothing."""

    label: str
    entity: Entity | None = None
    keywords: tuple[str, ...] = ()
    aliases: set[str] = field(default_factory=set)

    def mentioned_in(self, text: str, stems: frozenset[str] | set[str] | None = None) -> bool:
        if self.entity is not None and mentions(text, self.entity):
            return True
        low = text.lower()
        for alias in self.aliases:
            if re.search(r"(?<![\w\-])" + re.escape(alias) + r"(?![\w\-]*\w)", low):
                return True
        if self.keywords:
            stems = stems if stems is not None else content_stems(text)
            return any(stem(k) in stems for k in self.keywords)
        return False


@dataclass(frozen=True)
class Fact:
    """A sentence that states the asked attribute about a focus, with its evidence number."""

    n: int
    item: ParsedItem
    sentence: Sentence
    attr: float
    score: float


class Evidence:
    """Numbered evidence read against one question. ``similarity`` (optional) adds the
    question–item cosine (without it the reading is lexical only); ``sentence_items`` is how many
    items :meth:`embed_sentences` may be asked to read sentence by sentence."""

    def __init__(self, qa: QuestionAnalysis, items: list[EvidenceItem], similarity: Similarity | None,
                 sentence_items: int = 4) -> None:
        self.qa = qa
        self.numbers = [it.n for it in items]
        self.items = [parse_item(it.title, it.text) for it in items]
        self.aliases = self._aliases()
        if qa.foci:
            self.foci = [Focus(e.text, entity=e, aliases=self._alias_keys(e.key)) for e in qa.foci]
        elif qa.keywords:
            extra: set[str] = set()
            for k in qa.keywords:
                extra |= self._alias_keys(k)
            self.foci = [Focus(" ".join(qa.keywords), keywords=qa.keywords, aliases=extra)]
        else:
            self.foci = []
        self._similarity = similarity
        if similarity is not None and items:
            self.item_sim = similarity.to(qa.text, [p.full for p in self.items])
        else:
            self.item_sim = [0.0] * len(items)
        self.sentence_sim: dict[tuple[int, int], float] = {}
        self.sentence_items = sentence_items

    def embed_sentences(self, indices: list[int]) -> None:
        """Add question–sentence similarities for the sentences of items ``indices`` (one batch)."""
        if self._similarity is None:
            return
        keys = [(i, s.index) for i in indices for s in self.usable(i) if (i, s.index) not in self.sentence_sim]
        if not keys:
            return
        sims = self._similarity.to(self.qa.text, [self.items[i].sentences[j].text for i, j in keys])
        self.sentence_sim.update(zip(keys, sims, strict=True))

    # --- aliases -----------------------------------------------------------------------------

    def _aliases(self) -> dict[str, set[str]]:
        """Names the evidence says are the same thing, both ways; :attr:`renamed` keeps the
        direction (old name → new name)."""
        pairs: dict[str, set[str]] = {}
        self.renamed: dict[str, set[str]] = {}
        for item in self.items:
            for a, b in item.renames:
                pairs.setdefault(a, set()).add(b)
                pairs.setdefault(b, set()).add(a)
                self.renamed.setdefault(a, set()).add(b)
        return pairs

    def _alias_keys(self, key: str) -> set[str]:
        return set(self.aliases.get(key.lower(), set()))

    # --- reading -----------------------------------------------------------------------------

    def attr_score(self, sent: Sentence, attribute: frozenset[str] | None = None,
                   subject: Entity | None = None, typed: bool = True) -> float:
        """Share of the attribute words ``sent`` matches; a value of the expected kind counts as
        one more word (half a word for a bare name or place, which is weaker evidence)."""
        attribute = self.qa.attribute if attribute is None else attribute
        matched, total = 0.0, 0.0
        for unit, weight in _units(attribute, self.qa.head):
            total += weight
            if any(meanings(a) & sent.meanings for a in unit):
                matched += weight
        if self.qa.values and any(v.lower() in sent.text.lower() for v in self.qa.values):
            matched += 1.0  # "written in Kotlin?": a sentence naming Kotlin speaks to the attribute
        if typed and self.qa.answer_type is not None:
            matched += self.type_hit(sent, subject)
            total += 1.0
        if total == 0:
            return 1.0
        return min(1.0, matched / total)

    def type_hit(self, sent: Sentence, subject: Entity | None = None) -> float:
        """How much ``sent`` holds a value of the kind the question expects (0, 0.5 or 1)."""
        t = self.qa.answer_type
        if t is None:
            return 0.0
        if t == "year":
            return float(sent.has_year)
        if t == "percent":
            return float(sent.has_percent)
        if t == "number":
            return float(sent.has_number)
        kinds = _TYPE_VALUE_KINDS.get(t, ())
        excluded = {w for e in self.qa.entities for w in e.key.split()}
        if subject is not None:
            excluded |= set(subject.key.split())
        for e in sent.entities:
            if e.kind in kinds and not set(e.key.split()) & excluded:
                return 1.0 if e.kind in ("channel", "handle") else 0.5
        return 0.0

    def informative(self, sent: Sentence, i: int) -> bool:
        """Whether ``sent`` states a value the question does not already hold (a name, an
        identifier or a number that is neither in the question nor the page's subject)."""
        if sent.has_number and not all(str(int(v)) in self.qa.text for v, _ in numbers(sent.text)
                                       if float(v).is_integer()):
            return True
        question_keys = {e.key for e in self.qa.entities}
        subject = self.items[i].subject
        for e in sent.entities:
            if e.kind == "date" or e.key in question_keys or (subject is not None and e.key == subject.key):
                continue
            if any(f.mentioned_in(e.text) for f in self.foci):
                continue
            return True
        return False

    def mentions(self, i: int, focus: Focus) -> bool:
        item = self.items[i]
        return focus.mentioned_in(item.full, item.stems)

    def about(self, i: int, focus: Focus) -> bool:
        """Whether item ``i``'s subject is ``focus`` itself (not merely a name containing it:
        a page about "Oberoi Group" is not about "Oberoi")."""
        subject = self.items[i].subject
        if subject is None:
            return False
        if focus.entity is not None:
            return subject.key == focus.entity.key or same(subject, focus.entity) or subject.key in focus.aliases
        keys = {k.lower() for k in focus.keywords} | focus.aliases
        return subject.key in keys

    def usable(self, i: int) -> list[Sentence]:
        return [s for s in self.items[i].sentences if not s.instruction]

    def covers(self, i: int, foci: list[Focus] | None = None) -> bool:
        """Item ``i`` mentions every focus and states the asked attribute (or is very similar)."""
        foci = self.foci if foci is None else foci
        if foci and not all(self.mentions(i, f) for f in foci):
            return False
        subject = self.items[i].subject
        attr = max((self.attr_score(s, subject=subject) for s in self.usable(i)), default=0.0)
        if not foci:
            return (attr >= ATTR_COVER and self.item_sim[i] >= SIM_RELATED) or self.item_sim[i] >= SIM_COVER
        if not self.qa.attribute and self.qa.answer_type is None:
            return self.item_sim[i] >= SIM_COVER or attr >= ATTR_COVER
        return attr >= ATTR_COVER

    def related(self, i: int) -> bool:
        """Item ``i`` has anything to do with the question (mentions a focus, or is similar)."""
        return any(self.mentions(i, f) for f in self.foci) or self.item_sim[i] >= SIM_RELATED

    def freshness(self, i: int) -> float:
        """Preference for current pages: archived pages lose, and when the question asks about the
        present, later-dated pages win."""
        item = self.items[i]
        score = -0.4 if item.archived else 0.0
        if self.qa.current:
            score -= 0.6 if item.archived else 0.0
            dated = sorted({p.date for p in self.items if p.date})
            if item.date and len(dated) > 1:
                score += 0.2 * dated.index(item.date) / (len(dated) - 1)
        return score

    def fact(self, focus: Focus | None, exclude: list[Focus] = (), attribute: frozenset[str] | None = None,
             items: list[int] | None = None, strict: bool = False, min_attr: float = 0.0) -> Fact | None:
        """The best sentence stating the attribute about ``focus`` (any item when None), from items
        that mention it and with an attribute match of at least ``min_attr``. With ``strict`` (or in
        an item that also mentions one of ``exclude``) a sentence must name ``focus`` itself or sit
        in a page whose subject is ``focus``; sentences naming one of ``exclude`` never count
        unless they also name ``focus``."""
        best: Fact | None = None
        for i in items if items is not None else range(len(self.items)):
            if focus is not None and not self.mentions(i, focus):
                continue
            item_about = focus is not None and self.about(i, focus)
            shared = strict or any(self.mentions(i, f) for f in exclude)
            for sent in self.usable(i):
                in_sentence = focus is not None and focus.mentioned_in(sent.text, sent.stems)
                if focus is not None and shared and not (in_sentence or item_about):
                    continue
                if any(f.mentioned_in(sent.text, sent.stems) for f in exclude) and not in_sentence:
                    continue
                attr = self.attr_score(sent, attribute, self.items[i].subject)
                if attr < min_attr:
                    continue
                score = (attr + 0.3 * self.item_sim[i] + 0.3 * self.sentence_sim.get((i, sent.index), 0.0)
                         + 0.25 * in_sentence + 0.2 * item_about + 0.15 * self.informative(sent, i)
                         + self.freshness(i) - 0.02 * sent.index)
                if best is None or score > best.score:
                    best = Fact(self.numbers[i], self.items[i], sent, attr, score)
        return best

    # --- relation chains ----------------------------------------------------------------------

    def bridge(self) -> tuple[Entity, Fact] | None:
        """The entity the question's relation chain passes through, read from the evidence about
        the question's focus: the best-placed entity of the right kind in the sentence that best
        states the first hop."""
        chain = self.qa.chain
        if chain is None or not self.foci:
            return None
        question_entities = list(self.qa.entities)
        noun_meanings = meanings(chain.noun)
        best: tuple[float, Entity, Fact] | None = None
        for i in range(len(self.items)):
            if not all(self.mentions(i, f) for f in self.foci):
                continue
            for sent in self.usable(i):
                link = self.attr_score(sent, chain.link, typed=False) if chain.link else 0.0
                on_focus = any(f.mentioned_in(sent.text, sent.stems) for f in self.foci)
                for pos, ent in enumerate(sent.entities):
                    if ent.kind not in BRIDGE_KINDS:
                        continue
                    if any(same(ent, q) or ent.key == q.key for q in question_entities):
                        continue
                    if any(f.mentioned_in(ent.text) for f in self.foci) and ent.kind != "name":
                        continue
                    affinity = _affinity(ent, sent.text, chain.noun, noun_meanings)
                    kind_bonus = {"name": 0.2, "slug": 0.2, "code": 0.2, "ticket": 0.1}.get(ent.kind, 0.0)
                    score = (link + 0.5 * on_focus + affinity + kind_bonus + 0.3 * self.about(i, self.foci[0])
                             - 0.01 * pos - 0.02 * sent.index + self.freshness(i))
                    if best is None or score > best[0]:
                        best = (score, ent, Fact(self.numbers[i], self.items[i], sent, link, score))
        if best is None or best[0] < 0.5:
            return None
        return best[1], best[2]

    def alias_bridge(self) -> str | None:
        """The new name of a focus the question calls by an old one ("walrus is now asset-keeper")."""
        for f in self.foci:
            keys = [f.entity.key] if f.entity is not None else [k.lower() for k in f.keywords]
            for key in keys:
                for new in sorted(self.renamed.get(key, ())):
                    return new
        return None

    def best_sim(self) -> float:
        return max(self.item_sim, default=0.0)

    def any_mention(self) -> bool:
        return any(self.mentions(i, f) for i in range(len(self.items)) for f in self.foci)


@lru_cache(maxsize=8192)
def _units(attribute: frozenset[str], head: frozenset[str]) -> tuple[tuple[tuple[str, ...], float], ...]:
    """The attribute words grouped into units of meaning: words that share a synonym group count
    once ("chat channel", "rollout percentage"); a unit holding a head word weighs 2."""
    units: list[set[str]] = []
    for a in sorted(attribute):
        groups = concepts_of(a)
        merged = [u for u in units if any(concepts_of(b) & groups for b in u)] if groups else []
        unit = {a}.union(*merged) if merged else {a}
        units = [u for u in units if u not in merged] + [unit]
    return tuple((tuple(sorted(u)), 2.0 if u & head else 1.0) for u in units)


def _alias_ok(word: str) -> bool:
    """An alias must look like a name: not a function word or a generic noun."""
    return len(word) >= 3 and word not in STOPWORDS and word not in GENERIC_NOUNS and not word.isdigit()


def _affinity(ent: Entity, sentence: str, noun: str, noun_meanings: frozenset[str]) -> float:
    """How well ``ent`` fits the kind of thing the chain passes through (``noun``)."""
    tokens = [stem(t) for t in re.findall(r"[A-Za-z]+", ent.text)]
    if any(meanings(t) & noun_meanings for t in tokens):
        return 1.0
    low = sentence.lower()
    idx = low.find(ent.text.lower())
    if idx >= 0:
        before = re.findall(r"[a-z]+", low[max(0, idx - 25) : idx])[-2:]
        after = re.findall(r"[a-z]+", low[idx + len(ent.text) : idx + len(ent.text) + 25])[:2]
        if any(meanings(stem(w)) & noun_meanings for w in before + after):
            return 1.0
    it_nouns = {"servic", "system", "app", "application", "tool", "component", "platform", "databas"}
    if ent.kind == "slug" and noun in it_nouns:
        return 0.7
    if ent.kind == "code" and noun in {"flag", "switch", "featur", "setting", "config", "constant"}:
        return 0.7
    person_nouns = {"person", "engineer", "manager", "member", "lead", "leader", "director", "spous", "wife",
                    "husband", "father", "mother", "founder", "author", "writer", "actor", "singer", "owner",
                    "employe", "creator", "producer", "artist", "musician", "player"}
    if ent.kind == "name" and noun in person_nouns:
        return 0.5
    if ent.kind == "ticket" and noun in {"incident", "ticket", "issu", "bug", "outag"}:
        return 0.7
    return 0.0
