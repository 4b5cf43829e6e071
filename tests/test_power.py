"""Power and the detectable effect (rag_lab.stats.power), checked against enumeration of every outcome with the
lab's own tests and against simulation of those tests."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rag_lab.stats import exact_tests as exact
from rag_lab.stats import power
from rag_lab.stats.significance import difference_p, equivalence_test, sign_test_p


def _enumerated_sign_power(n: int, p_win: float, p_loss: float, alpha: float, alternative: str) -> float:
    wins, losses = exact._outcomes(n)
    pmf = exact.trinomial_pmf(wins, losses, n, np.array([p_win]), np.array([p_loss]),
                              np.array([1 - p_win - p_loss]))[0]
    reject = np.array([sign_test_p(int(w), int(l_), alternative) <= alpha for w, l_ in zip(wins, losses, strict=True)])
    return float(pmf[reject].sum())


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize(("n", "p_win", "p_loss"), [(25, 0.2, 0.05), (40, 0.1, 0.1), (30, 0.02, 0.25)])
def test_sign_test_power_is_the_enumerated_rejection_probability_of_the_labs_sign_test(n, p_win, p_loss, alternative):
    assert power.sign_test_power(n, p_win, p_loss, 0.05, alternative) == pytest.approx(
        _enumerated_sign_power(n, p_win, p_loss, 0.05, alternative), abs=1e-9)


@pytest.mark.parametrize(("n", "p_win", "p_loss", "margin"), [(30, 0.05, 0.05, 0.2), (40, 0.1, 0.02, 0.15)])
def test_tost_power_is_the_enumerated_rejection_probability_of_the_exact_tost(n, p_win, p_loss, margin):
    wins, losses = exact._outcomes(n)
    pmf = exact.trinomial_pmf(wins, losses, n, np.array([p_win]), np.array([p_loss]),
                              np.array([1 - p_win - p_loss]))[0]
    reject = np.array([max(exact.equivalence_p(int(w), int(l_), n, margin)) <= 0.05
                       for w, l_ in zip(wins, losses, strict=True)])
    assert power.tost_power(n, p_win, p_loss, margin) == pytest.approx(float(pmf[reject].sum()), abs=1e-9)


def _simulate(n: int, p_win: float, p_loss: float, sims: int, rng: np.random.Generator) -> np.ndarray:
    """``sims`` samples of n paired 0/1 questions: per-question differences +1 / −1 / 0."""
    draws = rng.random((sims, n))
    return np.where(draws < p_win, 1.0, np.where(draws < p_win + p_loss, -1.0, 0.0))


def test_the_exact_powers_match_a_simulation_of_the_tests_on_paired_questions():
    rng = np.random.default_rng(7)
    sims = 3000
    n, p_win, p_loss = 80, 0.12, 0.03
    d = _simulate(n, p_win, p_loss, sims, rng)
    rate = np.mean([difference_p(row, "greater")[0] <= 0.05 for row in d])
    exact_power = power.sign_test_power(n, p_win, p_loss, 0.05, "greater")
    assert abs(rate - exact_power) < 4 * math.sqrt(exact_power * (1 - exact_power) / sims)
    # the TOST on 0/1 values: equivalence_test on the arms themselves
    n, margin = 60, 0.15
    d = _simulate(n, 0.03, 0.03, 800, rng)
    rate = np.mean([equivalence_test((row > 0).astype(float), (row < 0).astype(float), margin).p <= 0.05 for row in d])
    exact_power = power.tost_power(n, 0.03, 0.03, margin)
    assert abs(rate - exact_power) < 4 * math.sqrt(exact_power * (1 - exact_power) / 800)


def test_the_detectable_effect_is_where_the_power_reaches_80_percent():
    effect = power.sign_detectable_effect(200, 0.05, alternative="less")
    p_win, p_loss = power.effect_probabilities(-effect, 0.05)
    assert power.sign_test_power(200, p_win, p_loss, 0.05, "less") >= 0.8
    p_win, p_loss = power.effect_probabilities(-(effect - 0.002), 0.05)
    assert power.sign_test_power(200, p_win, p_loss, 0.05, "less") < 0.8
    # a larger sample detects a smaller effect; a stricter level needs a larger one
    assert power.sign_detectable_effect(400, 0.05) < power.sign_detectable_effect(200, 0.05) \
        < power.sign_detectable_effect(200, 0.05, alpha=0.01)


def test_a_sample_where_nothing_differs_states_its_exact_bound():
    assert power.no_difference_bound(40) == pytest.approx(0.0722, abs=1e-4)   # the world recording's 40 questions
    found = power.detectable(np.zeros(40), binary=True, direction="below", alpha=0.05)
    assert found.bound and found.effect == pytest.approx(0.0722, abs=1e-4)
    assert "no question differs: |Δ| ≤ 0.072" in found.text
    # a share metric bounds Δ by its range; a count has no range to bound it by
    assert power.detectable(np.zeros(40), binary=False, direction="below", alpha=0.05, value_range=(0, 1)).bound
    assert math.isinf(power.detectable(np.zeros(40), binary=False, direction="below", alpha=0.05).effect)


def test_differences_of_one_size_are_planned_with_the_sign_test_they_are_tested_with():
    d = np.zeros(100)
    d[:6], d[6:8] = -0.5, 0.5
    found = power.detectable(d, binary=False, direction="below", alpha=0.05)
    assert found.method == "exact sign-test power"
    assert found.effect == pytest.approx(0.5 * power.sign_detectable_effect(100, 0.08, alternative="less"))


@pytest.mark.parametrize("direction", ["above", "below", "two-sided", "none"])
def test_a_plan_at_the_pilots_own_size_detects_what_the_pilot_states(direction):
    """One rule for the detectable effect: a plan's (detectable_at) at the pilot's own n is the pilot's (detectable)
    for a 0/1 metric, for differences of varying size and for a table that kept no sizes (normal approximation)."""
    rng = np.random.default_rng(5)
    for d, binary in ((rng.integers(-1, 2, 40).astype(float), True), (rng.integers(-3, 4, 40).astype(float), False)):
        pilot = power.Differences.of(d, binary)
        for sample in (pilot, pilot._replace(sizes=None)):
            assert power.detectable_at(sample.n, sample, direction, 0.05) == power.detectable(
                sample, direction=direction, alpha=0.05).effect


def test_the_normal_approximation_matches_a_simulation_of_the_permutation_test():
    rng = np.random.default_rng(3)
    n, sd, sims = 60, 1.0, 400
    effect = power.normal_detectable_effect(n, sd)
    rejections = [difference_p(rng.normal(effect, sd, n), "greater", n_permutations=400, seed=i)[0] <= 0.05
                  for i in range(sims)]
    assert abs(np.mean(rejections) - 0.8) < 0.07


def sign_model_sample(sizes: np.ndarray, n: int, delta: float, rng: np.random.Generator) -> np.ndarray:
    """n differences drawn as rag_lab.stats.permutation_power models a study, written out again here: the pilot's
    share of differing questions and their sizes, signs tilted to a mean of delta (more questions differing beyond
    what the signs alone reach)."""
    nonzero = sizes[sizes > 0]
    share, m = nonzero.size / sizes.size, nonzero.mean()
    share_now, q = (share, (1 + delta / (share * m)) / 2) if delta <= share * m else (min(1.0, delta / m), 1.0)
    x = rng.choice(nonzero, n) * np.where(rng.random(n) < q, 1.0, -1.0)
    return np.where(rng.random(n) < share_now, x, 0.0)


def test_the_simulated_detectable_effect_of_a_count_is_where_the_labs_own_test_reaches_80_percent():
    """Rounds or calls (differences of varying size): at the detectable effect of the sample's permutation test,
    an independent simulation of difference_p itself rejects about 80% of the time."""
    rng = np.random.default_rng(5)
    d = rng.choice([0.0, 0.0, 0.0, -1.0, -1.0, 1.0, -2.0, 2.0, -3.0], size=120)
    found = power.detectable(d, direction="above", alpha=0.05)
    assert found.method == "simulated permutation-test power" and not found.bound
    sizes = np.abs(d)
    rejections = [difference_p(sign_model_sample(sizes, 120, found.effect, rng), "greater", method="permutation",
                               n_permutations=1000, seed=i)[0] <= 0.05 for i in range(400)]
    assert abs(np.mean(rejections) - 0.8) < 0.06
    # and for 0/1 sizes it agrees with the exact sign test's enumeration
    ones = (np.arange(200) % 10 == 0).astype(float)
    assert power.simulated_detectable(power.Differences.of(ones, binary=False), "above", 0.05) == pytest.approx(
        power.sign_detectable_effect(200, 0.1), abs=0.01)


@pytest.mark.slow   # out of the quick loop: a search over simulated permutation TOSTs (about 3 s)
def test_the_simulated_tost_margin_of_a_count_is_where_the_labs_permutation_tost_reaches_80_percent():
    rng = np.random.default_rng(6)
    d = rng.choice([0.0, 0.0, -1.0, 1.0, -0.5, 0.5, 2.0], size=80)
    found = power.detectable(d, direction="none", alpha=0.05)
    assert found.method == "simulated permutation-test power"
    sizes = np.abs(d)
    shown = [equivalence_test(sign_model_sample(sizes, 80, 0.0, rng), np.zeros(80), found.effect).p < 0.05
             for _ in range(300)]
    assert abs(np.mean(shown) - 0.8) < 0.07
