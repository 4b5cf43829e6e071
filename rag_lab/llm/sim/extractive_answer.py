"""The answer role: an extractive answer with ``[n]`` citations, or ``INSUFFICIENT``; it writes only what it
copies from the evidence (lookup: the best-supported sentence; comparison: the winning name and both values, or
Yes/No). With every knob off it never guesses; ``premature_stop`` (through ``allow_partial``) makes it answer
from partial evidence. The rules: docs/backends.md."""

from __future__ import annotations

import re
from collections.abc import Callable

from rag_lab.llm.prompts import INSUFFICIENT
from rag_lab.llm.sim.evidence import Candidate, Evidence, number_values, side
from rag_lab.llm.sim.names import extract, mentions
from rag_lab.llm.sim.question import QuestionAnalysis
from rag_lab.llm.sim.text import content_stems, stem, words


def answer(qa: QuestionAnalysis, ev: Evidence, template: str, allow_partial: Callable[[], bool] = lambda: False) -> str:
    if template == "fallback" or not ev.items:
        return INSUFFICIENT
    text = _comparison(qa, ev, allow_partial) if qa.comparison else _lookup(qa, ev)
    if text is None:
        return INSUFFICIENT
    return f"Low confidence: {text}" if template == "ambiguous" else text


def _cite(text: str, n: int) -> str:
    """``text`` quoted as the answer writes it, followed by the citation of item ``n``."""
    return f"{text.rstrip()} [{n}]"


def _lookup(qa: QuestionAnalysis, ev: Evidence) -> str | None:
    found = ev.answers()
    if not found or (qa.answer_type is not None and not found[0].typed):
        return None  # no sentence, or none of the expected kind: it does not guess
    best = ev.answering(found)
    if qa.answer_type is None and qa.head is None and not qa.yes_no and qa.terms and best.terms == 0:
        return None  # nothing of the asked kind and none of the asked words: the fact is not there
    other = _other_hop(ev, best, ev.answer_items())
    if other is not None:
        first, second = (other, best) if ev.names[other.i] and not ev.names[best.i] else (best, other)
        parts = [(ev.items[first.i].n, compress(ev, first.text)), (ev.items[second.i].n, compress(ev, second.text))]
        if sum(len(t.split()) for _, t in parts) > CONCISE_WORDS:
            # too long for a concise answer: the sentence the value is read from, at the end of the chain
            keep = _answering(ev, best, other)
            parts = [(ev.items[keep.i].n, compress(ev, keep.text))]
    else:
        parts = [(ev.items[best.i].n, compress(ev, best.text))]
    if len(parts) == 1 and len(parts[0][1].split()) > CONCISE_WORDS:
        parts = [(parts[0][0], clause(ev, parts[0][1], CONCISE_WORDS))]
    text = " ".join(_cite(t, n) for n, t in parts)
    if qa.yes_no:
        return f"{'Yes' if best.terms >= 0.6 else 'No'}: {text}"
    return text


#: A concise answer: at most this many words of quoted evidence (a reader quotes the part that states the fact).
CONCISE_WORDS = 44
_PAREN = re.compile(r"\s*\([^()]*\)")
_CLAUSE = re.compile(r"(?<=[,;:])\s+|\s+[–—]\s+")


def _asked(ev: Evidence, text: str) -> bool:
    """Whether ``text`` holds a question term or a value of the kind the question asks for."""
    return bool(content_stems(text) & set(ev.qa.terms)) or ev.typed(text)


def compress(ev: Evidence, sentence: str) -> str:
    """``sentence`` without the asides in parentheses that hold nothing the question asks about
    (translations, pronunciations, dates of another kind)."""
    return _PAREN.sub(lambda m: m.group(0) if _asked(ev, m.group(0)) else "", sentence)


def clause(ev: Evidence, sentence: str, limit: int) -> str:
    """The part of a long ``sentence`` that states the fact: its clauses (split at , ; : and dashes)
    from the first that holds a value of the asked kind, with the clause before it when that one holds a
    question term, up to ``limit`` words."""
    pieces = [p for p in _CLAUSE.split(sentence) if p]
    at = next((k for k, p in enumerate(pieces) if ev.typed(p)), None)
    if at is None:
        at = max(range(len(pieces)), key=lambda k: (len(content_stems(pieces[k]) & set(ev.qa.terms)), -k))
    start = at - 1 if at > 0 and _asked(ev, pieces[at - 1]) else at
    out: list[str] = []
    for p in pieces[start:]:
        if out and len(" ".join([*out, p]).split()) > limit:
            break
        out.append(p)
    return " ".join(out)


def _answering(ev: Evidence, best: Candidate, other: Candidate) -> Candidate:
    """Of two hops' sentences, the one the answer is read from: the end of the chain — the sentence of the
    item the other one names (links to) — when it holds a value of the asked kind, else ``best``."""
    for a, b in ((best, other), (other, best)):
        if b.i in ev.links[a.i] and a.i not in ev.links[b.i] and ev.typed(b.text):
            return b
    return best


def _other_hop(ev: Evidence, best: Candidate, related: list[int]) -> Candidate | None:
    """A multi-hop answer cites both hops: from the items linked to ``best``'s item (one names the other's title) or
    naming a focus with it, the sentence that best covers what ``best`` leaves open — the question's terms not in
    ``best`` nor its title — or failing that the most question-like one."""
    item = ev.items[best.i]
    partners = [k for k in related if k != best.i and (k in ev.links[best.i] or best.i in ev.links[k]
                                                       or (ev.names[k] and ev.names[best.i]))]
    if not partners:
        return None
    residual = set(ev.qa.terms) - item.said(best.j)
    scored = []
    for c in ev.candidates(partners):
        share = len(residual & ev.items[c.i].said(c.j)) / len(residual) if residual else 0.0
        scored.append((0.6 * share + 0.4 * c.support, c))
    score, c = max(scored, key=lambda sc: (sc[0], -sc[1].i, -sc[1].j))
    return c if score >= 0.25 else None


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _comparison(qa: QuestionAnalysis, ev: Evidence, allow_partial: Callable[[], bool]) -> str | None:
    found = [side(ev, k) for k in range(2)]
    present = [i for i in found if i is not None]
    if len(present) < 2:
        if present and allow_partial():
            c = ev.best(present)
            return _cite(c.text, ev.items[c.i].n) if c is not None else None
        return None
    ia, ib = found  # type: ignore[misc]
    a, b = qa.foci[:2]
    cites = f"[{ev.items[ia].n}]" if ia == ib else f"[{ev.items[ia].n}] [{ev.items[ib].n}]"
    if qa.kind == "both":
        need = [stem(w) for w in qa.term_words]
        holds = [all(s in ev.items[i].stems for s in need) for i in (ia, ib)]
        return f"Yes {cites}" if all(holds) else f"No {cites}"
    if qa.kind == "same":
        return f"{'Yes' if _same(qa, ev, ia, ib) else 'No'} {cites}"
    if qa.measure is not None:
        va, vb = ev.values(ia)[0][1], ev.values(ib)[0][1]
        if qa.kind == "order":  # "Was A born before B?": does the first named one win?
            first_wins = (va > vb) if qa.direction == "max" else (va < vb)
            return f"{'Yes' if first_wins else 'No'} ({_fmt(va)} vs {_fmt(vb)}) {cites}"
        if va == vb:
            return f"Neither: both have {_fmt(va)} {cites}"
        pick_a = (va > vb) if qa.direction == "max" else (va < vb)
        winner, wv, lv = (a, va, vb) if pick_a else (b, vb, va)
        return f"{winner.text} ({_fmt(wv)} vs {_fmt(lv)}) {cites}"
    # no value to compare: the side whose evidence best matches the rest of the question
    ca, cb = ev.best([ia]), ev.best([ib])
    if ca is None or cb is None:
        return None
    winner, c = (a, ca) if (ca.terms, ca.support) >= (cb.terms, cb.support) else (b, cb)
    return f"{winner.text}: {_cite(c.text, ev.items[c.i].n)}"


def _same(qa: QuestionAnalysis, ev: Evidence, ia: int, ib: int) -> bool:
    """Whether the two sides share the asked value: the same number next to a question term, or a
    shared name or term-bearing word in their best sentences."""
    if "number" in qa.term_words or "many" in words(qa.text):
        def first_number(i: int) -> float | None:
            """The number written just before a question term ("three acts"), else the first one
            in a sentence holding a term."""
            for s in ev.items[i].sentences:
                tokens = re.findall(r"[\w.,]+", s)
                for k, tok in enumerate(tokens):
                    if stem(tok.lower()) in qa.terms:
                        for back in tokens[max(0, k - 3):k][::-1]:
                            if number_values(back):
                                return number_values(back)[0]
            for j, s in enumerate(ev.items[i].sentences):
                if ev.term_share(ev.items[i].sentence_stems[j]) > 0 and number_values(s):
                    return number_values(s)[0]
            return None

        na, nb = first_number(ia), first_number(ib)
        return na is not None and na == nb
    ca, cb = ev.best([ia]), ev.best([ib])
    if ca is None or cb is None:
        return False
    na = {e.key for e in extract(ca.text) if not mentions(qa.text, e)}
    nb = {e.key for e in extract(cb.text) if not mentions(qa.text, e)}
    return bool(na & nb)
