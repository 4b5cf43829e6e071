"""The lab's statistics against ``scipy.stats``, on many inputs (hypothesis): where the lab calls scipy (the sign
test, the binomial bound, Wilson's interval, Kendall's τ) the call is the right one; where it keeps its own (the
enumerated and lattice sign flips, the bootstrap intervals, the exact bound ``1 − α^(1/n)``, the trinomial, the
sign test's critical counts, Holm) it gives scipy's numbers wherever scipy computes the same thing. Why each is
kept: the module docstrings of rag_lab/stats/."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from rag_lab.experiments.calibration.fits import wilson_interval
from rag_lab.stats import exact_tests as exact
from rag_lab.stats import power
from rag_lab.stats.paired import paired_difference, ratio_interval, unpaired_difference
from rag_lab.stats.rank import kendall_tau, rank_agreement
from rag_lab.stats.significance import difference_p, equivalence_test, holm, lattice_sign_flip_p, paired_test
from rag_lab.stats.summary import bootstrap_ci

PROPERTY = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
ALTERNATIVES = st.sampled_from(["two-sided", "greater", "less"])
ALPHAS = st.sampled_from([0.05, 0.01, 0.1, 0.2, 0.05 / 3])
SEEDS = st.integers(0, 2**32 - 1)
#: Differences whose sums are exact in floating point (multiples of 1/8), so no two tolerances can disagree on a tie.
DYADIC = st.integers(-40, 40).map(lambda k: k / 8)
NUMBERS = st.floats(-100, 100, allow_nan=False, allow_subnormal=False)


def _sum(x: np.ndarray, axis: int) -> np.ndarray:
    return np.sum(x, axis=axis)


def scipy_sign_flip_p(d: np.ndarray, alternative: str) -> float:
    """scipy's sign-flip test of ``sum(d)`` (one sample, ``permutation_type="samples"``), every pattern enumerated."""
    return float(stats.permutation_test((np.asarray(d, float),), _sum, permutation_type="samples", n_resamples=np.inf,
                                        alternative=alternative).pvalue)


# ---------------------------------------------------------------- paired tests


@PROPERTY
@given(st.lists(st.sampled_from([(0, 0), (1, 1), (1, 0), (0, 1)]), min_size=1, max_size=80), ALTERNATIVES)
def test_the_sign_test_of_0_1_outcomes_is_scipys_binomtest_on_the_discordant_pairs(pairs, alternative):
    values, reference = np.array(pairs, float).T
    t = paired_test(values, reference, alternative=alternative, n_boot=20)
    better, worse = int(((values == 1) & (reference == 0)).sum()), int(((values == 0) & (reference == 1)).sum())
    m = better + worse
    assert (t.method, t.n_better, t.n_worse) == ("exact", better, worse)
    assert t.p == (stats.binomtest(better, m, 0.5, alternative=alternative).pvalue if m else 1.0)
    # the binomial tails written out: twice the smaller one for two-sided, capped at 1
    tails = {"greater": sum(math.comb(m, i) for i in range(better, m + 1)) / 2**m,
             "less": sum(math.comb(m, i) for i in range(better + 1)) / 2**m}
    tails["two-sided"] = min(1.0, 2 * min(tails.values()))
    assert t.p == pytest.approx(tails[alternative], rel=1e-12)


@PROPERTY
@given(st.lists(DYADIC, min_size=2, max_size=10), ALTERNATIVES)   # scipy refuses a single question
def test_the_enumerated_sign_flip_p_is_scipys_exact_permutation_test(d, alternative):
    d = np.array(d)
    p, method, count, _, _ = difference_p(d, alternative, method="permutation")
    nonzero = int((d != 0).sum())
    assert (method, count) == (("permutation", 2**nonzero) if nonzero else ("permutation", 1))
    assert p == scipy_sign_flip_p(d, alternative)   # zeros flip to themselves: the same share of patterns


@PROPERTY
@given(st.integers(2, 12), SEEDS, ALTERNATIVES)
def test_the_enumerated_sign_flip_p_of_continuous_differences_is_scipys(m, seed, alternative):
    d = np.random.default_rng(seed).normal(0.3, 1.0, m)
    assert difference_p(d, alternative, method="permutation")[0] == scipy_sign_flip_p(d, alternative)


def test_where_scipy_splits_a_zero_sum_by_rounding_the_lab_does_not():
    """Why the enumeration is kept: per-question means over three seeds whose sum is 0 (computed as −5.6e-17).
    scipy's tie tolerance is relative to that sum, so it counts some of the zero-sum patterns and not others."""
    d = np.array([-1 / 3, -1 / 3, -1 / 3, 2 / 3, 1 / 3])
    assert difference_p(d, "two-sided", method="permutation")[0] == 1.0
    assert scipy_sign_flip_p(d, "two-sided") < 1.0, "scipy now ties a zero sum: permutation_test could replace it"


@settings(max_examples=12, deadline=None, database=None)
@given(st.integers(6, 12), SEEDS, ALTERNATIVES)
def test_the_monte_carlo_p_is_within_its_error_of_scipys_exact_p(m, seed, alternative):
    d = np.random.default_rng(seed).normal(0.4, 1.0, m)
    exact_p = scipy_sign_flip_p(d, alternative)
    mc, method, count, _, _ = difference_p(d, alternative, method="permutation", exact_max=0, n_permutations=4000,
                                           seed=seed % 1000)
    assert (method, count) == ("permutation_mc", 4000)
    assert abs(mc - exact_p) < 5 * math.sqrt(exact_p * (1 - exact_p) / 4000) + 1 / 4001


@PROPERTY
@given(st.lists(st.integers(-6, 6), min_size=2, max_size=12), st.sampled_from([1.0, 3.0, 250.0]), ALTERNATIVES)
def test_the_lattice_p_is_scipys_exact_permutation_test(steps, unit, alternative):
    d = np.array(steps, float) * unit
    assert lattice_sign_flip_p(d, alternative) == pytest.approx(scipy_sign_flip_p(d, alternative), rel=1e-12)


@PROPERTY
@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_holm_lies_between_scipys_benjamini_hochberg_and_bonferroni(ps):
    """scipy has no Holm; its BH (``false_discovery_control``) is below Holm and Bonferroni above it, pointwise."""
    adjusted = np.array(holm(ps))
    assert np.all(adjusted >= stats.false_discovery_control(ps, method="bh") - 1e-12)
    assert np.all(adjusted <= np.minimum(1.0, len(ps) * np.array(ps)) + 1e-12)
    smallest = int(np.argmin(ps))
    assert adjusted[smallest] == pytest.approx(min(1.0, len(ps) * ps[smallest]))


@PROPERTY
@given(st.integers(2, 300), st.floats(0.005, 0.3), st.sampled_from([1.0, 2.0, 10.0]))
def test_the_exact_bound_of_a_difference_without_spread_is_scipys_binomtest(n, margin, width):
    t = equivalence_test(np.full(n, 0.5), np.full(n, 0.5), margin, value_range=(0.0, width))
    share = margin / width
    assert t.method == "exact bound"
    assert t.p == stats.binomtest(0, n, share, alternative="less").pvalue == pytest.approx((1 - share) ** n, rel=1e-9)


# ---------------------------------------------------------------- power


@settings(max_examples=25, deadline=None, database=None)
@given(st.integers(1, 150), ALPHAS, ALTERNATIVES)
def test_the_critical_counts_of_the_power_calculation_are_where_scipys_binomtest_rejects(d, alpha, alternative):
    critical = int(power._critical_wins(d, alpha, alternative)[d])
    for wins in range(d + 1):
        rejects = stats.binomtest(wins, d, 0.5, alternative=alternative).pvalue <= alpha
        counted = {"greater": wins >= critical, "less": d - wins >= critical,
                   "two-sided": wins >= critical or d - wins >= critical}[alternative]
        assert rejects == counted, (wins, d, critical)


@PROPERTY
@given(st.integers(1, 3000), ALPHAS)
def test_the_no_difference_bound_is_scipys_one_sided_clopper_pearson(n, alpha):
    ci = stats.binomtest(0, n, alternative="less").proportion_ci(confidence_level=1 - alpha, method="exact")
    assert ci.low == 0.0 and power.no_difference_bound(n, alpha) == pytest.approx(ci.high, rel=1e-9)


@PROPERTY
@given(st.integers(1, 60), st.floats(0, 1), st.floats(0, 1))
def test_the_trinomial_pmf_is_scipys_multinomial(n, p_win, share):
    p_loss = share * (1 - p_win)
    p_tie = 1 - p_win - p_loss
    wins, losses = exact._outcomes(n)
    ours = exact.trinomial_pmf(wins, losses, n, np.array([p_win]), np.array([p_loss]), np.array([p_tie]))[0]
    theirs = stats.multinomial.pmf(np.stack([wins, losses, n - wins - losses], axis=1), n, [p_win, p_loss, p_tie])
    assert np.allclose(ours, theirs, rtol=1e-9, atol=1e-300)


# ---------------------------------------------------------------- bootstrap intervals (the same resamples as scipy's)


def scipy_percentile(data: tuple[np.ndarray, ...], statistic, n_boot: int, alpha: float, seed: int,
                     paired: bool = False) -> tuple[float, float]:
    ci = stats.bootstrap(data, statistic, n_resamples=n_boot, confidence_level=1 - alpha, method="percentile",
                         paired=paired, rng=np.random.default_rng(seed)).confidence_interval
    return float(ci.low), float(ci.high)


@PROPERTY
@given(st.lists(NUMBERS, min_size=2, max_size=40), st.integers(2, 400), ALPHAS, SEEDS)
def test_bootstrap_ci_is_scipys_percentile_bootstrap(values, n_boot, alpha, seed):
    scale = max(1.0, max(abs(v) for v in values))
    ours = bootstrap_ci(values, n_boot=n_boot, alpha=alpha, seed=seed)
    assert ours == pytest.approx(scipy_percentile((np.array(values),), np.mean, n_boot, alpha, seed), abs=1e-12 * scale)


@PROPERTY
@given(st.lists(st.tuples(NUMBERS, NUMBERS), min_size=2, max_size=40), st.integers(2, 400), ALPHAS, SEEDS)
def test_the_paired_and_unpaired_intervals_are_scipys_percentile_bootstrap(pairs, n_boot, alpha, seed):
    a, b = np.array(pairs).T
    scale = max(1.0, float(np.abs(a).max() + np.abs(b).max()))
    paired = paired_difference(a, b, n_boot=n_boot, alpha=alpha, seed=seed)
    want = scipy_percentile((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), n_boot, alpha, seed, paired=True)
    assert (paired.lo, paired.hi) == pytest.approx(want, abs=1e-12 * scale)
    want = scipy_percentile((a, b), lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis), n_boot, alpha,
                            seed)
    assert unpaired_difference(a, b, n_boot=n_boot, alpha=alpha, seed=seed)[1:] == pytest.approx(want, abs=1e-12 * scale)


@PROPERTY
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(1, 3)), min_size=2, max_size=40), st.integers(2, 400),
       ALPHAS, SEEDS)
def test_the_ratio_interval_is_scipys_paired_percentile_bootstrap(pairs, n_boot, alpha, seed):
    """Denominators all positive: no resample leaves the ratio undefined, so none is dropped."""
    numerator, denominator = np.array(pairs, float).T
    want = scipy_percentile((numerator, denominator), lambda x, y, axis: np.sum(x, axis=axis) / np.sum(y, axis=axis),
                            n_boot, alpha, seed, paired=True)
    assert ratio_interval(numerator, denominator, n_boot, alpha, seed) == pytest.approx(want, abs=1e-12)


def _tau_of_means(sim: np.ndarray, real: np.ndarray, axis: int) -> np.ndarray:
    """Kendall's τ of the candidates' means: ``(candidates, questions)`` or ``(candidates, resamples, questions)``."""
    s, r = sim.mean(axis=axis), real.mean(axis=axis)
    if s.ndim == 1:
        return stats.kendalltau(s, r).statistic
    return np.array([stats.kendalltau(s[:, b], r[:, b]).statistic for b in range(s.shape[1])])


@settings(max_examples=15, deadline=None, database=None)
@given(st.integers(2, 30), st.integers(3, 6), st.integers(2, 200), SEEDS)
def test_rank_agreement_is_scipys_paired_percentile_bootstrap_where_tau_is_always_defined(n, k, n_boot, seed):
    """Continuous scores: no resample leaves τ undefined, so none is dropped (rank_agreement's resamples are scipy's)."""
    rng = np.random.default_rng(seed)
    sim = rng.normal(size=(n, k))
    real = sim + rng.normal(size=(n, k))
    tau, lo, hi, defined = rank_agreement(sim, real, n_boot=n_boot, seed=seed)
    ci = stats.bootstrap((sim, real), _tau_of_means, paired=True, axis=0, n_resamples=n_boot, confidence_level=0.95,
                         method="percentile", rng=np.random.default_rng(seed)).confidence_interval
    assert defined == 1.0 and tau == stats.kendalltau(sim.mean(axis=0), real.mean(axis=0)).statistic
    assert (lo, hi) == pytest.approx((ci.low, ci.high), abs=1e-12)


# ---------------------------------------------------------------- what the lab calls scipy for


@PROPERTY
@given(st.integers(1, 500), st.floats(0, 1), ALPHAS)
def test_wilson_interval_is_the_score_interval_without_continuity_correction(n, share, alpha):
    """scipy's ``method="wilson"``: the bounds are where the score test's ``|k/n − p| = z·sqrt(p(1 − p)/n)``."""
    k = round(share * n)
    lo, hi = wilson_interval(k, n, alpha)
    z = stats.norm.ppf(1 - alpha / 2)
    for bound, at_edge, edge in ((lo, k == 0, 0.0), (hi, k == n, 1.0)):
        if at_edge:
            assert bound == edge
        else:
            assert abs(k / n - bound) == pytest.approx(z * math.sqrt(bound * (1 - bound) / n), rel=1e-9)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


@PROPERTY
@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.0, 3.0, math.nan]), st.sampled_from([0.0, 1.0, 2.0, math.nan])),
                min_size=0, max_size=30))
def test_kendall_tau_is_scipys_on_the_pairs_both_define(pairs):
    x, y = (np.array(side, float) for side in zip(*pairs, strict=True)) if pairs else (np.array([]), np.array([]))
    keep = ~(np.isnan(x) | np.isnan(y))
    tau = kendall_tau(x, y)
    if keep.sum() < 2 or len(set(x[keep])) < 2 or len(set(y[keep])) < 2:
        assert math.isnan(tau)
    else:
        assert tau == stats.kendalltau(x[keep], y[keep]).statistic
