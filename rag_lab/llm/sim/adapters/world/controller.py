"""The world adapter's controller reading: decide answer / rerank / retrieve_again / insufficient from the evidence.

:func:`ideal_decision` is the policy with every knob off:

* no evidence at all → ``retrieve_again`` with a rephrasing of the question (until every
  rephrasing has been searched, then ``insufficient``);
* **comparison** → each of the two foci must have a sentence stating the asked attribute; a
  missing one → ``retrieve_again`` "<entity> <attribute words>";
* **relation chain** → find the bridge entity in the evidence about the question's entity
  (e.g. "owned by Team Aurora"); if no item states the asked attribute of the bridge →
  ``retrieve_again`` "<bridge> <attribute words>" (e.g. "Team Aurora lead"); an alias found in the
  evidence ("walrus is now asset-keeper") is carried the same way;
* **single** → an item that mentions every focus and states the attribute (or is very similar to
  the question, see :mod:`~rag_lab.llm.sim.evidence`) → ``answer``, or ``rerank`` when the best such
  item is not among the first two shown; a focus that is mentioned but whose attribute is missing
  → one targeted ``retrieve_again``; a named focus found nowhere, or evidence on the topic that names
  nothing the question names, also gets one targeted search (the entity and the attribute words)
  when only the question itself has been searched; otherwise nothing related → ``insufficient``.

A refined query already listed under SEARCHES is never sent again verbatim, and each missing
entity gets one targeted search (a later search that already names it counts); when that is spent
the decision is ``insufficient``. The behaviour knobs are applied on top by
:mod:`rag_lab.llm.sim.controller`, the same way for every reader.
"""

from __future__ import annotations

import re

from rag_lab.llm.sim.adapters.world.entities import Entity
from rag_lab.llm.sim.adapters.world.evidence import ATTR_COVER, SIM_RELATED, Evidence, Fact, Focus
from rag_lab.llm.sim.adapters.world.paraphrase import keyword_query, paraphrase
from rag_lab.llm.sim.adapters.world.question import QuestionAnalysis
from rag_lab.llm.sim.controller import fresh, searched_for
from rag_lab.llm.sim.decision import Decision


def _targeted(label: str, qa: QuestionAnalysis, extra: tuple[str, ...] = ()) -> list[str]:
    """Refined queries for ``label`` (an entity or bridge) and the asked attribute, most specific first."""
    words = [w for w in qa.attribute_words if w.lower() not in label.lower().split()]
    base = " ".join([label, *extra, *words]).strip()
    out = [base, f"{label} {' '.join(words[:1])}".strip(), label]
    if qa.attribute_words:
        out.append(keyword_query(f"{label} {' '.join(qa.attribute_words)}", synonyms=1))
    return list(dict.fromkeys(out))


def covered_facts(ev: Evidence, foci: list[Focus]) -> list[Fact | None]:
    """For each compared focus, its best sentence that states the attribute (None if none).
    "The same …" comparisons rarely repeat the attribute word, so any sentence about the focus
    counts there."""
    lenient = ev.qa.comparison_kind == "same"
    out = []
    for f in foci:
        others = [g for g in ev.foci if g is not f]
        out.append(ev.fact(f, exclude=others, strict=True, min_attr=0.0 if lenient else ATTR_COVER))
    return out


def second_hop(ev: Evidence, bridge: Entity) -> Fact | None:
    """The sentence stating the asked attribute of the bridge entity, from pages not about the
    question's own focus."""
    target = Focus(bridge.text, entity=bridge)
    items = [i for i in range(len(ev.items)) if not any(ev.about(i, f) for f in ev.foci)]
    return ev.fact(target, exclude=ev.foci, items=items, strict=True, min_attr=ATTR_COVER)


def _bridge_label(entity: Entity, qa: QuestionAnalysis) -> str:
    """The bridge as it should appear in a query: a bare capitalised word gets the chain's noun
    ("Meridian" → "Meridian team")."""
    if entity.kind == "word" and qa.chain is not None:
        noun = next((w for w in re.findall(r"[A-Za-z]+", qa.chain.cue) if w.lower().startswith(qa.chain.noun)),
                    qa.chain.noun)
        return f"{entity.text} {noun.lower()}"
    return entity.text


def ideal_decision(qa: QuestionAnalysis, ev: Evidence, searches: list[str]) -> Decision:
    """The controller's decision with every behaviour knob off (see the module doc)."""
    if not ev.items:
        q = fresh([paraphrase(qa.text, searches, start=k) for k in range(4)], searches)
        if q is None:
            return Decision("insufficient", reason="no evidence after every rephrasing was searched")
        return Decision("retrieve_again", (q,), reason="no evidence yet: searching again with a rephrased question")
    if qa.comparison and len(ev.foci) >= 2:
        return _comparison(qa, ev, searches)
    if qa.chain is not None and ev.foci:
        chained = _chain(qa, ev, searches)
        if chained is not None:
            return chained
    return _single(qa, ev, searches)


def _comparison(qa: QuestionAnalysis, ev: Evidence, searches: list[str]) -> Decision:
    foci = ev.foci[:2]
    facts = covered_facts(ev, foci)
    stale = [f for f, fact in zip(foci, facts, strict=True) if fact is not None and fact.item.archived]
    if all(facts) and stale:
        # a page that calls itself archived may be out of date: look once for the current one
        queries = [q for q in (fresh(_targeted(f.label, qa), searches) for f in stale
                               if not searched_for(f.label, searches)) if q]
        if queries:
            return Decision("retrieve_again", tuple(queries), reason="only an archived page states the fact for "
                            + ", ".join(f.label for f in stale) + "; looking for the current one")
    if all(facts):
        cites = ", ".join(f"[{f.n}]" for f in facts if f)
        return Decision("answer", reason=f"both compared facts are in the evidence ({cites})")
    missing = [f for f, fact in zip(foci, facts, strict=True) if fact is None]
    partial = len(missing) < len(foci)
    queries: list[str] = []
    for f in missing:
        if searched_for(f.label, searches):
            continue
        q = fresh(_targeted(f.label, qa), [*searches, *queries])
        if q:
            queries.append(q)
    if not queries:
        return Decision("insufficient", reason=f"no fact about {', '.join(f.label for f in missing)} after "
                                               "targeted searches", partial=partial)
    return Decision("retrieve_again", tuple(queries), partial=partial,
                    reason=f"comparison: nothing yet on {', '.join(f.label for f in missing)}")


def _chain(qa: QuestionAnalysis, ev: Evidence, searches: list[str]) -> Decision | None:
    found = ev.bridge()
    if found is None:
        return None
    bridge, first_hop = found
    final = second_hop(ev, bridge)
    if final is not None:
        return Decision("answer", reason=f"chain resolved: {bridge.text} [{first_hop.n}], its fact in [{final.n}]")
    label = _bridge_label(bridge, qa)
    q = None if searched_for(bridge.text, searches) else fresh(_targeted(label, qa), searches)
    if q is None:
        return Decision("insufficient", partial=True, bridge=bridge.text,
                        reason=f"found {bridge.text} [{first_hop.n}] but nothing on it after targeted searches")
    return Decision("retrieve_again", (q,), partial=True, bridge=bridge.text,
                    reason=f"next hop: the evidence names {bridge.text} [{first_hop.n}]; its fact is missing")


def _single(qa: QuestionAnalysis, ev: Evidence, searches: list[str]) -> Decision:
    covering = [i for i in range(len(ev.items)) if ev.covers(i)]
    names = " ".join(e.text for e in qa.foci) or " ".join(qa.keywords)
    if covering and all(ev.items[i].archived for i in covering) and names and not searched_for(names, searches):
        q = fresh(_targeted(names, qa), searches)
        if q:
            return Decision("retrieve_again", (q,), reason="only archived pages state the fact; looking for the "
                                                          "current one")
    if covering:
        focus = ev.foci[0] if ev.foci else None
        best = ev.fact(focus, items=covering)
        n = best.n if best else ev.numbers[covering[0]]
        position = ev.numbers.index(n)
        if position >= 2 and len(ev.items) > 3:
            return Decision("rerank", reason=f"sufficient evidence, but the best item [{n}] is shown at position "
                                             f"{position + 1}")
        return Decision("answer", reason=f"the evidence states the asked fact [{n}]")
    alias = ev.alias_bridge()
    if alias and not searched_for(alias, searches):
        q = fresh(_targeted(alias, qa), searches)
        if q:
            return Decision("retrieve_again", (q,), bridge=alias,
                            reason=f"the evidence gives another name, {alias}; searching for it")
    mentioned = ev.any_mention()
    # one targeted search when the entity is there but not the fact, or when the evidence is on
    # the topic but names nothing the question names
    if (mentioned and not (names and searched_for(names, searches))) or (
            (ev.best_sim() >= SIM_RELATED or qa.foci) and len(searches) <= 1):
        q = fresh(_targeted(names, qa) if names else [keyword_query(qa.text, synonyms=1)], searches)
        if q:
            reason = ("the entity is found but not the asked fact" if mentioned else
                      f"nothing names {names} yet; searching for it directly" if names else
                      "the evidence is on the topic but lacks the fact")
            return Decision("retrieve_again", (q,), reason=reason)
        return Decision("insufficient", reason="the asked fact is not in the evidence after a targeted search")
    return Decision("insufficient", reason="nothing in the evidence is about the question")
