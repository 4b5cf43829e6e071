"""Selective prediction: the risk–coverage curve of refusing every answer whose score is below a threshold, and
the area under it (AURC), from per-question scores (e.g. a run's ``best_relevance``, what the citation guard's
``refusal_threshold`` compares). Pure numpy; :func:`risk_coverage` says which AURC it computes."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class RiskCoverage(NamedTuple):
    """One point per distinct threshold, thresholds ascending (so coverage descending).

    At ``thresholds[k]`` a question is answered when it was answered and its score is ``>= thresholds[k]``;
    ``answered[k]`` counts those questions, ``coverage[k]`` is ``answered[k] / n`` (``n``: every question, the ones
    refused anyway included) and ``risk[k]`` the share of them that are wrong. ``aurc`` is the area under the curve
    (see :func:`risk_coverage`), NaN when no answered question has a score."""

    thresholds: tuple[float, ...]
    coverage: tuple[float, ...]
    risk: tuple[float, ...]
    answered: tuple[int, ...]
    aurc: float
    n: int


def _zero_one(values: np.ndarray, name: str) -> np.ndarray:
    if values.size and not np.isin(values, (0.0, 1.0)).all():
        raise ValueError(f"{name} must hold only 0 and 1, got {sorted(set(values[~np.isin(values, (0.0, 1.0))]))[:5]}")
    return values.astype(bool)


def risk_coverage(score: np.ndarray, answered: np.ndarray, right: np.ndarray) -> RiskCoverage:
    """The risk–coverage curve of thresholding ``score`` on top of the refusals already made.

    ``score``: one per question, NaN where the question is refused anyway (no score: e.g. an empty context, which
    the citation guard refuses at every threshold); ``answered`` and ``right`` 0/1 (right implies answered).
    A threshold ``t`` also refuses every answered question whose score is below ``t``; the curve has one point
    per distinct score of an answered question, the lowest of which refuses nothing more.

    AURC is the area under the risk–coverage step curve, coverage from 0 to the largest coverage, the risk
    between two neighbouring coverages being the risk at the larger one:
    ``sum_k (coverage[k] - coverage[k+1]) * risk[k]`` (with ``coverage[K] = 0``). Without tied scores this is
    Geifman & El-Yaniv's definition (``1/n`` times the sum of the selective risk of every prefix of the answers
    ranked by score); tied scores enter and leave together, so it does not depend on how ties are ordered. It is
    not normalised by the largest coverage: questions refused anyway lie outside the curve.

    >>> rc = risk_coverage(np.array([0.9, 0.5, 0.5, np.nan]), np.array([1, 1, 1, 0]), np.array([1, 0, 1, 0]))
    >>> rc.thresholds, rc.coverage, rc.risk
    ((0.5, 0.9), (0.75, 0.25), (0.3333333333333333, 0.0))
    >>> round(rc.aurc, 4)   # (0.75 - 0.25) * 1/3 + 0.25 * 0
    0.1667"""
    s, a, r = (np.asarray(v, dtype=float).ravel() for v in (score, answered, right))
    if not s.size == a.size == r.size:
        raise ValueError(f"score, answered and right must have one value per question, got {s.size}, {a.size}, "
                         f"{r.size}")
    a, r = _zero_one(a, "answered"), _zero_one(r, "right")
    if (r & ~a).any():
        raise ValueError(f"{int((r & ~a).sum())} question(s) right but not answered")
    n = int(s.size)
    live = a & ~np.isnan(s)
    thresholds = np.unique(s[live])                     # ascending
    # answered and wrong at threshold t: the live questions with score >= t (counted from the top down)
    order = np.sort(s[live])
    wrong_scores = np.sort(s[live & ~r])
    answered_at = (order.size - np.searchsorted(order, thresholds, side="left")).astype(int)
    wrong_at = wrong_scores.size - np.searchsorted(wrong_scores, thresholds, side="left")
    coverage = answered_at / n if n else answered_at.astype(float)
    risk = wrong_at / answered_at
    widths = coverage - np.append(coverage[1:], 0.0)
    aurc = float(np.sum(widths * risk)) if thresholds.size else float("nan")
    return RiskCoverage(thresholds=tuple(thresholds.tolist()), coverage=tuple(coverage.tolist()),
                        risk=tuple(risk.tolist()), answered=tuple(answered_at.tolist()), aurc=aurc, n=n)
