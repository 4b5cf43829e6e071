"""Significance tests for paired differences on the same questions: the exact sign / McNemar test and the
sign-flip permutation test (:func:`paired_test`), Holm's correction (:func:`holm`), the equivalence test (TOST,
:func:`equivalence_test`) and the one test of a claim (:func:`claim_test`). The method and each test's measured
size: docs/decisions.md. Kept by hand, each checked against scipy in tests/test_stats_against_scipy.py."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from scipy import stats as _stats

from rag_lab.stats import exact_tests as _exact
from rag_lab.stats.paired import EQUAL_TOL, PairedDifference, _matrix, interval_text, paired_difference, paired_means

Alternative = Literal["two-sided", "greater", "less"]
Method = Literal["exact", "permutation"]
ALTERNATIVES = ("two-sided", "greater", "less")
METHODS = ("exact", "permutation")
#: Up to this many nonzero differences, the permutation test enumerates all 2^m sign patterns.
EXACT_MAX = 16
#: Random sign patterns of the Monte-Carlo permutation test (above :data:`EXACT_MAX`).
N_PERMUTATIONS = 20000
#: The largest sum of lattice steps :func:`lattice_sign_flip_p` convolves (its cost grows with questions × this).
LATTICE_MAX = 100_000


@dataclass(frozen=True)
class PairedTest:
    """A paired test of ``values − reference`` over the same questions.

    ``p`` is the test's p-value against ``alternative`` ("greater": values above reference); ``delta`` the
    mean per-question difference with its paired bootstrap interval ``[lo, hi]``; ``n`` the questions
    defined on both sides; ``n_better`` / ``n_worse`` those on which ``values`` is above / below
    ``reference`` (the rest are ties); ``method`` ``"exact"`` (sign / McNemar), ``"permutation"`` (all sign
    patterns enumerated) or ``"permutation_mc"`` (``n_permutations`` random ones); ``difference`` the full
    :class:`~rag_lab.stats.paired.PairedDifference` (means of each side, share that differ)."""

    p: float
    delta: float
    lo: float
    hi: float
    n: int
    n_seeds: int
    n_better: int
    n_worse: int
    method: str
    alternative: str
    n_permutations: int = 0
    difference: PairedDifference | None = field(default=None, repr=False)

    def text(self, decimals: int = 3) -> str:
        """``+0.033 [+0.008, +0.067], p=0.125 (exact, 4↑ 0↓ of 120)``."""
        if self.n == 0:
            return "undefined (no question defined on both sides)"
        return (f"{interval_text(vars(self), decimals)}, {p_clause(self.p)} "
                f"({self.method}, {self.n_better}↑ {self.n_worse}↓ of {self.n})")


@dataclass(frozen=True)
class EquivalenceTest:
    """TOST of ``|values − reference| < margin``: ``p`` = max of the two one-sided p-values ``p_lower``
    (H0 Δ ≤ −margin) and ``p_upper`` (H0 Δ ≥ +margin); ``method`` ``"exact"`` (wins and losses of a −1/0/+1
    difference, :mod:`rag_lab.stats.exact_tests`), ``"permutation"`` (two sign-flip permutation tests of the
    differences shifted by ``∓margin``; ``se`` the standard error, ``df`` ``n − 1``, both for reference) or
    ``"refused"`` (a difference with no spread: p = 1, ``note`` says why). Equivalence is shown at level α when ``p < α``."""

    p: float
    p_lower: float
    p_upper: float
    margin: float
    delta: float
    se: float
    n: int
    df: int
    binary: bool
    method: str = "permutation"
    note: str = ""

    def text(self, decimals: int = 3) -> str:
        """``Δ=+0.004 within ±0.05: p=0.003 (TOST exact, n=120)``."""
        text = f"Δ={self.delta:+.{decimals}f} within ±{self.margin:g}: {p_clause(self.p)} (TOST {self.method}, n={self.n})"
        return f"{text}; {self.note}" if self.note else text


def p_text(p: float) -> str:
    """A p-value as printed: ``0.125``, ``0.0031``, ``<0.0001``, ``–`` when undefined."""
    if p != p:
        return "–"
    if p < 1e-4:
        return "<0.0001"
    return f"{p:.4f}" if p < 0.01 else f"{p:.3f}"


def p_clause(p: float, name: str = "p") -> str:
    """``p=0.125``, ``p<0.0001``: a p-value with its relation sign, as written in a sentence."""
    text = p_text(p)
    return f"{name}{text}" if text.startswith("<") else f"{name}={text}"


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")


def sign_test_p(n_better: int, n_worse: int, alternative: Alternative = "two-sided") -> float:
    """Exact sign test (McNemar's exact test for 0/1 outcomes), ``scipy.stats.binomtest``: ``n_better ~
    Bin(n_better + n_worse, ½)`` under "no effect" (two-sided: twice the smaller tail, capped at 1); no
    discordant pair gives 1."""
    _check_alternative(alternative)
    m = n_better + n_worse
    return 1.0 if m == 0 else float(_stats.binomtest(n_better, m, 0.5, alternative=alternative).pvalue)


def _sign_patterns(m: int) -> np.ndarray:
    """All ``2^m`` patterns of ±1 over ``m`` questions, one per row."""
    bits = (np.arange(2**m)[:, None] >> np.arange(m)[None, :]) & 1
    return 1.0 - 2.0 * bits


def _lattice_steps(nonzero: np.ndarray) -> np.ndarray | None:
    """``|nonzero|`` as whole multiples of one step (their greatest common divisor when they are whole
    numbers, else the smallest of them), or None when they are not."""
    sizes = np.abs(nonzero)
    whole = np.round(sizes)
    if np.all(np.abs(sizes - whole) <= 1e-9 * np.maximum(1.0, sizes)):
        steps = whole.astype(np.int64)
        return steps // np.gcd.reduce(steps)
    steps = sizes / sizes.min()
    whole = np.round(steps)
    return whole.astype(np.int64) if np.all(np.abs(steps - whole) <= 1e-9 * steps) else None


def lattice_sign_flip_p(d: np.ndarray, alternative: Alternative = "two-sided") -> float | None:
    """The sign-flip permutation p of ``sum(d)`` over *all* ``2^m`` sign patterns of the nonzero differences,
    exactly, when they lie on a lattice (whole multiples of one step: LLM calls, tokens, rounds): the
    distribution of the flipped sum is convolved step by step, so the p can be as small as ``2^-m``, where
    the Monte-Carlo test of :func:`difference_p` stops at ``1 / (N_PERMUTATIONS + 1)``. None when the
    differences are not on a lattice or their steps sum past :data:`LATTICE_MAX`."""
    _check_alternative(alternative)
    d = np.asarray(d, float)
    nonzero = d[np.abs(d) > EQUAL_TOL]
    if nonzero.size == 0:
        return 1.0
    steps = _lattice_steps(nonzero)
    if steps is None or int(steps.sum()) > LATTICE_MAX:
        return None
    total = int(steps.sum())
    pmf = np.zeros(total + 1)     # pmf[k]: chance that the steps flipped to + sum to k
    pmf[0], top = 1.0, 0
    for step in steps:
        pmf[step:top + step + 1] += pmf[:top + 1].copy()
        pmf[:top + step + 1] *= 0.5
        top += int(step)
    observed = int(steps[nonzero > 0].sum())
    upper, lower = float(pmf[observed:].sum()), float(pmf[:observed + 1].sum())
    if alternative == "greater":
        return min(1.0, upper)
    if alternative == "less":
        return min(1.0, lower)
    k = np.arange(total + 1)
    return min(1.0, float(pmf[np.abs(2 * k - total) >= abs(2 * observed - total)].sum()))


def flip_tolerance(abs_sum: Any) -> Any:
    """How close a sign-flipped sum must come to the observed one to count as reaching it, for differences whose
    sizes sum to ``abs_sum`` (a number, or an array of them): 1e-9 of it, and at least 1e-9."""
    return 1e-9 * np.maximum(1.0, abs_sum)


def _permutation_p(d: np.ndarray, alternative: Alternative, n_permutations: int, seed: int,
                   exact_max: int) -> tuple[float, str, int]:
    """Sign-flip permutation p of the sum of the nonzero differences ``d``: all patterns up to ``exact_max``."""
    m = d.size
    observed = float(d.sum())
    tol = float(flip_tolerance(float(np.abs(d).sum())))
    if m <= exact_max:
        sums = _sign_patterns(m) @ d
        method, count, plus_one = "permutation", 2**m, 0
    else:
        rng = np.random.default_rng(seed)
        sums = np.empty(n_permutations)
        for start in range(0, n_permutations, 2000):    # chunks keep memory bounded for large m
            k = min(2000, n_permutations - start)
            sums[start:start + k] = (1.0 - 2.0 * rng.integers(0, 2, size=(k, m))) @ d
        method, count, plus_one = "permutation_mc", n_permutations, 1
    if alternative == "greater":
        hits = int((sums >= observed - tol).sum())
    elif alternative == "less":
        hits = int((sums <= observed + tol).sum())
    else:
        hits = int((np.abs(sums) >= abs(observed) - tol).sum())
    return (hits + plus_one) / (len(sums) + plus_one), method, count


def paired_test(values: Any, reference: Any, *, alternative: Alternative = "two-sided", method: Method | None = None,
                n_permutations: int = N_PERMUTATIONS, seed: int = 0, strata: Any = None, n_boot: int = 2000,
                alpha: float = 0.05, exact_max: int = EXACT_MAX) -> PairedTest:
    """Test ``values − reference`` over the same questions (arrays as :func:`paired_difference` takes: ``(n,)`` or
    ``(n, seeds)``, aligned). ``method=None`` picks the exact sign / McNemar test when every nonzero per-question
    difference has the same size (0/1 metrics, one seed), else the sign-flip permutation test; ``"exact"`` and
    ``"permutation"`` force one. The permutation test enumerates every sign pattern up to ``exact_max`` nonzero
    differences (at most 20), else draws ``n_permutations``. ``strata`` (one label per question) and
    ``n_boot``/``alpha``/``seed`` go to the bootstrap interval the result carries. Deterministic for a seed."""
    _check_alternative(alternative)
    if method is not None and method not in METHODS:
        raise ValueError(f"method must be None or one of {METHODS}, got {method!r}")
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, int) or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}")
    if isinstance(exact_max, bool) or not isinstance(exact_max, int) or not 0 <= exact_max <= 20:
        raise ValueError(f"exact_max must be an integer in [0, 20] (2^exact_max sign patterns), got {exact_max!r}")
    interval = paired_difference(values, reference, n_boot=n_boot, alpha=alpha, seed=seed, strata=strata)
    a, b, n_seeds, _ = paired_means(values, reference)
    d = a - b
    if interval.n == 0:
        return PairedTest(math.nan, math.nan, math.nan, math.nan, 0, n_seeds, 0, 0, method or "exact", alternative,
                          difference=interval)
    p, used, count, n_better, n_worse = difference_p(d, alternative, method=method, n_permutations=n_permutations,
                                                     seed=seed, exact_max=exact_max)
    return PairedTest(p=float(min(1.0, p)), delta=interval.delta, lo=interval.lo, hi=interval.hi, n=interval.n,
                      n_seeds=n_seeds, n_better=n_better, n_worse=n_worse, method=used, alternative=alternative,
                      n_permutations=count, difference=interval)


def difference_p(d: np.ndarray, alternative: Alternative = "two-sided", *, method: Method | None = None,
                 n_permutations: int = N_PERMUTATIONS, seed: int = 0,
                 exact_max: int = EXACT_MAX, lattice: bool = False) -> tuple[float, str, int, int, int]:
    """The p of :func:`paired_test` from the per-question differences ``d`` alone (no interval: what racing
    needs many times a stage): ``(p, method, n_permutations, n_better, n_worse)``. With ``lattice``, a
    permutation test of differences on a lattice is computed exactly (:func:`lattice_sign_flip_p`, method
    ``"permutation_lattice"``) instead of by Monte Carlo: what a level far below ``1 / N_PERMUTATIONS`` needs."""
    d = np.asarray(d, float)
    nonzero = d[np.abs(d) > EQUAL_TOL]
    n_better, n_worse = int((nonzero > 0).sum()), int((nonzero < 0).sum())
    sizes = np.abs(nonzero)
    same_size = nonzero.size == 0 or bool(np.all(np.abs(sizes - sizes[0]) <= EQUAL_TOL))
    if method == "exact" or (method is None and same_size):
        p, used, count = sign_test_p(n_better, n_worse, alternative), "exact", 0
    elif nonzero.size and lattice and nonzero.size > exact_max and (
            exact := lattice_sign_flip_p(nonzero, alternative)) is not None:
        p, used, count = exact, "permutation_lattice", 0
    elif nonzero.size:
        p, used, count = _permutation_p(nonzero, alternative, n_permutations, seed, exact_max)
    else:
        p, used, count = 1.0, "permutation", 1
    return float(min(1.0, p)), used, count, n_better, n_worse


def holm(pvalues: Iterable[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: sorted ascending, the i-th smallest (from 0) of ``m`` is
    multiplied by ``m − i``, then made non-decreasing along that order and capped at 1. A finding of a family of ``m``
    is significant at α when its adjusted p is below α. NaN p-values stay NaN and do not count in ``m``."""
    ps = [float(p) for p in pvalues]
    for p in ps:
        if p == p and not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must lie in [0, 1], got {p!r}")
    order = sorted((i for i, p in enumerate(ps) if p == p), key=lambda i: ps[i])
    m = len(order)
    out = [math.nan] * len(ps)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out


def _is_binary(values: Any, reference: Any) -> bool:
    both = np.concatenate([_matrix(values, "values").ravel(), _matrix(reference, "reference").ravel()])
    both = both[~np.isnan(both)]
    return both.size > 0 and bool(np.all((both == 0.0) | (both == 1.0)))


def equivalence_test(values: Any, reference: Any, margin: float,
                     value_range: tuple[float, float] | None = None) -> EquivalenceTest:
    """TOST of ``−margin < Δ < +margin`` on the per-question differences (see the module doc); ``margin`` in the
    metric's units, stated by the claim (e.g. 0.05 of answer containment). Exact for −1/0/+1 differences; two sign-flip
    permutation tests otherwise (of ``d + margin`` above 0, of ``d − margin`` below 0). A difference without spread is
    refused (p = 1) — unless the metric's ``value_range`` ``(low, high)`` is known (e.g. ``(0, 1)`` for F1 or evidence
    recall): then ``|Δ|`` is at most ``(high − low)`` times the share of questions that differ, and the exact binomial
    test of that share below ``margin / (high − low)`` bounds it (``method="exact bound"``; no question differing of
    ``n`` gives ``(1 − margin/(high − low))^n``). Fewer than 2 questions give p = 1."""
    if not (isinstance(margin, (int, float)) and not isinstance(margin, bool) and 0 < margin and margin == margin):
        raise ValueError(f"margin must be a positive number (the equivalence bound, in the metric's units), got {margin!r}")
    a, b, _, _ = paired_means(values, reference)
    d, n, binary = a - b, int(a.size), _is_binary(values, reference)
    if n < 2:
        return EquivalenceTest(1.0, 1.0, 1.0, float(margin), float(d.mean()) if n else math.nan, math.inf, n, 0, binary,
                               "refused", "fewer than 2 questions")
    delta = float(d.mean())
    se = float(d.std(ddof=1) / math.sqrt(n))
    df = n - 1
    signs = np.round(d)
    if binary and bool(np.all(np.abs(d - signs) <= EQUAL_TOL)):   # 0/1 values, one seed: d is −1, 0 or +1
        if margin >= 1:   # every −1/0/+1 difference lies within ±1: H0 |Δ| ≥ margin holds only at the extremes
            p_lower = p_upper = 0.0 if abs(delta) < margin else 1.0
        else:
            wins, losses = int((signs > 0).sum()), int((signs < 0).sum())
            p_lower, p_upper = _exact.equivalence_p(wins, losses, n, float(margin))
        return EquivalenceTest(p=max(p_lower, p_upper), p_lower=p_lower, p_upper=p_upper, margin=float(margin),
                               delta=delta, se=se, n=n, df=df, binary=binary, method="exact")
    if se <= EQUAL_TOL and value_range is not None:
        width = float(value_range[1]) - float(value_range[0])
        if not width > 0:
            raise ValueError(f"value_range must be (low, high) with low < high, got {value_range!r}")
        differ = int((np.abs(d) > EQUAL_TOL).sum())
        share = min(1.0, margin / width)
        # H0: share differing >= margin/width
        p = 0.0 if share >= 1 else float(_stats.binomtest(differ, n, share, alternative="less").pvalue)
        note = (f"{differ} of {n} questions differ; |Δ| ≤ {width:g} (the range {value_range[0]:g}–{value_range[1]:g}) × "
                "the share that differ")
        return EquivalenceTest(p, p, p, float(margin), delta, se, n, df, binary, "exact bound", note)
    if se <= EQUAL_TOL:
        note = (f"the difference is {delta:+.3g} on every one of the {n} questions: no spread, so no test bounds it "
                "beyond these questions (equivalence not shown)")
        return EquivalenceTest(1.0, 1.0, 1.0, float(margin), delta, se, n, df, binary, "refused", note)
    # H0: Δ <= −margin, then H0: Δ >= +margin: each a sign-flip permutation test of the shifted differences
    p_lower = difference_p(d + margin, "greater", method="permutation")[0]
    p_upper = difference_p(d - margin, "less", method="permutation")[0]
    return EquivalenceTest(p=max(p_lower, p_upper), p_lower=p_lower, p_upper=p_upper, margin=float(margin),
                           delta=delta, se=se, n=n, df=df, binary=binary, method="permutation")


#: The paired test's alternative for a claimed direction.
CLAIM_ALTERNATIVE: dict[str, Alternative] = {"above": "greater", "below": "less", "two-sided": "two-sided"}


@dataclass(frozen=True)
class ClaimTest:
    """The one test of a claim about ``values − reference`` (:func:`claim_test`): ``p`` and its ``method``, the
    paired ``test`` (for the interval and counts) and, for a no-change claim, the ``tost``."""

    p: float
    method: str
    direction: str
    test: PairedTest
    tost: EquivalenceTest | None = None


def claim_test(values: Any, reference: Any, direction: str, margin: float | None = None, *, n_boot: int = 2000,
               seed: int = 0, value_range: tuple[float, float] | None = None) -> ClaimTest:
    """The test of a claim that ``values`` lies ``direction`` of ``reference`` over the same questions: ``"above"`` /
    ``"below"`` one-sided paired tests (:func:`paired_test`, alternative ``greater`` / ``less``), ``"none"`` the TOST
    within ``±margin`` (:func:`equivalence_test`, with the metric's ``value_range``), ``"two-sided"`` (no claimed
    direction: an exploratory Δ table) the two-sided paired test. Every place that tests a claim calls this, so a claim
    has one p wherever it is printed."""
    if direction not in (*CLAIM_ALTERNATIVE, "none"):
        raise ValueError(f"direction must be one of {[*CLAIM_ALTERNATIVE, 'none']}, got {direction!r}")
    if direction == "none":
        if margin is None:
            raise ValueError("a no-change claim needs its equivalence margin")
        test = paired_test(values, reference, n_boot=n_boot, seed=seed)
        tost = equivalence_test(values, reference, float(margin), value_range)
        return ClaimTest(tost.p, f"TOST {tost.method}", direction, test, tost)
    test = paired_test(values, reference, alternative=CLAIM_ALTERNATIVE[direction], n_boot=n_boot, seed=seed)
    return ClaimTest(test.p, test.method, direction, test)
