"""The rate estimates of :mod:`rag_lab.experiments.calibration.calibrate`: Wilson intervals for the knobs read as plain
proportions, and the maximum-likelihood fits of the budget knobs (spinning and anchoring jointly; thrift given
premature stop, anchoring and bridge drop) with their posterior-draw intervals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy.stats import binomtest

from rag_lab.experiments.calibration.result import USES, RateEstimate
from rag_lab.stats.paired import percentile_interval


def wilson_interval(fired: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The Wilson score interval (no continuity correction) of a binomial proportion ``fired / n``,
    ``scipy.stats.binomtest``'s; NaNs when ``n`` is 0."""
    if n <= 0:
        return (math.nan, math.nan)
    ci = binomtest(int(fired), int(n)).proportion_ci(confidence_level=1 - alpha, method="wilson")
    return (float(ci.low), float(ci.high))


def proportion_estimate(knob: str, role: str, tally: list[int], uses: str, in_profile: bool = True,
              alpha: float = 0.05) -> RateEstimate:
    fired, n = tally
    lo, hi = wilson_interval(fired, n, alpha)
    return RateEstimate(knob, role, fired, n, fired / n if n else math.nan, lo, hi, uses, in_profile)


class _Binomial(NamedTuple):
    fired: int
    n: int


def _loglik(grid: np.ndarray, k: float, n: int) -> np.ndarray:
    p = np.clip(grid, 1e-9, 1 - 1e-9)
    return k * np.log(p) + (n - k) * np.log1p(-p)


_GRID = np.linspace(0.0, 1.0, 201)


def _fit_u_a(b: _Binomial, c: _Binomial, d: _Binomial) -> tuple[float, float]:
    """Maximum likelihood of ``u`` (re-search rate with the budget spent) and ``a`` (anchoring) from the
    three binomial counts: B ~ u, C ~ u + (1 - u)·a, D ~ a, on a 201×201 grid over [0, 1]²."""
    u, a = np.meshgrid(_GRID, _GRID, indexing="ij")
    total = _loglik(u, b.fired, b.n) + _loglik(u + (1 - u) * a, c.fired, c.n) + _loglik(a, d.fired, d.n)
    i, j = np.unravel_index(int(np.argmax(total)), total.shape)
    return float(_GRID[i]), float(_GRID[j])


def budget_knobs(tallies: Any, min_n: int, alpha: float, n_boot: int = 400) -> dict[str, tuple[RateEstimate | None, str]]:
    """``synonym_spinning`` and ``budget_anchoring`` from the controller calls by what the reader finds and what
    the prompt states (A: sufficient, no budget → s; B: sufficient, budget spent → s; C: sufficient, budget
    unspent → s + (1 - s)a; D: insufficient, budget unspent → a). Spinning is the plain proportion of A
    (Wilson interval); s and a are fitted jointly by maximum likelihood from A+B, C and D; the interval of a
    is the percentiles of refits on category rates drawn from each count's Jeffreys posterior,
    Beta(fired + ½, missed + ½) (a plain parametric bootstrap collapses to a point when a count is 0 of n)."""
    A, B, C, D = (_Binomial(*tallies.get(k, "controller")) for k in ("spinning", "spinning_spent",
                                                                     "anchoring_sufficient", "budget_anchoring"))
    S = _Binomial(A.fired + B.fired, A.n + B.n)
    out: dict[str, tuple[RateEstimate | None, str]] = {}
    spinning = proportion_estimate("synonym_spinning", "controller", [A.fired, A.n], USES["synonym_spinning"], alpha=alpha)
    out["synonym_spinning"] = (spinning, "" if A.n >= min_n else too_few(A.n, min_n))
    a_ok = D.n >= min_n or (C.n >= min_n and S.n >= min_n)
    if not a_ok:
        why = ("no controller call with a stated budget (disclosure.disclosed=true) in these traces" if not B.n + C.n + D.n
               else f"too few calls with a stated budget ({B.n} sufficient & spent, {C.n} sufficient & left, "
                    f"{D.n} insufficient & left; minimum {min_n})")
        return {**out, "budget_anchoring": (None, why)}
    _, a = _fit_u_a(S, C, D)
    rng = np.random.default_rng(0)
    boot_a = []
    for _ in range(n_boot):  # each category's rate drawn from its Jeffreys posterior, then refitted
        draw = [_Binomial(rng.beta(x.fired + 0.5, x.n - x.fired + 0.5) * x.n if x.n else 0, x.n)  # type: ignore[arg-type]
                for x in (S, C, D)]
        boot_a.append(_fit_u_a(*draw)[1])
    a_lo, a_hi = percentile_interval(np.array(boot_a), alpha)
    used_c = C if (D.n < min_n or S.n >= min_n) else _Binomial(0, 0)
    out["budget_anchoring"] = (RateEstimate("budget_anchoring", "controller", D.fired + used_c.fired, D.n + used_c.n,
                                            a, a_lo, a_hi, USES["budget_anchoring"]), "")
    return out


def _thrift_mle(stopped: np.ndarray, partial: np.ndarray, left: np.ndarray, bridge: np.ndarray, p: float, a: float,
                b: float) -> float:
    """The grid value of ``t`` that maximises the likelihood of the thrift calls given ``p``, ``a``, ``b``."""
    base = partial * p * (1 - a * left)                              # stops that are not thrift's
    scale = np.where(partial > 0, (1 - p) * (1 - b * bridge), 1.0)  # the chance thrift is reached
    q = np.clip(base[None, :] + scale[None, :] * _GRID[:, None], 1e-9, 1 - 1e-9)
    loglik = (stopped * np.log(q) + (1 - stopped) * np.log1p(-q)).sum(axis=1)
    return float(_GRID[int(np.argmax(loglik))])


def fit_thrift(calls: list[tuple[bool, bool, bool, bool]], given: Sequence[RateEstimate | None], min_n: int,
                alpha: float, n_boot: int = 400) -> tuple[RateEstimate | None, str]:
    """``budget_thrift`` by maximum likelihood on a grid over [0, 1] from the calls where it applies (see the
    module doc): a call stops with probability ``t`` on a single-part search, ``p(1 - a·left) + (1 - p)(1 -
    b·bridge)·t`` on a partly covered question, given the estimates ``given`` of ``p`` (premature stop),
    ``a`` (anchoring), ``b`` (bridge drop). Most stops on partly covered questions are premature stops, so
    ``t`` leans on ``p``: the estimate and its interval are the median and percentiles of refits on the calls
    resampled with replacement and ``p``, ``a``, ``b`` drawn from their counts' Jeffreys posteriors. (The plug-in
    fit at the point rates can sit at a boundary none of the refits reaches — 0 against [0.184, 1] on the MuSiQue
    disclosure traces — which would print an estimate outside its own interval.)"""
    if len(calls) < min_n:
        return None, ("no controller call with a stated budget where the evidence settles (disclosure.disclosed=true)"
                      if not calls else f"{len(calls)} opportunities < {min_n}")
    if any(e is None or math.isnan(e.rate) for e in given):
        return None, "premature_stop, budget_anchoring or bridge_drop not estimated (thrift is fitted given them)"
    cols = [np.array([c[k] for c in calls], dtype=float) for k in range(4)]
    rng = np.random.default_rng(0)
    boot = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(calls), len(calls))
        rates = [rng.beta(e.fired + 0.5, e.opportunities - e.fired + 0.5) for e in given]  # type: ignore[union-attr]
        boot.append(_thrift_mle(*(c[idx] for c in cols), *rates))
    t, (lo, hi) = float(np.quantile(np.array(boot), 0.5)), percentile_interval(np.array(boot), alpha)
    return (RateEstimate("budget_thrift", "controller", int(cols[0].sum()), len(calls), t, lo, hi,
                         USES["budget_thrift"]), "")


def too_few(n: int, min_n: int) -> str:
    return "no opportunities in these traces" if n == 0 else f"{n} opportunities < {min_n}"
