"""Paired significance tests (rag_lab.stats.significance): the exact sign / McNemar test on the discordant
pairs, the sign-flip permutation test against an independent enumeration, their size and power on synthetic
paired data with a known difference, Holm on a known family, the equivalence test (TOST), the stratified
bootstrap."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rag_lab.experiments import EquivalenceTest, PairedTest, equivalence_test, holm, paired_test
from rag_lab.stats.exact_tests import noninferiority_p
from rag_lab.stats.exact_tests import size as exact_size
from rag_lab.stats.paired import paired_difference
from rag_lab.stats.significance import LATTICE_MAX, difference_p, lattice_sign_flip_p, p_text, sign_test_p


def flips(n: int, better: int, worse: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """0/1 outcomes on ``n`` questions: ``better`` flipped up, ``worse`` flipped down, half of the rest right on both."""
    ref = np.zeros(n)
    ref[better + worse:][::2] = 1.0
    values = ref.copy()
    values[:better] = 1.0
    ref[better:better + worse] = 1.0
    return values, ref


# ---------------------------------------------------------------- exact sign / McNemar


@pytest.mark.parametrize("n", [20, 60, 120])
def test_four_of_four_discordant_pairs_give_p_0125_whatever_n(n):
    values, ref = flips(n, better=4)
    t = paired_test(values, ref)
    assert isinstance(t, PairedTest)
    assert (t.method, t.n, t.n_better, t.n_worse, t.alternative) == ("exact", n, 4, 0, "two-sided")
    assert t.p == pytest.approx(0.125)
    assert t.delta == pytest.approx(4 / n)
    assert t.lo > 0     # the bootstrap interval alone would have called it a finding
    assert paired_test(values, ref, alternative="greater").p == pytest.approx(1 / 16)
    assert paired_test(values, ref, alternative="less").p == pytest.approx(1.0)


def test_sign_test_against_the_binomial_by_hand():
    def two_sided(k, m):
        tail = sum(math.comb(m, i) for i in range(0, min(k, m - k) + 1)) / 2**m
        return min(1.0, 2 * tail)

    for k, m in [(0, 5), (1, 9), (3, 10), (7, 10), (12, 30), (50, 80)]:
        assert sign_test_p(k, m - k) == pytest.approx(two_sided(k, m), rel=1e-9)
        assert sign_test_p(k, m - k, "greater") == pytest.approx(sum(math.comb(m, i) for i in range(k, m + 1)) / 2**m)
    assert sign_test_p(0, 0) == 1.0
    values, ref = flips(200, better=30, worse=12)
    assert paired_test(values, ref).p == pytest.approx(two_sided(30, 42))   # 158 ties carry no information


def test_exact_is_chosen_for_equal_sized_differences_and_can_be_forced():
    assert paired_test([2, 0, 2, 0, 2], [0, 0, 0, 0, 0]).method == "exact"     # every nonzero |d| = 2
    t = paired_test([0.5, 3.0, 1.0, 0.2, 0.7], [0, 0, 0, 0, 0])
    assert t.method == "permutation" and t.n_permutations == 32
    assert t.p == pytest.approx(2 / 32)                                      # all positive: 2 of 32 patterns
    forced = paired_test([0.5, 3.0, 1.0, 0.2, 0.7], [0, 0, 0, 0, 0], method="exact")
    assert forced.method == "exact" and forced.p == pytest.approx(2 / 32)
    assert paired_test([1, 1, 1, 1], [0, 0, 0, 0], method="permutation").p == pytest.approx(0.125)


# ---------------------------------------------------------------- sign-flip permutation


def _enumerated_p(d: np.ndarray) -> float:
    """Two-sided sign-flip p by brute force: the share of all sign patterns whose |sum| is at least the observed."""
    d = d[d != 0]
    observed = abs(d.sum())
    sums = [abs(sum(s * x for s, x in zip(signs, d, strict=True))) for signs in itertools.product((1, -1), repeat=d.size)]
    return sum(s >= observed - 1e-12 for s in sums) / len(sums)


def test_permutation_p_matches_an_independent_enumeration():
    rng = np.random.default_rng(5)
    for m, shift in [(6, 0.2), (9, 0.5), (11, 0.1)]:
        a = rng.normal(shift, 1.0, m)
        t = paired_test(a, np.zeros(m))
        assert t.method == "permutation" and t.n_permutations == 2**m
        assert t.p == pytest.approx(_enumerated_p(a), abs=1e-12)
        # Monte-Carlo (no enumeration allowed) agrees within 4 standard errors
        mc = paired_test(a, np.zeros(m), exact_max=0, n_permutations=40000, seed=3)
        assert mc.method == "permutation_mc" and mc.n_permutations == 40000
        assert abs(mc.p - t.p) < 4 * math.sqrt(t.p * (1 - t.p) / 40000) + 1e-4
        # deterministic for a seed
        assert paired_test(a, np.zeros(m), exact_max=0, n_permutations=500, seed=3) == \
            paired_test(a, np.zeros(m), exact_max=0, n_permutations=500, seed=3)


def test_one_sided_permutation_p():
    d = np.array([1.5, 0.5, -0.25, 2.0, 0.75, -0.5])
    sums = [sum(s * x for s, x in zip(signs, d, strict=True)) for signs in itertools.product((1, -1), repeat=6)]
    greater = sum(s >= d.sum() - 1e-12 for s in sums) / 64
    assert paired_test(d, np.zeros(6), alternative="greater").p == pytest.approx(greater)
    assert paired_test(-d, np.zeros(6), alternative="less").p == pytest.approx(greater)


def test_monte_carlo_p_is_never_zero():
    a = np.linspace(1, 2, 40)   # all 40 differences positive: the exact p is 2 / 2^40
    t = paired_test(a, np.zeros(40), n_permutations=999)
    assert t.method == "permutation_mc" and t.p == pytest.approx(1 / 1000)


def test_lattice_p_is_the_enumerated_permutation_p_exactly():
    """Differences on a lattice (whole multiples of one step, in several units): the convolved p equals the
    enumeration of every sign pattern, for every alternative."""
    rng = np.random.default_rng(8)
    for unit in (1.0, 0.5, 7.0, 250.0):
        for m in (1, 5, 9, 13):
            d = rng.integers(1, 4, m) * rng.choice((-1.0, 1.0), m) * unit
            sums = [sum(s * x for s, x in zip(signs, d, strict=True))
                    for signs in itertools.product((1, -1), repeat=m)]
            tol = 1e-9 * unit
            want = {"greater": sum(s >= d.sum() - tol for s in sums) / 2**m,
                    "less": sum(s <= d.sum() + tol for s in sums) / 2**m,
                    "two-sided": sum(abs(s) >= abs(d.sum()) - tol for s in sums) / 2**m}
            for alternative, p in want.items():
                assert lattice_sign_flip_p(d, alternative) == pytest.approx(p, rel=1e-12), (unit, m, alternative)


def test_lattice_p_goes_below_what_monte_carlo_can_show():
    """Where the Monte-Carlo p stops at 1 / (N + 1), the exact one goes on: all of 60 differences positive
    is 2^-60 whatever their sizes, and equal sizes give the sign test's binomial."""
    mixed = np.array([1.0, 2.0, 3.0] * 20)
    assert lattice_sign_flip_p(mixed, "greater") == pytest.approx(2.0**-60, rel=1e-9)
    assert difference_p(mixed, "greater")[:2] == (pytest.approx(1 / 20001), "permutation_mc")
    p, method, *_ = difference_p(mixed, "greater", lattice=True)
    assert method == "permutation_lattice" and p == pytest.approx(2.0**-60, rel=1e-9)
    equal = np.array([2.0] * 60 + [-2.0] * 5 + [0.0] * 10)
    assert lattice_sign_flip_p(equal, "greater") == pytest.approx(sign_test_p(60, 5, "greater"), rel=1e-9)


def test_lattice_p_refuses_what_is_not_a_lattice():
    assert lattice_sign_flip_p(np.array([0.1, np.pi, 1.0])) is None
    assert lattice_sign_flip_p(np.array([1.0, 1.5])) is None         # a lattice whose step is not the smallest
    assert lattice_sign_flip_p(np.array([1.0, float(LATTICE_MAX)])) is None
    assert lattice_sign_flip_p(np.zeros(5)) == 1.0
    far = np.array([1.0, 1.5] + [2.0] * 30)      # falls back to Monte Carlo
    assert difference_p(far, "greater", lattice=True)[1] == "permutation_mc"


# ---------------------------------------------------------------- size and power on synthetic paired data


def _rejection_rate(draw, reps: int, alpha: float = 0.05, **kwargs) -> float:
    rng = np.random.default_rng(11)
    return float(np.mean([paired_test(*draw(rng), n_permutations=999, seed=r, **kwargs).p < alpha for r in range(reps)]))


def test_size_and_power_with_binary_flips():
    """A shared per-question uniform; the candidate answers below ``0.5 + delta``, the reference below 0.5."""
    def draw(delta):
        def inner(rng):
            u = rng.random(120)
            return (u < 0.5 + delta).astype(float), (u < 0.5).astype(float)
        return inner

    def null(rng):   # no effect, but questions flip both ways: each differs with probability 0.1, either sign
        u, s = rng.random(120), rng.random(120)
        ref = (u < 0.5).astype(float)
        values = np.where(s < 0.05, 1 - ref, ref)
        ref = np.where((s >= 0.05) & (s < 0.10), 1 - ref, ref)
        return values, ref

    size = _rejection_rate(null, reps=400)
    assert size <= 0.05 + 0.025            # exact test: at most alpha (conservative with discrete p)
    assert _rejection_rate(draw(0.10), reps=200) >= 0.95   # 12 one-way flips of 120


def test_size_power_and_coverage_with_correlated_continuous_questions():
    def draw(shift):
        def inner(rng):
            z = rng.normal(0, 1, 60)
            return z + shift + rng.normal(0, 0.5, 60), z + rng.normal(0, 0.5, 60)
        return inner

    assert _rejection_rate(draw(0.0), reps=300) <= 0.05 + 0.03
    assert _rejection_rate(draw(0.35), reps=150) >= 0.9
    # the interval the result carries covers the known shift
    rng = np.random.default_rng(2)
    hits = sum(t.lo <= 0.2 <= t.hi for t in (paired_test(*draw(0.2)(rng), n_boot=500, seed=r, n_permutations=99)
                                               for r in range(300)))
    assert 0.92 <= hits / 300 <= 0.975


def test_seeds_are_averaged_within_a_question_before_testing():
    a = np.array([[1, 1], [1, 0], [1, 1], [0, 0]], dtype=float)
    b = np.array([[0, 0], [0, 0], [1, 1], [0, 1]], dtype=float)
    t = paired_test(a, b)     # per-question differences 1, 0.5, 0, -0.5: not all the same size
    assert (t.n, t.n_seeds, t.n_better, t.n_worse, t.method) == (4, 2, 2, 1, "permutation")
    assert t.p == pytest.approx(_enumerated_p(np.array([1.0, 0.5, -0.5])))


def test_undefined_and_bad_input():
    t = paired_test([1, None, 0, 1], [0, 1, None, 1])
    assert (t.n, t.n_better, t.n_worse) == (2, 1, 0) and t.p == 1.0
    empty = paired_test([None], [None])
    assert empty.n == 0 and math.isnan(empty.p) and empty.text().startswith("undefined")
    assert paired_test([1, 0], [1, 0]).p == 1.0
    with pytest.raises(ValueError, match="alternative"):
        paired_test([1], [0], alternative="bigger")
    with pytest.raises(ValueError, match="method"):
        paired_test([1], [0], method="bootstrap")
    with pytest.raises(ValueError, match="n_permutations"):
        paired_test([1], [0], n_permutations=0)
    with pytest.raises(ValueError, match="exact_max"):
        paired_test([1], [0], exact_max=40)
    with pytest.raises(ValueError, match="shape"):
        paired_test([1, 0], [1])


def test_text():
    values, ref = flips(120, better=4)
    assert paired_test(values, ref).text() == "+0.033 [+0.008, +0.067], p=0.125 (exact, 4↑ 0↓ of 120)"
    assert (p_text(0.0031), p_text(1e-7), p_text(float("nan")), p_text(0.5)) == ("0.0031", "<0.0001", "–", "0.500")


# ---------------------------------------------------------------- Holm


def test_holm_on_a_known_family():
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> monotone 0.02, 0.03, 0.06, 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.2, 0.9]) == pytest.approx([0.4, 0.9])
    assert holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])          # capped at 1 (0.6 x 2), then monotone
    assert holm([]) == []
    adj = holm([0.01, float("nan"), 0.02])                         # NaN stays NaN and is not counted
    assert adj[0] == pytest.approx(0.02) and math.isnan(adj[1]) and adj[2] == pytest.approx(0.02)
    with pytest.raises(ValueError, match="p-values"):
        holm([1.5])


def test_holm_controls_the_family_wise_error_under_the_global_null():
    rng = np.random.default_rng(0)
    families = rng.random((4000, 10))       # 10 true nulls per family: uniform p-values
    any_rejected = np.mean([min(holm(f)) < 0.05 for f in families])
    assert any_rejected <= 0.05 + 0.01
    assert np.mean(families.min(axis=1) < 0.05) > 0.35   # uncorrected: ~40% of families claim something


# ---------------------------------------------------------------- equivalence (TOST)


def test_equivalence_needs_evidence_not_just_no_difference():
    assert isinstance(equivalence_test([0] * 20, [0] * 20, margin=0.05), EquivalenceTest)
    small = equivalence_test(np.zeros(20), np.zeros(20), margin=0.05)   # 20 identical 0/1 answers
    assert small.binary and small.method == "exact" and small.p == pytest.approx(0.95 ** 20) and small.p > 0.05
    large = equivalence_test(np.zeros(120), np.zeros(120), margin=0.05)
    assert large.p == pytest.approx(0.95 ** 120) and large.p < 0.01
    values, ref = flips(120, better=4)            # the 4-of-120 "finding": within ±0.1, not within ±0.02
    assert equivalence_test(values, ref, margin=0.1).p < 0.05
    assert equivalence_test(values, ref, margin=0.02).p > 0.5
    assert large.text() == "Δ=+0.000 within ±0.05: p=0.0021 (TOST exact, n=120)"


@pytest.mark.slow   # out of the quick loop: enumerates every outcome: ~8 s idle
def test_exact_tost_size_is_at_most_alpha_by_enumeration():
    """The exact one-sided test's size along the boundary Δ = −margin, over a finer nuisance grid than the test
    takes its supremum on, for every n = 20, 40, …, 240 and margins 0.05 and 0.10: at most α (the floored t
    TOST it replaced reached 0.051–0.068). TOST rejects only where both one-sided tests do, so its size is at
    most that."""
    sizes = {(n, m): exact_size(n, m, 0.05) for m in (0.05, 0.10) for n in range(20, 241, 20)}
    worst = max(sizes, key=sizes.get)
    assert sizes[worst] <= 0.05, f"size {sizes[worst]:.4f} at n={worst[0]}, margin {worst[1]}"
    assert max(sizes.values()) > 0.04   # and not so conservative that it never rejects
    for wins, losses in ((0, 0), (3, 1), (1, 4), (9, 2)):   # and it is the test equivalence_test runs on 0/1 values
        values = np.r_[np.ones(wins), np.zeros(losses), np.zeros(60 - wins - losses)]
        ref = np.r_[np.zeros(wins), np.ones(losses), np.zeros(60 - wins - losses)]
        tost = equivalence_test(values, ref, margin=0.05)
        assert (tost.p_lower, tost.p_upper) == (noninferiority_p(wins, losses, 60, 0.05),
                                                noninferiority_p(losses, wins, 60, 0.05))


def test_a_constant_non_binary_difference_proves_no_equivalence():
    """Five questions with the same F1 (or the same LLM-call count) on both sides: width-0 interval, but no
    test bounds the difference beyond these questions, so the TOST is refused (p = 1), not p = 0."""
    for value in (0.5, 3.0):
        t = equivalence_test(np.full(5, value), np.full(5, value), margin=0.05)
        assert t.p == 1.0 and t.method == "refused" and not t.binary and "no spread" in t.note
    shifted = equivalence_test(np.full(5, 0.52), np.full(5, 0.5), margin=0.05)   # a constant +0.02
    assert shifted.p == 1.0 and shifted.method == "refused"


def test_equivalence_size_at_the_margin_and_the_permutation_tost_by_hand():
    rng = np.random.default_rng(4)
    z = rng.normal(0, 1, 80)
    a, b = z + 0.03 + rng.normal(0, 0.3, 80), z + rng.normal(0, 0.3, 80)
    t = equivalence_test(a, b, margin=0.1)
    d = a - b
    # two sign-flip permutation tests of the shifted differences, which near-normal differences bring close to t's
    assert (t.p_lower, t.p_upper) == (difference_p(d + 0.1, "greater", method="permutation")[0],
                                      difference_p(d - 0.1, "less", method="permutation")[0])
    assert t.method == "permutation" and t.p == max(t.p_lower, t.p_upper) and not t.binary
    se = d.std(ddof=1) / math.sqrt(80)
    from scipy import stats
    assert t.p_lower == pytest.approx(stats.t.sf((d.mean() + 0.1) / se, 79), abs=0.002)
    assert t.p_upper == pytest.approx(stats.t.cdf((d.mean() - 0.1) / se, 79), abs=0.01)
    # a true difference exactly on the margin is declared equivalent at most alpha of the time
    rejections = []
    for _ in range(200):
        z = rng.normal(0, 1, 60)
        rejections.append(equivalence_test(z + 0.1 + rng.normal(0, 0.4, 60), z, margin=0.1).p < 0.05)
    assert np.mean(rejections) <= 0.05 + 0.03
    with pytest.raises(ValueError, match="margin"):
        equivalence_test([1, 0], [1, 0], margin=0)
    assert equivalence_test([1], [1], margin=0.1).p == 1.0


# ---------------------------------------------------------------- stratified bootstrap


def test_stratified_bootstrap_keeps_the_mix_and_covers_a_known_delta():
    """Two question types with different effects (+0.3 on 20 bridge, 0 on 60 single): the mean Δ is 0.075; a
    stratified resample keeps 20/60 in every sample, so its interval is narrower than the plain one and covers."""
    rng = np.random.default_rng(9)
    strata = ["bridge"] * 20 + ["single"] * 60
    hits, narrower = 0, 0
    for rep in range(200):
        noise = rng.normal(0, 0.1, 80)
        d = np.r_[np.full(20, 0.3), np.zeros(60)] + noise
        s = paired_difference(d, np.zeros(80), n_boot=500, seed=rep, strata=strata)
        p = paired_difference(d, np.zeros(80), n_boot=500, seed=rep)
        hits += s.lo <= 0.075 <= s.hi
        narrower += (s.hi - s.lo) < (p.hi - p.lo)
    assert hits / 200 >= 0.92 and narrower / 200 > 0.8
    # None on one side drops that question and its label together
    kept = paired_difference([1, None, 0, 1], [0, 0, 0, 0], strata=["a", "b", "a", "b"], n_boot=200)
    assert kept.n == 3
    assert paired_test([1, 0, 1], [0, 0, 0], strata=["a", "a", "b"]).n == 3
    with pytest.raises(ValueError, match="strata"):
        paired_difference([1, 0], [0, 0], strata=["a"])
