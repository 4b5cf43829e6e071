"""Answer normalization (SQuAD/HotpotQA style, citation marks :data:`CITATION_MARK` removed first) and verbatim
token overlap between two texts, measured in *runs*: maximal stretches of consecutive normalized tokens found in
both, through the other text's ``n``-grams, so a copied sentence counts and a few shared words do not. Used by
the echo guard and the strict answer metric; imports nothing from the rest of the package."""

from __future__ import annotations

import difflib
import re
import string
from collections.abc import Sequence

from rag_lab.errors import ConfigError

#: What counts as a short answer, in normalized tokens (citations removed): two ordinary sentences.
#: The strict answer metric credits only answers this short; the echo guard never calls one this
#: short a copy of the evidence.
SHORT_ANSWER_TOKENS = 48

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
#: One citation mark: numbers in square brackets, one (``[2]``) or several, separated by commas, semicolons or
#: "and" (``[1, 3]``, ``[1;3]``, ``[1 and 3]``), or a range (``[1-3]``, ``[1–3]``); ``[1][3]`` is two marks.
CITATION_MARK = re.compile(r"\[\s*\d+(?:\s*(?:[,;]|and|[-–—])\s*\d+)*\s*,?\s*\]")
_PART = re.compile(r"(\d+)\s*[-–—]\s*(\d+)|\d+")
#: The widest range a mark may span (``[1-20]``); a wider one (``[1-9999]``) is read as its two ends.
MAX_RANGE = 20


def cited_numbers(mark: str) -> list[int]:
    """The numbers one citation mark cites, in order, each once: ``[1, 3]`` → 1, 3; ``[2-4]`` → 2, 3, 4.

    >>> cited_numbers("[1, 3]"), cited_numbers("[2-4]"), cited_numbers("[3; 1 and 3]")
    ([1, 3], [2, 3, 4], [3, 1])"""
    numbers: list[int] = []
    for part in _PART.finditer(mark):
        if part.group(1) is None:
            numbers.append(int(part.group(0)))
            continue
        start, end = int(part.group(1)), int(part.group(2))
        span = range(start, end + 1) if start <= end and end - start < MAX_RANGE else (start, end)
        numbers.extend(span)
    return list(dict.fromkeys(numbers))


def normalize_answer(text: str) -> str:
    """Lower-case, no punctuation, no articles, single spaces."""
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str) -> list[str]:
    """The normalized tokens of ``text``."""
    return normalize_answer(text).split()


def answer_tokens(text: str) -> list[str]:
    """The normalized tokens of an answer, citation marks (:data:`CITATION_MARK`) removed first."""
    return tokens(CITATION_MARK.sub(" ", text))


def _ngrams(toks: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)}


def covered(toks: Sequence[str], source: Sequence[str], min_run: int) -> list[bool]:
    """For each token of ``toks``: whether it lies inside a run of at least ``min_run`` consecutive
    tokens that also occurs verbatim in ``source``."""
    if min_run < 1:
        raise ConfigError(f"min_run must be >= 1, got {min_run}")
    mask = [False] * len(toks)
    grams = _ngrams(source, min_run)
    if not grams:
        return mask
    for i in range(len(toks) - min_run + 1):
        if tuple(toks[i:i + min_run]) in grams:
            for j in range(i, i + min_run):
                mask[j] = True
    return mask


def covered_share(toks: Sequence[str], source: Sequence[str], min_run: int) -> float:
    """The share of ``toks`` inside runs of at least ``min_run`` tokens copied from ``source`` (0 for no tokens)."""
    mask = covered(toks, source, min_run)
    return sum(mask) / len(mask) if mask else 0.0


def longest_run(toks: Sequence[str], source: Sequence[str]) -> int:
    """The length of the longest run of consecutive tokens of ``toks`` that occurs verbatim in ``source``
    (longest common substring in tokens: difflib's longest matching block, its junk heuristic off)."""
    return difflib.SequenceMatcher(None, toks, source, autojunk=False).find_longest_match().size


def without_runs(toks: Sequence[str], source: Sequence[str], min_run: int) -> list[str | None]:
    """``toks`` with every token inside a run of at least ``min_run`` tokens copied from ``source``
    replaced by ``None`` (a gap that no token sequence matches across)."""
    mask = covered(toks, source, min_run)
    return [None if m else t for t, m in zip(toks, mask, strict=True)]
