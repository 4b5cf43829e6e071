"""The controller's ideal decision with every knob off, read from the evidence in the prompt: answer, or search the next
hop. The question's parts are read by :mod:`.question`, the evidence as a chain by :mod:`.evidence`; a comparison needs
an item about each side, a lookup a sentence that holds a value of the expected kind, and while a part is still open the
next search names the bridge the chain points to (:func:`next_hop`). It stops when the question's parts are covered, not
because a round budget or a similarity says so. The rules in full: docs/backends.md, "The simulator, part by part"."""

from __future__ import annotations

from dataclasses import dataclass

from rag_lab.llm.sim.evidence import SUFFICIENT, Evidence, side
from rag_lab.llm.sim.paraphrase import keyword_query, paraphrase
from rag_lab.llm.sim.question import QuestionAnalysis
from rag_lab.llm.sim.text import normalise, stem


@dataclass(frozen=True)
class Decision:
    """A controller decision. ``partial``: a multi-part question (comparison, bridge) with some
    part covered and some missing; ``bridge``: the bridge entity the refined query carries;
    ``knobs``: the behaviour knobs that changed the ideal decision, in order."""

    action: str
    queries: tuple[str, ...] = ()
    reason: str = ""
    partial: bool = False
    bridge: str | None = None
    knobs: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        return {"action": self.action, "queries": list(self.queries), "reason": self.reason}


def fresh(candidates: list[str], searches: list[str]) -> str | None:
    """The first candidate query not already searched (compared normalised)."""
    used = {normalise(s) for s in searches}
    for c in candidates:
        c = " ".join(c.split())
        if c and normalise(c) not in used:
            return c
    return None


def searched_for(label: str, searches: list[str]) -> bool:
    """Whether a search after the first one already named ``label`` (one targeted search each)."""
    key = normalise(label)
    return any(key and key in normalise(s) for s in searches[1:])


#: Support at which, with nothing left to search, the controller answers rather than give up.
SETTLE = 0.45
#: Below this share of the question's terms in the answering sentence (and its title), a bridge the
#: evidence points to is searched before answering.
OPEN_HOP = 0.5
#: Question words a next-hop query carries after the bridge name.
HOP_WORDS = 6


def targeted(label: str, qa: QuestionAnalysis) -> list[str]:
    """Refined queries for ``label`` and the question's terms, most specific first."""
    extra = [w for w in qa.term_words if w.lower() not in label.lower()]
    return list(dict.fromkeys([" ".join([label, *extra]).strip(), f"{label} {' '.join(extra[:2])}".strip(), label]))


def next_hop(label: str, qa: QuestionAnalysis, covered: frozenset[str]) -> list[str]:
    """Queries for the next hop of a chain: the bridge name with the question's words, those the sentence naming it does
    not already cover (what is still asked about it) first, most specific query first."""
    words = [w for w in qa.term_words if w.lower() not in label.lower()]
    # what the question asks (the words at its question word) and the sentence naming the bridge does not say
    open_asked = sorted((w for w in words if stem(w) in qa.asked and stem(w) not in covered),
                        key=lambda w: qa.asked.index(stem(w)))
    if qa.relation:  # "the lead of | the club that …": the bridge names the club; what is asked of it remains
        asked = [w for w in words if stem(w) in qa.relation]
        if asked:
            lead = list(dict.fromkeys([*open_asked, *asked]))[:HOP_WORDS]
            return list(dict.fromkeys([" ".join([label, *lead]), *targeted(label, qa)]))
    open_words = [*open_asked, *(w for w in words if stem(w) not in covered)]
    if qa.head and qa.head not in words:
        open_words.append(qa.head)
    ordered = list(dict.fromkeys([*open_words, *words]))
    return list(dict.fromkeys([" ".join([label, *ordered[:HOP_WORDS]]).strip(), *targeted(label, qa)]))


def ideal_decision(qa: QuestionAnalysis, ev: Evidence, searches: list[str]) -> Decision:
    if not ev.items:
        q = fresh([paraphrase(qa.text, searches, start=k) for k in range(4)], searches)
        if q is None:
            return Decision("insufficient", reason="no evidence after every rephrasing was searched")
        return Decision("retrieve_again", (q,), reason="no evidence yet: searching again with a rephrased question")
    if qa.comparison:
        return _comparison(qa, ev, searches)
    return _lookup(qa, ev, searches)


def _comparison(qa: QuestionAnalysis, ev: Evidence, searches: list[str]) -> Decision:
    found = [side(ev, k) for k in range(2)]
    if all(i is not None for i in found):
        cites = ", ".join(f"[{ev.items[i].n}]" for i in found)  # type: ignore[index]
        return Decision("answer", reason=f"both compared facts are in the evidence ({cites})")
    missing = [qa.foci[k] for k in range(2) if found[k] is None]
    partial = len(missing) < 2
    queries: list[str] = []
    for f in missing:
        if not searched_for(f.text, searches):
            q = fresh(targeted(f.text, qa), [*searches, *queries])
            if q:
                queries.append(q)
    names = ", ".join(f.text for f in missing)
    if not queries:
        return Decision("insufficient", partial=partial, reason=f"nothing on {names} after targeted searches")
    return Decision("retrieve_again", tuple(queries), partial=partial, reason=f"comparison: nothing yet on {names}")


def _described(qa: QuestionAnalysis, ev: Evidence, best, searches: list[str]) -> tuple[str, int, frozenset[str]] | None:
    """The described thing as the next hop: when the best sentence sits on a page whose subject (its title) the
    question does not name — the question describes it ("the last active ruler of …") — and the sentence holds
    none of what the question asks, that subject with what is asked is the next search (its own page said
    no more; the page that answers names it)."""
    if best is None or not ev.leaves_asked_open(best):
        return None
    item = ev.items[best.i]
    label = item.label
    if len(label) < 3 or label.lower() in qa.text.lower() or searched_for(label, searches):
        return None
    if any(ev.about(best.i, f) for f in qa.foci):
        return None
    return label, best.i, item.said(best.j)


def _lookup(qa: QuestionAnalysis, ev: Evidence, searches: list[str]) -> Decision:
    expected = qa.answer_type is not None
    best = ev.answering(ev.answers())
    bridge = ev.bridge()
    described = _described(qa, ev, best, searches)
    if described is not None:  # the best sentence is on a page the question describes but does not name
        bridge = described
    # the answering sentence covers less than half of what the question says, and the evidence about
    # the question's names points to a name no item is about: that hop comes first
    # — or the answering sentence comes from an item that neither names the question's names nor is
    # linked from one that does (another subject's page), while such a link is there to follow
    # — or the question asks something of a described thing ("the lead of | the club that …") and the
    # answering sentence covers none of what is asked of it: it describes the thing, the next hop answers
    # — or the answering sentence holds none of what the question asks (the words at its question word)
    open_hop = (bridge is not None and best is not None and not searched_for(bridge[0], searches)
                and ((ev.chain_terms(best) < OPEN_HOP and ev.anchored(best.i)) or not ev.anchored(best.i)
                     or (bool(qa.relation) and not ev.covers_relation(best)) or ev.leaves_asked_open(best)))
    if best is not None and best.support >= SUFFICIENT and (best.typed or not expected) and not open_hop:
        if best.i >= 2 and len(ev.items) > 3:
            return Decision("rerank", reason=f"sufficient evidence, but the best item [{ev.items[best.i].n}] is "
                                             f"shown at position {best.i + 1}")
        return Decision("answer", reason=f"the evidence states the asked fact [{ev.items[best.i].n}]")
    if bridge is not None and not searched_for(bridge[0], searches):
        name, source, covered = bridge
        q = fresh(next_hop(name, qa, covered), searches)
        if q:
            return Decision("retrieve_again", (q,), partial=True, bridge=name,
                            reason=f"next hop: [{ev.items[source].n}] names {name}; the asked fact is missing")
    names = " ".join(qa.names())
    if names and not any(ev.names) and not searched_for(names, searches):
        q = fresh(targeted(names, qa), searches)
        if q:
            return Decision("retrieve_again", (q,), reason=f"nothing names {names} yet; searching for it directly")
    if len(searches) <= 1:
        q = fresh([keyword_query(qa.text)], searches)
        if q:
            return Decision("retrieve_again", (q,), reason="the evidence is on the topic but lacks the fact")
    if best is not None and best.support >= SETTLE:
        return Decision("answer", reason=f"the best evidence [{ev.items[best.i].n}] is the most that was found")
    return Decision("insufficient", reason="the asked fact is not in the evidence after targeted searches")
