"""Answer normalization and matching as in the usual QA evaluation (SQuAD/HotpotQA style):
lower-case, drop punctuation and the articles a/an/the, collapse whitespace."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def contains(answer: str, gold: Iterable[str]) -> bool:
    """A normalized gold answer appears in the normalized answer as a whole-token sequence."""
    padded = f" {normalize_answer(answer)} "
    return any(g_norm and f" {g_norm} " in padded for g_norm in (normalize_answer(g) for g in gold))


def exact_match(answer: str, gold: Iterable[str]) -> bool:
    norm = normalize_answer(answer)
    return any(norm == normalize_answer(g) for g in gold)


def f1(answer: str, gold: Iterable[str]) -> float:
    """Best token-overlap F1 over the gold answers."""
    pred = normalize_answer(answer).split()
    best = 0.0
    for g in gold:
        ref = normalize_answer(g).split()
        common = sum((Counter(pred) & Counter(ref)).values())
        if common:
            p, r = common / len(pred), common / len(ref)
            best = max(best, 2 * p * r / (p + r))
    return best
