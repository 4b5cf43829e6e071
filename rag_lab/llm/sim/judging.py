"""The simulated judge and grade roles. **judge**, with evidence (IsSup-style): a draft is ``supported`` iff its
numbers and names appear in the evidence it cites, its citations point at existing items and at least
:data:`SUPPORT_OVERLAP` of its content words appear there; draft only (IsUse-style): it rates usefulness
instead. Both prefer a draft phrased the simulator's own way (:data:`SELF_PREFERENCE`). **grade**: an item's
relevance on [-1, 1] (CRAG-style) from cosine, names and terms, scaled between :data:`GRADE_LOW` and
:data:`GRADE_HIGH`. The rules in full: docs/backends.md, "The simulator, part by part"."""

from __future__ import annotations

import re

from rag_lab.llm.prompts import says_insufficient
from rag_lab.llm.sim.evidence import Evidence
from rag_lab.llm.sim.names import extract, mentions
from rag_lab.llm.sim.question import QuestionAnalysis
from rag_lab.llm.sim.text import content_stems, numbers, strip_citations

SUPPORT_OVERLAP = 0.8
SELF_PREFERENCE = 0.1
GRADE_LOW = 0.10
GRADE_HIGH = 0.80
_CITED = re.compile(r"\[(\d+)\]")
_OWN_STYLE = re.compile(r"^(Low confidence: )?(Yes|No)?:?\s*([^\[\]]*\[\d+\]\s*)+$")
#: Words of a hedge or a verdict, not claims.
_HEDGE_WORDS = ("low", "confidence", "yes", "no", "both", "neither", "not", "vs", "have")
#: Compared with stemmed claim words, so the list is stemmed the same way (the stemmer makes
#: "confidence" "confidenc", which a hand-stemmed "confid" never matched).
_HEDGES = frozenset(_HEDGE_WORDS) | content_stems(" ".join(_HEDGE_WORDS))


def _self_preferred(score: float, draft: str) -> float:
    """``score`` raised by :data:`SELF_PREFERENCE` (to at most 1) for a draft phrased the simulator's own way."""
    return min(1.0, score + SELF_PREFERENCE) if _OWN_STYLE.match(draft.strip()) else score


def support_verdict(overlap: float, invalid: int, missing_numbers: list[float], missing_names: list[str],
                    draft: str) -> dict[str, object]:
    """The IsSup-style verdict from what a reader measured of ``draft`` against its cited evidence (the share
    of its content words found there, invalid citations, numbers and names the evidence lacks)."""
    score = _self_preferred(overlap * (0.5 if invalid else 1.0) * (0.5 if missing_numbers or missing_names else 1.0),
                            draft)
    supported = overlap >= SUPPORT_OVERLAP and not missing_numbers and not missing_names and not invalid
    problems = []
    if missing_numbers:
        problems.append(f"numbers not in the evidence: {', '.join(f'{v:g}' for v in missing_numbers[:3])}")
    if missing_names:
        problems.append(f"names not in the evidence: {', '.join(missing_names[:3])}")
    if invalid:
        problems.append(f"{invalid} citation(s) to missing items")
    reason = "; ".join(problems) or f"{overlap:.0%} of the draft's content words are in the cited evidence"
    return {"verdict": "supported" if supported else "unsupported", "score": round(score, 3), "reason": reason}


def judge_with_evidence(qa: QuestionAnalysis, draft: str, ev: Evidence) -> dict[str, object]:
    text = draft.strip()
    if not text or says_insufficient(text):
        return {"verdict": "unsupported", "score": 0.0, "reason": "the draft makes no claim"}
    numbers_shown = [it.n for it in ev.items]
    cited = [int(n) for n in _CITED.findall(text)]
    valid = [n for n in cited if n in numbers_shown]
    invalid = len(cited) - len(valid)
    pool = [ev.items[numbers_shown.index(n)] for n in dict.fromkeys(valid)] or ev.items
    pool_text = " ".join(p.full for p in pool)
    claim = strip_citations(text)
    claim_stems = content_stems(claim) - _HEDGES
    overlap = len(claim_stems & content_stems(pool_text)) / len(claim_stems) if claim_stems else 0.0
    pool_numbers = {v for v, _ in numbers(pool_text)}
    missing_numbers = [v for v, _ in numbers(claim) if v not in pool_numbers]
    missing_names = [e.text for e in extract(claim) if not mentions(pool_text, e)]
    return support_verdict(overlap, invalid, missing_numbers, missing_names, text)


def judge_draft_only(qa: QuestionAnalysis, draft: str) -> dict[str, object]:
    text = draft.strip()
    if not text or says_insufficient(text):
        return {"verdict": "unsupported", "score": 0.0, "reason": "the draft does not answer"}
    named = sum(1 for e in qa.foci if mentions(text, e)) / len(qa.foci) if qa.foci else 0.0
    shared = bool(content_stems(strip_citations(text)) & set(qa.terms))
    score = _self_preferred(0.4 + 0.4 * named + 0.2 * shared, text)
    useful = named > 0 or (not qa.foci and shared) or (qa.foci and shared)
    reason = "a direct answer on the question's subject" if useful else "the draft does not address the question"
    return {"verdict": "supported" if useful else "unsupported", "score": round(min(1.0, score), 3), "reason": reason}


def grade(qa: QuestionAnalysis, ev: Evidence) -> dict[str, float]:
    if not ev.items:
        return {"score": -1.0}
    item = ev.items[0]
    share = len(ev.names[0]) / len(qa.foci) if qa.foci else 0.0
    raw = ev.item_sim[0] + 0.15 * share + 0.15 * ev.term_share(item.stems) - (0.15 if qa.foci and not share else 0.0)
    score = 2.0 * (raw - GRADE_LOW) / (GRADE_HIGH - GRADE_LOW) - 1.0
    return {"score": round(max(-1.0, min(1.0, score)), 4)}
