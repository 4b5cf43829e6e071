"""Power of the sign-flip permutation test (and of its TOST), by simulation of the test itself, for per-question
differences of varying size (rounds, LLM calls, F1). The model is the exact sign test's planning model
(:func:`rag_lab.stats.power.effect_probabilities`) with the sample's own share of differing questions and
sizes; the draws are fixed by ``seed``, so bisection finds the smallest effect that reaches the target.
Kept by hand: scipy has no power of a permutation test."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from rag_lab.stats.significance import flip_tolerance

#: Simulated samples per power estimate, and sign flips per simulated test: the power's Monte Carlo error is at
#: most 0.5 / sqrt(N_SAMPLES) ≈ 0.016.
N_SAMPLES = 1000
N_FLIPS = 1000


@lru_cache(maxsize=64)
def _draws(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The fixed random numbers of one power curve: whether each simulated question differs, which observed size it
    takes, the uniform deciding its sign, and the sign flips each simulated test compares its sum with."""
    rng = np.random.default_rng(seed)
    differs = rng.random((N_SAMPLES, n))
    pick = rng.random((N_SAMPLES, n))
    sign_u = rng.random((N_SAMPLES, n))
    flips = (1.0 - 2.0 * rng.integers(0, 2, size=(n, N_FLIPS))).astype(np.float64)
    return differs, pick, sign_u, flips


def _nonzero(sizes: np.ndarray) -> tuple[np.ndarray, float]:
    """The nonzero sizes, sorted, and the share of questions they are."""
    sizes = np.abs(np.asarray(sizes, float))
    nonzero = np.sort(sizes[sizes > 0])
    return nonzero, nonzero.size / max(1, sizes.size)


def _sample(sizes: np.ndarray, n: int, delta: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The simulated studies of mean difference ``|delta|`` (rows) and the sign flips to test them with."""
    differs, pick, sign_u, flips = _draws(n, seed)
    nonzero, share = _nonzero(sizes)
    m = float(nonzero.mean())
    delta = abs(delta)
    if delta <= share * m:
        share_now, q = share, 0.5 * (1.0 + delta / (share * m))
    else:   # every differing question a gain, and more of them
        share_now, q = min(1.0, delta / m), 1.0
    drawn = nonzero[np.minimum((pick * nonzero.size).astype(int), nonzero.size - 1)]
    x = np.where(differs < share_now, np.where(sign_u < q, drawn, -drawn), 0.0)
    return x, flips


def smallest(power_at: Callable[[float], float], target: float, low: float = 1e-4, high: float = 1.0,
             steps: int = 40) -> float:
    """The smallest value in ``(low, high]`` where ``power_at`` reaches ``target`` (bisection; power grows with it),
    ``inf`` when even ``high`` does not."""
    if power_at(high) < target:
        return math.inf
    for _ in range(steps):
        mid = (low + high) / 2
        if power_at(mid) >= target:
            high = mid
        else:
            low = mid
    return high


def _p_greater(x: np.ndarray, flips: np.ndarray) -> np.ndarray:
    """Per row of ``x``: the Monte Carlo sign-flip p of the sum being this large (``+1`` in both counts; ties within
    the test's own :func:`~rag_lab.stats.significance.flip_tolerance`)."""
    observed = x.sum(axis=1)
    null = x @ flips
    tol = flip_tolerance(np.abs(x).sum(axis=1))
    return (1 + (null >= (observed - tol)[:, None]).sum(axis=1)) / (flips.shape[1] + 1)


def permutation_power(sizes: np.ndarray, n: int, delta: float, alpha: float = 0.05, two_sided: bool = False,
                      seed: int = 0) -> float:
    """The power of the one-sided sign-flip test (``greater``; the other side is its mirror) of ``n`` questions
    whose differences have the observed ``sizes`` (``|d|`` of every question, zeros included) and mean ``delta``
    (see the module doc); ``two_sided`` tests each side at ``alpha / 2``. 0 where no question differs or
    ``delta`` exceeds the mean nonzero size (every question a gain)."""
    nonzero, _ = _nonzero(sizes)
    if nonzero.size == 0 or abs(delta) > float(nonzero.mean()) * (1 + 1e-12):
        return 0.0
    x, flips = _sample(sizes, n, delta, seed)
    level = alpha / 2 if two_sided else alpha
    return float((_p_greater(x, flips) <= level).mean())


def permutation_detectable_effect(sizes: np.ndarray, n: int, alpha: float = 0.05, power: float = 0.8,
                                  two_sided: bool = False, seed: int = 0) -> float:
    """The smallest ``|Δ|`` the sign-flip test of ``n`` questions shows with ``power`` at ``alpha`` (simulated, see
    the module doc); ``inf`` when even every nonzero difference in the claimed direction does not."""
    nonzero, _ = _nonzero(sizes)
    top = float(nonzero.mean()) if nonzero.size else 0.0
    if top <= 0:
        return math.inf
    return smallest(lambda d: permutation_power(sizes, n, d, alpha, two_sided, seed), power, 0.0, top, steps=20)


def permutation_tost_power(sizes: np.ndarray, n: int, margin: float, alpha: float = 0.05, seed: int = 0) -> float:
    """The power of the permutation TOST within ``±margin`` (:func:`~rag_lab.stats.significance.equivalence_test`:
    a sign-flip test of ``d + margin`` above 0 and one of ``d − margin`` below 0, both at ``alpha``) when the true
    difference is 0 (signs even, see the module doc)."""
    x, flips = _sample(sizes, n, 0.0, seed)
    lower = _p_greater(x + margin, flips)
    upper = _p_greater(-(x - margin), flips)
    return float(((lower <= alpha) & (upper <= alpha)).mean())


def permutation_tost_detectable_margin(sizes: np.ndarray, n: int, alpha: float = 0.05, power: float = 0.8,
                                       seed: int = 0) -> float:
    """The smallest margin the permutation TOST of ``n`` questions shows with ``power`` at a true difference of 0
    (simulated, see the module doc); ``inf`` for fewer than 2 questions."""
    if n < 2 or not _nonzero(sizes)[0].size:
        return math.inf
    high = max(float(np.max(np.abs(sizes))), 1e-9)
    while permutation_tost_power(sizes, n, high, alpha, seed) < power:
        high *= 2
        if high > 1e6:
            return math.inf
    return smallest(lambda margin: permutation_tost_power(sizes, n, margin, alpha, seed), power, 0.0, high, steps=20)
