"""The judge and grade roles.

**judge** — two behaviours, depending on what the prompt shows:

* *with evidence* (an EVIDENCE section, IsSup-style): the draft is ``supported`` iff every number
  and name it states appears in the evidence it cites (all evidence when it cites nothing), every
  citation points at an existing item, and at least :data:`SUPPORT_OVERLAP` of its content words
  appear there. The score is that word overlap, halved when a citation is invalid and halved when a
  number or name is missing from the evidence.
* *draft only* (IsUse-style): it cannot check support, so it rates usefulness: a non-empty,
  non-INSUFFICIENT draft that names the question's focus (or gives a value of the expected kind)
  is ``supported``, whatever the evidence would have said.

Both add a same-model bias: a draft phrased the way the simulator phrases its own answers
(extracted sentences closed by ``[n]`` citations) scores :data:`SELF_PREFERENCE` higher.

**grade** — relevance of one item on [-1, 1] (CRAG-style)::

    raw   = cos(question, "title. text") + 0.15·(share of foci mentioned) + 0.15·(best attribute match)
            − 0.15·(the question names foci and the item mentions none)
    score = clip(2·(raw − GRADE_LOW) / (GRADE_HIGH − GRADE_LOW) − 1, −1, 1)

with GRADE_LOW = 0.10 (→ −1, unrelated) and GRADE_HIGH = 0.80 (→ +1, answers it).
"""

from __future__ import annotations

import re

from rag_lab.llm.prompts import INSUFFICIENT
from rag_lab.llm.sim.adapters.world.entities import extract, mentions
from rag_lab.llm.sim.adapters.world.evidence import Evidence
from rag_lab.llm.sim.adapters.world.question import QuestionAnalysis
from rag_lab.llm.sim.adapters.world.text import content_stems, numbers, strip_citations
from rag_lab.llm.sim.judging import SELF_PREFERENCE, support_verdict

GRADE_LOW = 0.10
GRADE_HIGH = 0.80
_CITED = re.compile(r"\[(\d+)\]")
_OWN_STYLE = re.compile(r"^(Low confidence: )?([^\[\]]+\[\d+\]\s*)+$")
#: Words of a hedge or a refusal, not claims.
_HEDGE_WORDS = ("low", "confidence", "yes", "no", "both", "neither", "not", "vs", "differ", "they")
#: Compared with stemmed claim words, so the list is stemmed the same way (the stemmer makes
#: "confidence" "confidenc", which a hand-stemmed "confid" never matched).
_HEDGES = frozenset(_HEDGE_WORDS) | content_stems(" ".join(_HEDGE_WORDS))


def _own_style(draft: str) -> bool:
    return bool(_OWN_STYLE.match(draft.strip()))


def judge_with_evidence(qa: QuestionAnalysis, draft: str, ev: Evidence) -> dict[str, object]:
    """The IsSup-style verdict (see the module doc)."""
    text = draft.strip()
    if not text or text.upper().startswith(INSUFFICIENT):
        return {"verdict": "unsupported", "score": 0.0, "reason": "the draft makes no claim"}
    cited = [int(n) for n in _CITED.findall(text)]
    valid = [n for n in cited if n in ev.numbers]
    invalid = len(cited) - len(valid)
    pool = [ev.items[ev.numbers.index(n)] for n in dict.fromkeys(valid)] or ev.items
    pool_text = " ".join(p.full for p in pool)
    pool_stems = content_stems(pool_text)
    claim = strip_citations(text)
    claim_stems = content_stems(claim) - _HEDGES
    overlap = len(claim_stems & pool_stems) / len(claim_stems) if claim_stems else 0.0
    pool_numbers = {v for v, _ in numbers(pool_text)}
    missing_numbers = [v for v, _ in numbers(claim) if v not in pool_numbers]
    missing_names = [e.text for e in extract(claim) if e.kind != "date" and not mentions(pool_text, e)]
    return support_verdict(overlap, invalid, missing_numbers, missing_names, _own_style(text))


def judge_draft_only(qa: QuestionAnalysis, draft: str) -> dict[str, object]:
    """The IsUse-style verdict (see the module doc): usefulness, not support."""
    text = draft.strip()
    if not text or text.upper().startswith(INSUFFICIENT):
        return {"verdict": "unsupported", "score": 0.0, "reason": "the draft does not answer"}
    names = [e for e in qa.foci]
    named = sum(1 for e in names if mentions(text, e)) / len(names) if names else 0.0
    keyword_hit = any(k.lower() in text.lower() for k in qa.keywords)
    typed = _has_expected_value(qa, text)
    score = 0.4 + 0.4 * max(named, 1.0 if keyword_hit else 0.0) + 0.2 * typed
    if _own_style(text):
        score = min(1.0, score + SELF_PREFERENCE)
    useful = named > 0 or keyword_hit or typed or not names
    reason = "a direct answer that names the question's subject" if useful else "the draft does not address the question"
    return {"verdict": "supported" if useful else "unsupported", "score": round(score, 3), "reason": reason}


def _has_expected_value(qa: QuestionAnalysis, text: str) -> bool:
    t = qa.answer_type
    if t in ("year", "number", "percent"):
        return bool(numbers(strip_citations(text)))
    if t in ("person", "place"):
        return any(e.kind in ("name", "word") for e in extract(strip_citations(text)))
    if t in ("channel", "handle"):
        return any(e.kind == t for e in extract(text))
    return False


def grade(qa: QuestionAnalysis, ev: Evidence) -> dict[str, float]:
    """The relevance grade of the single evidence item (see the module doc for the mapping)."""
    if not ev.items:
        return {"score": -1.0}
    sim = ev.item_sim[0]
    foci = ev.foci
    share = sum(1 for f in foci if ev.mentions(0, f)) / len(foci) if foci else 0.0
    attr = max((ev.attr_score(s) for s in ev.usable(0)), default=0.0)
    raw = sim + 0.15 * share + 0.15 * attr - (0.15 if foci and share == 0 else 0.0)
    score = 2.0 * (raw - GRADE_LOW) / (GRADE_HIGH - GRADE_LOW) - 1.0
    return {"score": round(max(-1.0, min(1.0, score)), 4)}
