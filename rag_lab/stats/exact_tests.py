"""Exact tests on paired win/loss counts with a margin: non-inferiority (:func:`noninferiority_p`, H0: ``values``
loses at least ``margin`` more of the questions than it wins) and equivalence (:func:`equivalence_p`, the two
one-sided tests). Unconditional exact tests on the trinomial of wins, losses and ties, in the manner of Barnard
and of Berger & Boos; their size is checked by enumeration (:func:`size`, ``tests/test_paired_tests.py``).
The method: docs/decisions.md, "No change: equivalence (TOST)".

Kept by hand: scipy has no unconditional exact test of a trinomial with a margin; :func:`trinomial_pmf` is
``scipy.stats.multinomial.pmf`` to 1e-12 (tests/test_stats_against_scipy.py), vectorised over the nuisance grid."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import gammaln

#: Points of the nuisance parameter (the boundary's share of losses) the p-value's supremum is taken over.
NUISANCE_POINTS = 401


def _outcomes(n: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.triu_indices(n + 1)          # a <= b, then mirrored: every (wins, losses) with wins + losses <= n
    a, b = b - a, a
    return a.astype(float), b.astype(float)


def statistic(wins: np.ndarray | float, losses: np.ndarray | float, n: int, margin: float) -> np.ndarray:
    """The ordering statistic ``T`` of the module doc (larger: more evidence against ``Δ <= −margin``)."""
    c = n * margin
    return (np.asarray(wins, float) - np.asarray(losses, float) + c) / np.sqrt(np.asarray(wins, float)
                                                                              + np.asarray(losses, float) + c / 2)


def boundary(margin: float, points: int = NUISANCE_POINTS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(p_win, p_loss, p_tie)`` along the null boundary ``p_win − p_loss = −margin``."""
    q = np.linspace(margin, (1 + margin) / 2, points)
    p_win = np.clip(q - margin, 0.0, 1.0)
    p_tie = np.clip(1.0 - q - p_win, 0.0, 1.0)
    return p_win, q, p_tie


def trinomial_pmf(wins: np.ndarray, losses: np.ndarray, n: int, p_win: np.ndarray, p_loss: np.ndarray,
                  p_tie: np.ndarray, log_coef: np.ndarray | None = None) -> np.ndarray:
    """The probability of each ``(wins, losses)`` outcome of ``n`` questions (columns) under each
    ``(p_win, p_loss, p_tie)`` (rows; scalars give one row)."""
    ties = n - wins - losses
    if log_coef is None:
        log_coef = _log_coef(n, wins, losses)
    log = np.broadcast_to(log_coef, (np.atleast_1d(p_win).size, wins.size)).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        for k, p in ((wins, p_win), (losses, p_loss), (ties, p_tie)):
            logp = np.log(np.atleast_1d(np.asarray(p, float)))[:, None]
            log += np.where(k > 0, k * logp, 0.0)
    return np.exp(log)


def _log_coef(n: int, wins: np.ndarray, losses: np.ndarray) -> np.ndarray:
    return gammaln(n + 1) - gammaln(wins + 1) - gammaln(losses + 1) - gammaln(n - wins - losses + 1)


def _rows(size: int) -> int:
    """How many nuisance points to take at once, so that one block holds about 2 million probabilities."""
    return max(1, 2_000_000 // max(size, 1))


@lru_cache(maxsize=64)
def _p_table(n: int, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """The sorted statistics of every outcome of ``n`` questions (descending) and, for each, the exact p-value
    ``max over the boundary of P(T >= t)``."""
    wins, losses = _outcomes(n)
    t = statistic(wins, losses, n, margin)
    order = np.argsort(-t, kind="stable")
    wins, losses, t = wins[order], losses[order], t[order]
    coef = _log_coef(n, wins, losses)
    p = np.zeros(t.size)
    p_win, p_loss, p_tie = boundary(margin)
    step = _rows(t.size)
    for i in range(0, p_win.size, step):
        tails = np.cumsum(trinomial_pmf(wins, losses, n, p_win[i:i + step], p_loss[i:i + step], p_tie[i:i + step],
                                        coef), axis=1)
        np.maximum(p, tails.max(axis=0), out=p)
    return t, np.minimum(p, 1.0)


def noninferiority_p(wins: int, losses: int, n: int, margin: float) -> float:
    """Exact p of H0 ``p_win − p_loss <= −margin`` from ``wins`` and ``losses`` among ``n`` questions (the
    rest tied); see the module doc. ``margin`` in (0, 1); ``n = 0`` gives 1."""
    for name, k in (("wins", wins), ("losses", losses), ("n", n)):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {k!r}")
    if wins + losses > n:
        raise ValueError(f"wins + losses ({wins} + {losses}) exceed the {n} questions")
    if not (isinstance(margin, (int, float)) and 0.0 < margin < 1.0):
        raise ValueError(f"margin must lie in (0, 1) (a share of the questions), got {margin!r}")
    if n == 0:
        return 1.0
    return float(table_p(wins, losses, n, margin))


def table_p(wins: np.ndarray | float, losses: np.ndarray | float, n: int, margin: float) -> np.ndarray:
    """The exact p of each outcome ``(wins, losses)`` of ``n >= 1`` questions, unchecked (what
    :func:`noninferiority_p` returns for one): the table's p of the last outcome whose statistic is >= the
    outcome's own (ties in T count as extreme)."""
    t_sorted, p_sorted = _p_table(int(n), float(margin))
    t = statistic(wins, losses, n, margin)
    index = np.searchsorted(-t_sorted, -t + 1e-12 * np.maximum(1.0, np.abs(t)), side="right") - 1
    return p_sorted[np.maximum(index, 0)]


def equivalence_p(wins: int, losses: int, n: int, margin: float) -> tuple[float, float]:
    """``(p_lower, p_upper)`` of the exact TOST of ``|p_win − p_loss| < margin``: H0 ``Δ <= −margin`` and
    H0 ``Δ >= +margin``. Equivalence is shown at α when both are below α."""
    return noninferiority_p(wins, losses, n, margin), noninferiority_p(losses, wins, n, margin)


def size(n: int, margin: float, alpha: float, points: int = 2001) -> float:
    """The largest probability, along the boundary ``Δ = −margin`` (``points`` nuisance values, finer than the
    test's own), that :func:`noninferiority_p` rejects at ``alpha``: the test's true size, by enumeration."""
    wins, losses = _outcomes(n)
    reject = table_p(wins, losses, n, margin) <= alpha
    wins, losses = wins[reject], losses[reject]
    coef = _log_coef(n, wins, losses)
    p_win, p_loss, p_tie = boundary(margin, points)
    step = _rows(wins.size)
    worst = 0.0
    for i in range(0, p_win.size, step):
        pmf = trinomial_pmf(wins, losses, n, p_win[i:i + step], p_loss[i:i + step], p_tie[i:i + step], coef)
        worst = max(worst, float(pmf.sum(axis=1).max()))
    return worst
