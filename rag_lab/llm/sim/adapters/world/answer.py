"""The answer role: a short extractive answer with ``[n]`` citations, or ``INSUFFICIENT``.

The simulator writes only what it can copy from the evidence: the sentence(s) that state the
asked fact, each followed by the number of the item it came from. Sentences that read as
instructions to the model (prompt injection) are never used. Archived pages lose to current
ones, and later-dated pages win when the question asks about the present.

* single question → the best sentence of an item that covers the question (plus that item's
  opening sentence when the best one does not name the focus);
* relation chain → the sentence naming the bridge entity and the sentence stating its attribute;
* comparison → both facts; the winner by the compared number or year (more/fewer, earlier/later…),
  ``Yes``/``No`` for "are both …" and "the same …" questions;
* the evidence lacks a needed fact, or the prompt is the fallback template → ``INSUFFICIENT``.

With every knob off it never guesses: an answer with only one side of a comparison, or only the
first hop of a chain, is ``INSUFFICIENT``; the ``premature_stop`` knob makes it answer from that
partial evidence instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rag_lab.llm.prompts import INSUFFICIENT
from rag_lab.llm.sim.adapters.world.controller import covered_facts, second_hop
from rag_lab.llm.sim.adapters.world.entities import extract
from rag_lab.llm.sim.adapters.world.evidence import Evidence, Fact, Focus
from rag_lab.llm.sim.adapters.world.lexicon import meanings
from rag_lab.llm.sim.adapters.world.question import QuestionAnalysis
from rag_lab.llm.sim.adapters.world.text import numbers, percents, stem, words, years


def answer(qa: QuestionAnalysis, ev: Evidence, template: str,
           allow_partial: Callable[[], bool] = lambda: False) -> str:
    """The answer text for ``qa`` from ``ev`` under the given template. When only part of a
    comparison or chain is covered, ``allow_partial()`` is asked (the ``premature_stop`` knob):
    true → a confident answer from the partial evidence, false → ``INSUFFICIENT``."""
    if template == "fallback" or not ev.items:
        return INSUFFICIENT
    ranked = sorted(range(len(ev.items)), key=lambda i: -ev.item_sim[i])
    ev.embed_sentences(ranked[: ev.sentence_items])
    if qa.comparison and len(ev.foci) >= 2:
        text = _comparison(qa, ev)
    elif qa.chain is not None and ev.foci:
        text = _chain(qa, ev)
        if text is None and ev.bridge() is None:
            text = _single(qa, ev)
    else:
        text = _single(qa, ev)
    if text is None and qa.multi_focus:
        partial = _partial(qa, ev)
        if partial is not None and allow_partial():
            text = partial
    if text is None:
        return INSUFFICIENT
    return f"Low confidence: {text}" if template == "ambiguous" else text


def _partial(qa: QuestionAnalysis, ev: Evidence) -> str | None:
    """What a model that stops early says: the one compared fact it has, or the first hop."""
    if qa.comparison and len(ev.foci) >= 2:
        found = [f for f in covered_facts(ev, ev.foci[:2]) if f is not None]
        return _cite(found[0]) if found else None
    found_bridge = ev.bridge()
    return _cite(found_bridge[1]) if found_bridge is not None else None


def _cite(fact: Fact) -> str:
    return f"{fact.sentence.text.rstrip()} [{fact.n}]"


def _single(qa: QuestionAnalysis, ev: Evidence) -> str | None:
    covering = [i for i in range(len(ev.items)) if ev.covers(i)]
    if not covering:
        alias_items = []
        for f in ev.foci:
            for alias in f.aliases:
                alias_focus = Focus(alias, keywords=(alias,))
                alias_items += [i for i in range(len(ev.items)) if ev.mentions(i, alias_focus)
                                and ev.covers(i, [alias_focus])]
        covering = sorted(set(alias_items))
        if not covering:
            return None
    focus = ev.foci[0] if ev.foci else None
    best = ev.fact(focus, items=covering) or ev.fact(None, items=covering)
    if best is None:
        return None
    text = _cite(best)
    opening = best.item.sentences[0] if best.item.sentences else None
    names_focus = focus is None or focus.mentioned_in(best.sentence.text, best.sentence.stems)
    if (not names_focus and opening is not None and opening.index != best.sentence.index
            and not opening.instruction and len(opening.text.split()) <= 30):
        text = f"{opening.text.rstrip()} {text}"
    return text


def _chain(qa: QuestionAnalysis, ev: Evidence) -> str | None:
    found = ev.bridge()
    if found is None:
        return None
    bridge, first_hop = found
    final = second_hop(ev, bridge)
    if final is None:
        return None
    if final.n == first_hop.n and final.sentence.index == first_hop.sentence.index:
        return _cite(final)
    return f"{_cite(first_hop)} {_cite(final)}"


def _value(fact: Fact, qa: QuestionAnalysis) -> float | None:
    """The number a comparison compares, read from a fact sentence: a year for year questions,
    a percentage for share questions, else the number closest to an attribute word."""
    text = fact.sentence.text
    if qa.answer_type == "year":
        found = years(text)
        return float(found[0]) if found else None
    if qa.answer_type == "percent":
        found = percents(text)
        return found[0] if found else None
    found = [(v, pos) for v, pos in numbers(text) if not (1500 <= v <= 2099 and float(v).is_integer()
                                                           and qa.answer_type != "number")]
    if not found:
        found = numbers(text)
    if not found:
        return None
    anchors = [m.start() for m in re.finditer(r"[A-Za-z]+", text)
               if any(meanings(stem(m.group(0).lower())) & meanings(a) for a in qa.attribute)]
    if not anchors:
        return found[0][0]
    return min(found, key=lambda vp: min(abs(vp[1] - a) for a in anchors))[0]


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _comparison(qa: QuestionAnalysis, ev: Evidence) -> str | None:
    a, b = ev.foci[:2]
    fa, fb = covered_facts(ev, [a, b])
    if fa is None or fb is None:
        return None
    cites = f"[{fa.n}]" if fa.n == fb.n else f"[{fa.n}] [{fb.n}]"
    if qa.comparison_kind == "both":
        value = qa.values[0] if qa.values else None
        if value is None:
            return f"{_cite(fa)} {_cite(fb)}"
        holds = [value.lower() in f.sentence.text.lower() for f in (fa, fb)]
        return f"Yes: both are {value} {cites}" if all(holds) else f"No: not both are {value} {cites}"
    if qa.comparison_kind == "same":
        va, vb = _descriptors(fa, ev, a), _descriptors(fb, ev, b)
        shared = sorted(va & vb)
        return f"Yes: both {shared[0]} {cites}" if shared else f"No: they differ {cites}"
    if qa.comparison_kind == "select":
        xa, xb = _value(fa, qa), _value(fb, qa)
        if xa is None or xb is None:
            return f"{_cite(fa)} {_cite(fb)}"
        if xa == xb:
            return f"Neither: both have {_fmt(xa)} {cites}"
        pick_a = (xa > xb) if qa.direction == "max" else (xa < xb)
        winner, wv, lv = (a, xa, xb) if pick_a else (b, xb, xa)
        return f"{winner.label} ({_fmt(wv)} vs {_fmt(lv)}) {cites}"
    return f"{_cite(fa)} {_cite(fb)}"


def _descriptors(fact: Fact, ev: Evidence, focus: Focus) -> set[str]:
    """Capitalised words describing ``focus`` on its page (its fact's page, all usable sentences)."""
    texts = [s.text for s in fact.item.sentences if not s.instruction]
    out: set[str] = set()
    focus_words = set(words(focus.label))
    for t in texts:
        for e in extract(t):
            if e.kind in ("word", "name") and not set(words(e.text)) & focus_words:
                out.add(e.text)
    return out
