"""Answer normalization and matching as in the usual QA evaluation (SQuAD/HotpotQA style:
:func:`rag_lab.text_overlap.normalize_answer`). Two forms of containment: **lenient** (:func:`contains`), a normalized
gold answer anywhere in the answer, which a parrot beats; and **strict** (:func:`contains_strict`), the same match only
within a short answer (at most :data:`STRICT_MAX_TOKENS` tokens, citations removed) and only in the answer's own words
(runs of :data:`QUESTION_RUN` or more tokens copied from the question do not count). Token F1 (:func:`f1`) and exact
match sit beside them. The method: docs/backends.md, "A metric a parrot cannot beat"."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from rag_lab.text_overlap import SHORT_ANSWER_TOKENS, answer_tokens, normalize_answer, tokens, without_runs

#: A strict answer has at most this many normalized tokens (citations removed): two ordinary
#: sentences. An extractive answer quoting the sentence that states the fact fits; an echoed
#: prompt, an evidence block or a ramble does not.
STRICT_MAX_TOKENS = SHORT_ANSWER_TOKENS
#: Runs of at least this many tokens copied verbatim from the question are not the answer's own words.
QUESTION_RUN = 3


def contains(answer: str, gold: Iterable[str]) -> bool:
    """A normalized gold answer appears in the normalized answer as a whole-token sequence."""
    toks = tokens(answer)
    return any(_has_sequence(toks, tokens(g)) for g in gold)


def exact_match(answer: str, gold: Iterable[str]) -> bool:
    norm = normalize_answer(answer)
    return any(norm == normalize_answer(g) for g in gold)


def f1(answer: str, gold: Iterable[str]) -> float:
    """Best token-overlap F1 over the gold answers."""
    pred = tokens(answer)
    best = 0.0
    for g in gold:
        ref = tokens(g)
        common = sum((Counter(pred) & Counter(ref)).values())
        if common:
            p, r = common / len(pred), common / len(ref)
            best = max(best, 2 * p * r / (p + r))
    return best


def _has_sequence(toks: Sequence[str | None], gold: Sequence[str]) -> bool:
    """Whether ``gold`` occurs as consecutive tokens of ``toks`` (``None`` is a gap nothing matches)."""
    n = len(gold)
    return n > 0 and any(list(toks[i:i + n]) == list(gold) for i in range(len(toks) - n + 1))


def contains_strict(answer: str, gold: Iterable[str], question: str = "", max_tokens: int = STRICT_MAX_TOKENS) -> bool:
    """Strict containment (see the module doc): ``answer`` has at most ``max_tokens`` normalized
    tokens (citation markers removed), and a normalized gold answer occurs in it outside the runs of
    :data:`QUESTION_RUN` or more tokens copied from ``question``."""
    toks = answer_tokens(answer)
    if not toks or len(toks) > max_tokens:
        return False
    asked = tokens(question) if question else []
    for g in gold:
        target = tokens(g)
        if not target:
            continue
        # A gold answer the question itself names ("Which is older, A or B?") is copied from the question
        # by any correct answer: only runs *longer* than it (an echo of the question) stop counting.
        min_run = max(QUESTION_RUN, len(target) + 1) if _has_sequence(asked, target) else QUESTION_RUN
        own: Sequence[str | None] = without_runs(toks, asked, min_run) if asked else toks
        if _has_sequence(own, target):
            return True
    return False
