"""Power of the sign-flip permutation test (and of its TOST) for per-question differences of varying size, by
simulation of the test itself: what rounds, LLM calls or F1 differences could have detected.

The model keeps the sample's own sizes and moves only their signs, as the exact sign test's planning does for 0/1
metrics: each simulated question takes a size drawn from the observed ``|d|`` (zeros included), and a nonzero size
is a gain with probability ``q``, so the mean difference is ``Δ = (2q − 1) · mean|d|``. Each simulated sample is
tested as the lab tests it (the sum of the differences against its sign flips). The draws are fixed by ``seed``, so
the power grows with ``Δ`` (or with the margin) and bisection finds the smallest one that reaches the target."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

#: Simulated samples per power estimate, and sign flips per simulated test: the power's Monte Carlo error is at
#: most 0.5 / sqrt(N_SAMPLES) ≈ 0.016.
N_SAMPLES = 1000
N_FLIPS = 1000


@lru_cache(maxsize=64)
def _draws(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fixed random numbers of one power curve: which observed size each simulated question takes, the uniform
    deciding its sign, and the sign flips each simulated test compares its sum with."""
    rng = np.random.default_rng(seed)
    pick = rng.random((N_SAMPLES, n))
    sign_u = rng.random((N_SAMPLES, n))
    flips = (1.0 - 2.0 * rng.integers(0, 2, size=(n, N_FLIPS))).astype(np.float64)
    return pick, sign_u, flips


def _sizes(sizes: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pick, sign_u, flips = _draws(n, seed)
    drawn = np.sort(np.abs(np.asarray(sizes, float)))[np.minimum((pick * len(sizes)).astype(int), len(sizes) - 1)]
    return drawn, sign_u, flips


def _p_greater(x: np.ndarray, flips: np.ndarray) -> np.ndarray:
    """Per row of ``x``: the Monte Carlo sign-flip p of the sum being this large (``+1`` in both counts)."""
    observed = x.sum(axis=1)
    null = x @ flips
    tol = 1e-9 * np.maximum(1.0, np.abs(x).sum(axis=1))
    return (1 + (null >= (observed - tol)[:, None]).sum(axis=1)) / (flips.shape[1] + 1)


def permutation_power(sizes: np.ndarray, n: int, delta: float, alpha: float = 0.05, two_sided: bool = False,
                      seed: int = 0) -> float:
    """The power of the one-sided sign-flip test (``greater``; the other side is its mirror) of ``n`` questions
    whose differences have the observed ``sizes`` (``|d|`` of every question, zeros included) and mean ``delta``
    (see the module doc); ``two_sided`` tests each side at ``alpha / 2``. 0 where ``delta`` exceeds
    ``mean(sizes)``, the largest mean these sizes reach."""
    drawn, sign_u, flips = _sizes(sizes, n, seed)
    mean_size = float(np.mean(np.abs(sizes)))
    if mean_size <= 0 or abs(delta) > mean_size * (1 + 1e-12):
        return 0.0
    q = 0.5 * (1.0 + abs(delta) / mean_size)
    x = np.where(sign_u < q, drawn, -drawn)
    level = alpha / 2 if two_sided else alpha
    return float((_p_greater(x, flips) <= level).mean())


def permutation_detectable_effect(sizes: np.ndarray, n: int, alpha: float = 0.05, power: float = 0.8,
                                  two_sided: bool = False, seed: int = 0) -> float:
    """The smallest ``|Δ|`` the sign-flip test of ``n`` questions shows with ``power`` at ``alpha`` (simulated, see
    the module doc); ``inf`` when even every nonzero difference in the claimed direction does not."""
    top = float(np.mean(np.abs(sizes)))
    if top <= 0 or permutation_power(sizes, n, top, alpha, two_sided, seed) < power:
        return math.inf
    low, high = 0.0, top
    for _ in range(20):
        mid = (low + high) / 2
        if permutation_power(sizes, n, mid, alpha, two_sided, seed) >= power:
            high = mid
        else:
            low = mid
    return high


def permutation_tost_power(sizes: np.ndarray, n: int, margin: float, alpha: float = 0.05, seed: int = 0) -> float:
    """The power of the permutation TOST within ``±margin`` (:func:`~rag_lab.stats.significance.equivalence_test`:
    a sign-flip test of ``d + margin`` above 0 and one of ``d − margin`` below 0, both at ``alpha``) when the true
    difference is 0 (signs even, see the module doc)."""
    drawn, sign_u, flips = _sizes(sizes, n, seed)
    x = np.where(sign_u < 0.5, drawn, -drawn)
    lower = _p_greater(x + margin, flips)
    upper = _p_greater(-(x - margin), flips)
    return float(((lower <= alpha) & (upper <= alpha)).mean())


def permutation_tost_detectable_margin(sizes: np.ndarray, n: int, alpha: float = 0.05, power: float = 0.8,
                                       seed: int = 0) -> float:
    """The smallest margin the permutation TOST of ``n`` questions shows with ``power`` at a true difference of 0
    (simulated, see the module doc); ``inf`` for fewer than 2 questions."""
    if n < 2:
        return math.inf
    high = max(float(np.max(np.abs(sizes))), 1e-9)
    while permutation_tost_power(sizes, n, high, alpha, seed) < power:
        high *= 2
        if high > 1e6:
            return math.inf
    low = 0.0
    for _ in range(20):
        mid = (low + high) / 2
        if permutation_tost_power(sizes, n, mid, alpha, seed) >= power:
            high = mid
        else:
            low = mid
    return high
