"""Reading numbered evidence against a question with generic signals only (focus names, title links between
items, question terms, values of the expected kind, MiniLM similarity). For a sentence ``s`` of item ``i``::

    support(s) = TERM_W · terms(s ∪ title(i)) + SIM_W · sim(question, s or i) + TYPE_W · typed(s)
                 + FOCUS_W · (i names a focus or is linked from an item that does)

An item *relates* to the question when it names a focus or its similarity is at least :data:`SIM_RELATED`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from rag_lab.llm.prompts import EvidenceItem
from rag_lab.llm.sim.names import Entity, extract, mentions, numeric, whole_words
from rag_lab.llm.sim.question import QuestionAnalysis
from rag_lab.llm.sim.similarity import Similarity
from rag_lab.llm.sim.text import STOPWORDS, content_stems, numbers, sentences, stem, with_equivalents, years

SIM_RELATED = 0.30
#: A sentence gains up to ASKED_W for holding what the question asks (the words at its question word).
ASKED_W = 0.2
TERM_W, SIM_W, TYPE_W, FOCUS_W = 0.45, 0.45, 0.35, 0.15
#: A sentence whose only new names are other items' subjects is a link to follow, not the answer: it
#: loses LINK_W (the answer to a chained question is read in the linked item).
LINK_W = 0.15
#: How many next-hop names in a row may reach no item before the chain stops following names in the text
#: (measured: trying the next-best names when the best one reaches nothing, 3 in a row, links distractors —
#: MuSiQue strict at one round 0.060 → 0.020 and world two-hop gold-only 0.867 → 0.767 — so only the best).
BRIDGE_TRIES = 1
#: Support a sentence needs before the controller calls the evidence sufficient.
SUFFICIENT = 0.62
#: A next-hop name loses NEAR_W per word between it and the nearest question term, up to NEAR_CAP words.
NEAR_W, NEAR_CAP = 0.05, 10
#: A next-hop name gains STRENGTH_W times the strength of the item naming it (:meth:`Evidence.strength`) and
#: DEPTH_W per hop of that item along the chain (the chain goes on from where it got to).
STRENGTH_W, DEPTH_W = 0.5, 0.3
#: Lower-case words after which a capitalised word is still a name, not a modifier ("Aqua is", "Tulsa in").
_NOT_HEAD = tuple(sorted(STOPWORDS | {"born", "died", "became", "won", "played", "released", "founded"}))


@lru_cache(maxsize=8192)
def _before_a_noun(word: str) -> re.Pattern[str]:
    """``word`` written before a lowercase word that is not one of :data:`_NOT_HEAD` ("American wrestler")."""
    return re.compile(r"(?<![\w-])" + re.escape(word) + r"\s+(?!(?:" + "|".join(_NOT_HEAD) + r")\b)[a-z][a-z\-]+")


_PREPOSITION = re.compile(r"\s+(?:in|on|at|to|from)\s+")
_DATE_WORD = re.compile(r"(?:january|february|march|april|may|june|july|august|september|october|november|december"
                        r"|\d+)$", re.I)
_NUMBER_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                            "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
                                            .split())}


def title_label(title: str) -> str:
    """``title`` without its disambiguating parenthesis ("Giant (1956 film)" → "Giant"; "" when nothing else is left)."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", title).strip()


@dataclass(frozen=True)
class Item:
    """One evidence item: its number, title, text, sentences and what they name."""

    n: int
    title: str
    text: str
    sentences: tuple[str, ...]
    sentence_stems: tuple[frozenset[str], ...]
    stems: frozenset[str]
    entities: tuple[Entity, ...]

    @property
    def full(self) -> str:
        return f"{self.title}. {self.text}" if self.title else self.text

    @cached_property
    def label(self) -> str:
        """The title without a disambiguating parenthesis (:func:`title_label`), or the title when that is all."""
        return title_label(self.title) or self.title

    def said(self, j: int) -> frozenset[str]:
        """The stems of sentence ``j`` with those of the title: what the sentence says of the item's subject."""
        return self.sentence_stems[j] | content_stems(self.title)


@lru_cache(maxsize=16384)
def parse_item(n: int, title: str, text: str) -> Item:
    sents = tuple(sentences(text))
    stems = tuple(frozenset(content_stems(s)) for s in sents)
    all_stems = frozenset(content_stems(title)).union(*stems) if stems else frozenset(content_stems(title))
    return Item(n, title, text, sents, stems, all_stems, extract(f"{title}. {text}"))


def hop_name(e: Entity) -> Entity | None:
    """``e`` as a next-hop search target: a name cut at its first lower-case preposition, with
    trailing dates dropped; None when nothing name-like is left (a date, a number)."""
    text = e.text if e.kind == "quoted" else _PREPOSITION.split(e.text)[0]
    words = text.split()
    while words and _DATE_WORD.fullmatch(words[-1].strip(",.")):
        words.pop()
    text = " ".join(words).strip(" ,.")
    if not text or numeric(text):
        return None
    return e if text == e.text else Entity(text, e.kind, text.lower())


@dataclass(frozen=True)
class Candidate:
    """A sentence read as a possible answer, with its support."""

    i: int
    j: int
    text: str
    support: float
    typed: bool
    terms: float


_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}


@lru_cache(maxsize=16384)
def number_values(text: str) -> tuple[float, ...]:
    """Numbers written with digits (scaled by a following thousand / million / billion) or as
    small number words ("three acts")."""
    out = []
    for v, pos in numbers(text):
        nxt = re.match(r"\s*([a-z]+)", text[pos:].split(None, 1)[1] if len(text[pos:].split(None, 1)) > 1 else "")
        out.append(v * _SCALE.get(nxt.group(1).lower(), 1.0) if nxt else v)
    out += [float(_NUMBER_WORDS[w]) for w in re.findall(r"[a-z]+", text.lower()) if w in _NUMBER_WORDS]
    return tuple(out)


class Evidence:
    """Numbered evidence read against one question (see the module doc)."""

    def __init__(self, qa: QuestionAnalysis, items: list[EvidenceItem], similarity: Similarity | None,
                 sentence_items: int = 4) -> None:
        self.qa = qa
        self._typed: dict[str, tuple[str, ...]] = {}
        self.items = [parse_item(it.n, it.title, it.text) for it in items]
        self._similarity = similarity
        if similarity is not None and self.items:
            self.item_sim = similarity.to(qa.text, [p.full for p in self.items])
        else:
            self.item_sim = [0.0] * len(self.items)
        self.sentence_sim: dict[tuple[int, int], float] = {}
        ranked = sorted(range(len(self.items)), key=lambda i: -self.item_sim[i])
        self._embed_sentences(ranked[:sentence_items])
        self.names = [[f for f in qa.foci if mentions(it.full, f)] for it in self.items]
        # each asked stem with the stems that name the same relation ("marri": wife, husband, …), once per question
        self.asked_as = {t: with_equivalents({t}) for t in qa.asked}
        # item i links to item k when i's text names k's title (the way encyclopedia pages link)
        self.links = [[k for k, other in enumerate(self.items) if k != i and self._names_title(it.text, other)]
                      for i, it in enumerate(self.items)]
        # the hop at which each item is reached from the question's names: 0 names a focus, 1 is linked
        # from an item that does, 2 from a hop-1 item… (a chain of lookups, as far as the evidence goes)
        self.hop: dict[int, int] = {i: 0 for i in range(len(self.items)) if self.names[i]}
        frontier = list(self.hop)
        while frontier:
            nxt = []
            for k in frontier:
                for i in self.links[k]:
                    if i not in self.hop:
                        self.hop[i] = self.hop[k] + 1
                        nxt.append(i)
            frontier = nxt
        self._link_bridges()

    def _link_bridges(self) -> None:
        """Follow the chain through a name the text points to: an item that names the next-hop name an item of the chain
        points to (:meth:`bridge`) is the next hop even when its title is another name — a page about someone's wife
        names him in its text, not in its title. The chain goes on from each item reached, as far as the evidence goes,
        and stops when the best name reaches no item (:data:`BRIDGE_TRIES`)."""
        passed: set[str] = set()
        misses = 0
        while misses < BRIDGE_TRIES and len(self.hop) < len(self.items):  # an item left to reach
            found = self.bridge(passed=frozenset(passed))
            if found is None:
                return
            name, source, _ = found
            passed.add(name.lower())
            pattern = whole_words(name)
            reached = [k for k, it in enumerate(self.items) if k not in self.hop and pattern.search(it.text)]
            misses = misses + 1 if not reached else 0
            for k in reached:
                self.hop[k] = self.hop[source] + 1
                self.links[source].append(k)

    def strength(self, i: int) -> float:
        """How surely item ``i`` is about what the question names: its similarity to the question, the
        names of the question it holds (a name of several words counts more than one word), and whether its
        title is one of them; a later hop of the chain is as sure as the item that links to it."""
        named = sum(1.0 if f.full else 0.5 for f in self.names[i])
        about = any(self.about(i, f) for f in self.qa.foci)
        own = max(0.0, self.item_sim[i]) + 0.15 * min(named, 3.0) + (0.2 if about else 0.0)
        depth = self.hop.get(i, 0)
        # a later hop is as sure as the item that led to it
        parents = [self.strength(k) for k in range(len(self.items)) if i in self.links[k] and self.hop.get(k, depth) < depth]
        return max([own, *parents])

    @staticmethod
    def _names_title(text: str, other: Item) -> bool:
        label = other.label
        return len(label) > 2 and whole_words(label).search(text) is not None

    def _embed_sentences(self, indices: list[int]) -> None:
        if self._similarity is None:
            return
        keys = [(i, j) for i in indices for j in range(len(self.items[i].sentences))]
        if keys:
            sims = self._similarity.to(self.qa.text, [self.items[i].sentences[j] for i, j in keys])
            self.sentence_sim.update(zip(keys, sims, strict=True))

    # --- what items are about ----------------------------------------------------------------

    def about(self, i: int, focus: Entity) -> bool:
        """Item ``i`` names ``focus`` in its title, or its title is named by the focus."""
        title = self.items[i].label.lower()
        return focus.key in title or (len(title) > 2 and title in focus.key)

    def anchored(self, i: int) -> bool:
        """Item ``i`` names a focus, or is reached from one that does by links (a later hop)."""
        return i in self.hop

    def related(self, i: int) -> bool:
        return bool(self.names[i]) or self.item_sim[i] >= SIM_RELATED

    def answer_items(self) -> list[int]:
        """The items an answer is read from: those related to the question — and when the question names
        something and some item is anchored to it (names it, or is linked from one that does), only those:
        a sentence about another subject is no answer about this one."""
        related = [i for i in range(len(self.items)) if self.related(i) or self.anchored(i)]
        anchored = [i for i in related if self.anchored(i)]
        return anchored if self.qa.foci and anchored else related

    # --- sentences as answers ------------------------------------------------------------------

    def answers(self) -> list[Candidate]:
        """The sentences of :meth:`answer_items` as answers, best first: when the question expects a kind of value,
        those that hold one (all of them when none does)."""
        found = self.candidates(self.answer_items())
        if self.qa.answer_type is not None:
            found = [c for c in found if c.typed] or found
        return found

    def answering(self, found: list[Candidate]) -> Candidate | None:
        """The sentence of ``found`` that says what is asked: the best that does not leave it open
        (:meth:`leaves_asked_open`), else the best; None when ``found`` is empty."""
        return next((c for c in found if not self.leaves_asked_open(c)), found[0]) if found else None

    def typed_values(self, text: str) -> list[str]:
        """The values of the expected kind in ``text`` that the question does not hold (a year, a number,
        a full name for "who", a name after a preposition of place for "where", any name, identifier or
        number for "which <noun>"), as written (read once a text: an answer's candidates ask again)."""
        if text not in self._typed:
            self._typed[text] = tuple(self._read_typed_values(text))
        return list(self._typed[text])

    def _read_typed_values(self, text: str) -> list[str]:
        t = self.qa.answer_type
        if t == "year":
            return [str(y) for y in years(text) if str(y) not in self.qa.text]
        nums = [f"{v:g}" for v in number_values(text) if not (v.is_integer() and str(int(v)) in self.qa.text)]
        if t == "number":
            return nums
        new = [e for e in extract(text) if not mentions(self.qa.text, e)]
        fresh = [e for e in new if e.kind in ("name", "quoted")]
        if t is None and self.qa.head is not None:  # "which river", "which label": a name, an identifier or a number
            return [e.text for e in (*fresh, *(e for e in new if e.kind == "id"))] + nums
        if t == "person":  # a full name: two capitalised words or more
            return [e.text for e in fresh if len(e.tokens) >= 2]
        if t == "place":  # a name after a preposition of place ("in Tulsa", "at Schofield Barracks")
            return [e.text for e in fresh
                    if re.search(r"\b(?:in|at|from|near|of|to|outside|across)\s+(?:the\s+)?" + re.escape(e.text), text)]
        return []

    def typed(self, text: str) -> bool:
        """Whether ``text`` holds a value of the expected kind that the question does not hold."""
        return bool(self.typed_values(text))

    def links_only(self, i: int, text: str) -> bool:
        """Whether every value of the expected kind in ``text`` (item ``i``) is the subject (title) of
        another evidence item: the sentence names the next hop, the answer is read there."""
        found = self.typed_values(text)
        labels = {it.label.lower() for k, it in enumerate(self.items) if k != i}
        return bool(found) and all(v.lower() in labels for v in found)

    def chain_terms(self, c: Candidate) -> float:
        """The share of the question's terms that candidate ``c`` covers together with the chain that
        leads to its item (the items of earlier hops): in a chain each hop states its own part."""
        stems = set(self.items[c.i].said(c.j))
        depth = self.hop.get(c.i)
        if depth:
            for k, h in self.hop.items():
                if h < depth:
                    stems |= self.items[k].stems
        return self.term_share(stems)

    def covers_relation(self, c: Candidate) -> bool:
        """Whether candidate ``c`` (with its item's title) holds a term of what the question asks of the
        thing it describes (:attr:`QuestionAnalysis.relation`); True when the question describes nothing or
        when ``c`` comes from a later hop (the item the description led to)."""
        if not self.qa.relation or self.hop.get(c.i, 0) >= 1:  # a later hop: the described thing was followed
            return True
        return any(t in self.items[c.i].said(c.j) for t in self.qa.relation)

    def asked_share(self, stems: frozenset[str]) -> float:
        """The share of what the question asks (:attr:`QuestionAnalysis.asked`) that ``stems`` hold (0 when
        it asks nothing in particular)."""
        asked = self.asked_as
        return sum(1 for same in asked.values() if same & stems) / len(asked) if asked else 0.0

    def leaves_asked_open(self, c: Candidate) -> bool:
        """Whether candidate ``c`` (with its item's title) holds none of what the question asks
        (:attr:`QuestionAnalysis.asked`; the noun of a typed question — "what city" — is the value's
        kind, not a word the answer must repeat), or lacks the word next to the question word (the relation
        asked: "created" in "a series created by who"): it says something else about the question's names."""
        typed_head = {stem(self.qa.head)} if self.qa.head and self.qa.answer_type else set()
        need = [t for t in self.qa.asked if t not in typed_head]
        if not need:
            return False
        stems = self.items[c.i].said(c.j)
        head = stem(self.qa.head) if self.qa.head else None
        nearest = next((t for t in need if t != head), None)  # the word at the question word: the relation asked
        said = {t for t in need if self.asked_as[t] & stems}  # in its own words or another name of the relation
        return not said or (nearest is not None and nearest not in said)

    def term_share(self, stems: frozenset[str] | set[str]) -> float:
        terms = self.qa.terms
        if not terms:
            return 1.0
        weights = {t: (2.0 if (self.qa.head and t.startswith(self.qa.head[:4])) or t in self.qa.relation
                       or t in self.qa.asked else 1.0) for t in terms}
        return sum(w for t, w in weights.items() if t in stems) / sum(weights.values())

    def candidates(self, items: list[int] | None = None) -> list[Candidate]:
        """Every sentence of ``items`` (default: all) scored as an answer, best first."""
        out = []
        for i in items if items is not None else range(len(self.items)):
            item = self.items[i]
            focus = 1.0 if self.anchored(i) else 0.0
            for j, sent in enumerate(item.sentences):
                said = item.said(j)
                terms = self.term_share(said)
                sim = self.sentence_sim.get((i, j), self.item_sim[i] * 0.8)
                typed = self.typed(sent)
                expected = self.qa.answer_type is not None or (self.qa.head is not None and not self.qa.yes_no)
                support = (TERM_W * terms + SIM_W * max(0.0, sim) + (TYPE_W * typed if expected else TYPE_W * 0.5)
                           + FOCUS_W * focus - 0.01 * j - (LINK_W if typed and self.links_only(i, sent) else 0.0)
                           + ASKED_W * self.asked_share(said))
                out.append(Candidate(i, j, sent, round(support, 4), typed, terms))
        out.sort(key=lambda c: (-c.support, c.i, c.j))
        return out

    def best(self, items: list[int] | None = None) -> Candidate | None:
        found = self.candidates(items)
        return found[0] if found else None

    def bridge(self, exclude: list[int] = (), passed: frozenset[str] = frozenset()) -> tuple[str, int, frozenset[str]] | None:
        """A name the evidence about the question's foci points to but no item is about: the best next-hop target, with
        the item it came from and the stems of the sentence that names it (what that hop already covers). It comes from
        the most question-like sentence that holds such a name; a name is cut at a lower-case preposition
        (``Arrowhead Stadium in Kansas City`` → ``Arrowhead Stadium``, ``YouTube on July 19`` → ``YouTube``), as a
        preposition joins two names more often than it sits inside one. ``passed``: names (lower-case) not to return."""
        covered = {it.label.lower() for it in self.items} | passed
        question_keys = {f.key for f in self.qa.foci}
        best: tuple[tuple[int, float], str, int, frozenset[str]] | None = None
        for c in self.candidates([i for i in self.hop if i not in exclude]):
            for e in extract(c.text):
                if e.kind not in ("name", "quoted"):
                    continue
                e = hop_name(e)
                if e is None or e.key in covered or len(e.key) < 3:
                    continue
                if any(e.key in k or k in e.key for k in question_keys) or mentions(self.qa.text, e):
                    continue
                # a full name or a title is a better next hop than a lone capitalised word, and a name
                # written next to the question's own words is what the sentence says about the asked link
                # and the chain goes on from where it got to: a name in a later-hop item comes first
                if re.search(r"[=?<>{}|]", e.text):
                    continue  # markup or a question, not a name
                if len(e.tokens) == 1 and e.kind == "name" and _before_a_noun(e.text).search(c.text):
                    continue  # one capitalised word before a common noun modifies it ("American wrestler")
                score = (c.support + (0.3 if e.full else 0.0)
                         - NEAR_W * self.distance_to_terms(c.text, e.text)
                         + STRENGTH_W * self.strength(c.i) + DEPTH_W * self.hop[c.i])
                if best is None or score > best[0]:
                    best = (score, e.text, c.i, self.items[c.i].said(c.j))
        return (best[1], best[2], best[3]) if best else None

    def distance_to_terms(self, sentence: str, name: str) -> int:
        """Words between ``name`` and the nearest of the question's terms in ``sentence`` (at most
        :data:`NEAR_CAP`; the cap when the sentence holds no term)."""
        tokens = re.findall(r"[\w'’]+", sentence)
        name_tokens = re.findall(r"[\w'’]+", name)
        width = len(name_tokens)
        at = next((i for i in range(len(tokens)) if tokens[i:i + width] == name_tokens), None)
        terms = set(self.qa.terms)
        hits = [i for i, t in enumerate(tokens) if stem(t.lower()) in terms]
        if at is None or not hits:
            return NEAR_CAP
        return min(NEAR_CAP, *(min(abs(i - at), abs(i - (at + width - 1))) for i in hits))

    def values(self, i: int) -> list[tuple[str, float]]:
        """``(sentence, value)`` pairs of item ``i`` for a comparison by year or by number, the
        sentences that hold a question term first."""
        item = self.items[i]
        out: list[tuple[float, str, float]] = []
        for j, sent in enumerate(item.sentences):
            found = years(sent) if self.qa.measure == "year" else number_values(sent)
            if self.qa.measure == "number":
                found = [v for v in found if not (1500 <= v <= 2099 and float(v).is_integer())] or found
            if not found:
                continue
            rank = self.term_share(item.sentence_stems[j]) - 0.05 * j
            out.append((rank, sent, float(found[0])))
        out.sort(key=lambda x: -x[0])
        return [(s, v) for _, s, v in out]


def side(ev: Evidence, focus_index: int) -> int | None:
    """The item that states the compared fact for one side of a comparison: an item about the focus (its title) before
    one that merely names it; with a year/number comparison it must hold such a value."""
    focus = ev.qa.foci[focus_index]
    order = sorted(range(len(ev.items)), key=lambda i: (not ev.about(i, focus), focus not in ev.names[i],
                                                         -ev.item_sim[i]))
    for i in order:
        if not (ev.about(i, focus) or focus in ev.names[i]):
            continue
        if ev.qa.measure is None or ev.values(i):
            return i
    return None
