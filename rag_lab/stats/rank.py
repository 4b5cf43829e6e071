"""Rank agreement between two scorings of the same candidates: Kendall's τ-b and a bootstrap interval
over questions (``rag-lab verify``: simulated vs real means).

Kendall's τ-b is ``scipy.stats.kendalltau``. The bootstrap is kept: it draws ``scipy.stats.bootstrap``'s resamples,
but drops those where τ is undefined (a side constant) and says how many, where scipy's interval would be NaN."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from scipy.stats import kendalltau

from rag_lab.stats.paired import percentile_interval


@contextmanager
def nan_quiet() -> Iterator[None]:
    """Silence numpy's 'mean of empty slice' warning (an all-NaN question is NaN, as intended)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's τ-b of two score vectors (NaN when either side is constant or has fewer than 2 values)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if x.size < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan
    return float(kendalltau(x, y).statistic)


def rank_agreement(sim: np.ndarray, real: np.ndarray, n_boot: int = 1000, alpha: float = 0.05,
                   seed: int = 0) -> tuple[float, float, float, float]:
    """``(tau, lo, hi, defined)``: Kendall's τ-b between the candidates' simulated and real means
    (``sim``/``real``: questions × candidates), and a percentile bootstrap interval from resampling the
    questions jointly for both; ``defined`` is the share of resamples where τ exists."""
    with nan_quiet():
        tau = kendall_tau(np.nanmean(sim, axis=0), np.nanmean(real, axis=0))
        rng = np.random.default_rng(seed)
        n = sim.shape[0]
        taus = []
        for _ in range(n_boot):
            idx = rng.integers(0, n, size=n)
            taus.append(kendall_tau(np.nanmean(sim[idx], axis=0), np.nanmean(real[idx], axis=0)))
    arr = np.array([t for t in taus if not math.isnan(t)])
    if not arr.size:
        return tau, math.nan, math.nan, 0.0
    return (tau, *percentile_interval(arr, alpha), arr.size / n_boot)
