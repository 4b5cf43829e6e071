"""Power of the lab's paired tests, and the smallest effect a sample could have detected (80% power, the claim's
own test and level): exact by enumeration for 0/1 metrics (sign test, TOST), the exact bound ``1 − α^(1/n)`` where
no question differs, and for differences of varying size (rounds, calls, F1) a simulation of the permutation test
itself (:mod:`rag_lab.stats.permutation_power`); and the questions a study needs (:func:`questions_needed`, what
``rag-lab plan`` asks). The method: docs/decisions.md, "What a result that is not shown could have detected".

Kept by hand, checked against scipy in tests/test_stats_against_scipy.py: scipy has no power of these tests, and
its Clopper–Pearson bound (``binomtest(0, n).proportion_ci``) solves ``1 − α^(1/n)`` numerically, 5e-13 off."""

from __future__ import annotations

import math
import warnings
from functools import lru_cache
from typing import Literal, NamedTuple

import numpy as np
from scipy import stats as sps

from rag_lab.stats import exact_tests as exact
from rag_lab.stats import permutation_power as perm
from rag_lab.stats.paired import EQUAL_TOL
from rag_lab.stats.significance import CLAIM_ALTERNATIVE

Alternative = Literal["greater", "less", "two-sided"]
#: The power a detectable effect and a plan are stated at.
TARGET_POWER = 0.8
#: The largest study :func:`questions_needed` searches (questions).
MAX_QUESTIONS = 2000


def _check_n(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")


def _check(n: int, p_win: float, p_loss: float) -> None:
    _check_n(n)
    if not (0.0 <= p_win <= 1.0 and 0.0 <= p_loss <= 1.0 and p_win + p_loss <= 1.0 + 1e-12):
        raise ValueError(f"p_win and p_loss must be probabilities summing to at most 1, got {p_win}, {p_loss}")


@lru_cache(maxsize=256)
def _critical_wins(n: int, alpha: float, alternative: Alternative) -> np.ndarray:
    """For every number ``D`` of questions that differ (0..n), the exact sign test's critical count at ``alpha``: it
    rejects when the wins (``greater``; the losses for ``less``; either for ``two-sided``, p = 2 · the smaller tail,
    as :func:`~rag_lab.stats.significance.paired_test` computes it) reach it. ``D + 1`` where no count does."""
    level = alpha / 2 if alternative == "two-sided" else alpha
    critical = np.empty(n + 1, dtype=int)
    for d in range(n + 1):
        if d == 0:
            critical[d] = 1
            continue
        k = np.arange(d + 1)
        hits = np.nonzero(sps.binom.sf(k - 1, d, 0.5) <= level + 1e-12)[0]   # P(W >= k) under no effect
        critical[d] = int(hits[0]) if hits.size else d + 1
    return critical


def sign_test_power(n: int, p_win: float, p_loss: float, alpha: float = 0.05,
                    alternative: Alternative = "greater") -> float:
    """Exact power of the exact sign test of ``n`` paired 0/1 questions (see the module doc): the probability
    that it rejects at ``alpha`` when each question is a win with ``p_win`` and a loss with ``p_loss``."""
    _check(n, p_win, p_loss)
    p_d = p_win + p_loss
    if p_d <= 0:
        return 0.0
    share = p_win / p_d
    ds = np.arange(1, n + 1)
    weights = sps.binom.pmf(ds, n, p_d)
    critical = _critical_wins(int(n), float(alpha), alternative)[1:]
    reject = np.zeros(n)
    if alternative in ("greater", "two-sided"):
        reject += np.where(critical <= ds, sps.binom.sf(critical - 1, ds, share), 0.0)
    if alternative in ("less", "two-sided"):
        reject += np.where(critical <= ds, sps.binom.sf(critical - 1, ds, 1.0 - share), 0.0)
    return float(min(1.0, float(np.sum(weights * np.minimum(reject, 1.0)))))


def _tost_reject(n: int, margin: float, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every outcome ``(wins, losses)`` of ``n`` questions and whether the exact TOST within ``±margin`` rejects."""
    wins, losses = exact._outcomes(n)
    reject = (exact.table_p(wins, losses, n, margin) <= alpha) & (exact.table_p(losses, wins, n, margin) <= alpha)
    return wins, losses, reject


def tost_power(n: int, p_win: float, p_loss: float, margin: float, alpha: float = 0.05) -> float:
    """Exact power of the exact TOST within ``±margin`` (:func:`~rag_lab.stats.exact_tests.equivalence_p`) over ``n``
    paired 0/1 questions with win and loss probabilities ``p_win``, ``p_loss``."""
    _check(n, p_win, p_loss)
    if not 0 < margin < 1:
        raise ValueError(f"margin must lie in (0, 1), got {margin!r}")
    wins, losses, reject = _tost_reject(n, margin, alpha)
    pmf = exact.trinomial_pmf(wins[reject], losses[reject], n, np.array([p_win]), np.array([p_loss]),
                              np.array([max(0.0, 1.0 - p_win - p_loss)]))
    return float(min(1.0, pmf.sum()))


def effect_probabilities(delta: float, discordance: float) -> tuple[float, float]:
    """``(p_win, p_loss)`` of an effect ``delta`` on a pair of arms that differ on a share ``discordance`` of the
    questions, widened to ``|delta|`` when the effect is larger (see the module doc)."""
    d = min(1.0, max(discordance, abs(delta)))
    return (d + delta) / 2, (d - delta) / 2


def sign_detectable_effect(n: int, discordance: float, alpha: float = 0.05, power: float = TARGET_POWER,
                           alternative: Alternative = "greater") -> float:
    """The smallest ``|Δ|`` of a 0/1 metric that the exact sign test of ``n`` questions shows with ``power`` at
    ``alpha``, the arms differing on a share ``discordance`` of the questions (in the claimed direction for a
    one-sided test; either for two-sided)."""
    sign = -1.0 if alternative == "less" else 1.0

    def at(delta: float) -> float:
        p_win, p_loss = effect_probabilities(sign * delta, discordance)
        return sign_test_power(n, p_win, p_loss, alpha, alternative)

    return perm.smallest(at, power)


def tost_detectable_margin(n: int, discordance: float, alpha: float = 0.05, power: float = TARGET_POWER) -> float:
    """The smallest equivalence margin the exact TOST of ``n`` 0/1 questions shows with ``power`` when there is no
    effect and the arms differ on a share ``discordance`` (half wins, half losses)."""
    half = min(discordance, 1.0) / 2
    return perm.smallest(lambda m: tost_power(n, half, half, min(m, 0.999), alpha), power, high=0.999, steps=12)


def no_difference_bound(n: int, alpha: float = 0.05) -> float:
    """The exact one-sided ``1 − alpha`` upper bound on the share of questions that differ when none of ``n`` did
    (Clopper–Pearson): ``1 − alpha^(1/n)``. ``|Δ|`` of any metric in [0, 1] is at most it."""
    _check_n(n)
    return 1.0 - alpha ** (1.0 / n)


def normal_detectable_effect(n: int, sd: float, alpha: float = 0.05, power: float = TARGET_POWER,
                             two_sided: bool = False) -> float:
    """The smallest ``|Δ|`` a paired test of ``n`` questions with per-question difference SD ``sd`` shows with
    ``power`` at ``alpha``, by the normal approximation ``(z_(1−α) + z_power) · sd / √n``."""
    if n < 2:
        return math.inf
    level = alpha / 2 if two_sided else alpha
    return float((sps.norm.ppf(1 - level) + sps.norm.ppf(power)) * sd / math.sqrt(n))


def normal_detectable_margin(n: int, sd: float, alpha: float = 0.05, power: float = TARGET_POWER) -> float:
    """The smallest equivalence margin two one-sided tests of ``n`` questions show with ``power`` when the true
    difference is 0 (normal approximation): ``(z_(1−α) + z_((1+power)/2)) · sd / √n``."""
    if n < 2:
        return math.inf
    return float((sps.norm.ppf(1 - alpha) + sps.norm.ppf((1 + power) / 2)) * sd / math.sqrt(n))


class Detectable(NamedTuple):
    """What a paired sample could have detected: ``effect`` (the smallest |Δ| at 80% power, or the equivalence
    margin for a no-change claim; ``inf`` when none), ``bound`` (True: no question differed, and ``effect`` is the
    exact bound on |Δ|), ``method`` and ``text`` (one phrase for a table cell or a sentence)."""

    effect: float
    bound: bool
    method: str
    text: str

    @property
    def short(self) -> str:
        """A few characters for a table cell: ``detect ≥ 0.083``, ``|Δ| ≤ 0.072`` (no question differs: the exact
        bound) or ``no question differs`` (a metric with no range to bound Δ by)."""
        if self.bound:
            return "no question differs" if math.isinf(self.effect) else f"|Δ| ≤ {_fmt(self.effect)}"
        return "detect: none in range" if math.isinf(self.effect) else f"detect ≥ {_fmt(self.effect)}"


class Differences(NamedTuple):
    """What a detectable effect needs of a claim's per-question differences (JSON-able, so a table can keep it and
    restate the effect at another level): ``n`` questions, ``differ`` of them nonzero, ``size`` (the common size of
    the nonzero ones, or None when they differ in size), ``sd`` (their standard deviation), ``binary`` (a 0/1
    metric with one seed) and ``sizes`` (the nonzero ``|d|``, sorted: what the permutation test's power is simulated
    from; None in a table stored before it was kept, which then falls back on the normal approximation)."""

    n: int
    differ: int
    size: float | None
    sd: float
    binary: bool
    sizes: list[float] | None = None

    @property
    def share(self) -> float:
        """The share of the questions that differ (0 with no questions): the discordance a plan assumes."""
        return self.differ / self.n if self.n else 0.0

    def all_sizes(self) -> np.ndarray:
        """``|d|`` of every question, zeros included (the simulation's population)."""
        return np.concatenate([np.zeros(self.n - self.differ), np.asarray(self.sizes or [], float)])

    @classmethod
    def of(cls, differences: np.ndarray, binary: bool) -> Differences:
        d = np.asarray(differences, float)
        d = d[~np.isnan(d)]
        nonzero = np.abs(d[np.abs(d) > EQUAL_TOL])
        same = nonzero.size > 0 and bool(np.all(np.abs(nonzero - nonzero[0]) <= 1e-9))
        return cls(int(d.size), int(nonzero.size), float(nonzero[0]) if same else None,
                   float(d.std(ddof=1)) if d.size > 1 else math.inf, bool(binary),
                   [float(x) for x in np.sort(nonzero)])


def paired_differences(values: np.ndarray, reference: np.ndarray) -> Differences:
    """The :class:`Differences` of a paired comparison's per-question values (rows: questions, columns: seeds, as
    :func:`~rag_lab.stats.significance.paired_test` takes them): the per-question mean difference over seeds;
    binary for a 0/1 metric with one seed. A question undefined on either side is left out."""
    v, r = np.asarray(values, float), np.asarray(reference, float)
    v, r = v.reshape(v.shape[0], -1), r.reshape(r.shape[0], -1)
    with warnings.catch_warnings():   # a question undefined in every seed stays NaN and is left out
        warnings.simplefilter("ignore", RuntimeWarning)
        per_question = np.nanmean(v - r, axis=1) if v.size else np.array([])
    both = np.concatenate([v.ravel(), r.ravel()])
    both = both[~np.isnan(both)]
    binary = v.shape[1] == 1 and both.size > 0 and bool(np.all((both == 0) | (both == 1)))
    return Differences.of(per_question, binary)


def detectable(differences: np.ndarray | Differences, *, binary: bool = False, direction: str, alpha: float,
               margin: float | None = None, value_range: tuple[float, float] | None = None,
               power: float = TARGET_POWER) -> Detectable:
    """The detectable effect of a claim tested on the per-question ``differences`` (candidate − reference, one
    seed; or their :class:`Differences`), with the claim's own test at ``alpha`` (its corrected level):
    ``direction`` ``above``/``below`` (one-sided), ``two-sided`` (an exploratory table's cell) or ``none`` (a
    no-change claim: the smallest margin it could have shown). A 0/1 metric, or differences all of one size, is
    planned with the exact sign test (TOST for ``none`` on a 0/1 metric); otherwise by simulating the permutation
    test (and its TOST) on the sample's own sizes (:mod:`~rag_lab.stats.permutation_power`). A sample where no
    question differs gives the exact bound on |Δ| (times the metric's range when ``value_range`` is known)."""
    s = differences if isinstance(differences, Differences) else Differences.of(differences, binary)
    n = s.n
    if n == 0:
        return Detectable(math.inf, False, "no questions", "no questions to test")
    if s.differ == 0:
        width = 1.0 if s.binary else (None if value_range is None else float(value_range[1] - value_range[0]))
        share = no_difference_bound(n, alpha)
        level = f"exact one-sided {100 * (1 - alpha):.3g}% bound"
        if width is not None:
            return Detectable(share * width, True, "exact bound",
                              f"no question differs: |Δ| ≤ {_fmt(share * width)} ({level})")
        return Detectable(math.inf, True, "exact bound", f"no question differs: at most {share:.1%} of questions "
                                                         f"could differ ({level}; the metric has no range to bound Δ)")
    effect, method = _detectable_effect(n, s, direction, alpha, power, one_size_exact=True)
    what = "smallest margin showable" if direction == "none" else "detectable"
    text = (f"{what}: none within the metric's range" if math.isinf(effect) else
            f"{what}: |Δ| ≥ {_fmt(effect)} ({power:.0%} power, {method})")
    return Detectable(effect, False, method, text)


def _detectable_effect(n: int, s: Differences, direction: str, alpha: float, power: float, *,
                       one_size_exact: bool) -> tuple[float, str]:
    """The smallest effect (or, for ``none``, margin) a claim's test of ``n`` questions detects with ``power``, planned
    from the sample ``s``, and how: a 0/1 metric with the exact sign test (TOST for ``none``); with
    ``one_size_exact``, differences all of one size with the exact sign test too (what :func:`detectable` does; a
    plan, :func:`detectable_at`, simulates them); differences of varying size by simulating the permutation test;
    without their sizes by the normal approximation."""
    alternative = CLAIM_ALTERNATIVE.get(direction, "two-sided")
    if s.binary and direction == "none":
        return tost_detectable_margin(n, s.share, alpha, power), "exact TOST power"
    if (s.binary or (one_size_exact and s.size is not None)) and direction != "none":
        # every question that differs, differs by the same amount: the paired test is the exact sign test
        scale = 1.0 if s.binary else float(s.size)
        return scale * sign_detectable_effect(n, s.share, alpha, power, alternative), "exact sign-test power"
    if s.sizes is not None:
        return simulated_detectable(s, direction, alpha, power, n=n), "simulated permutation-test power"
    if direction == "none":
        return normal_detectable_margin(n, s.sd, alpha, power), "normal approximation"
    return normal_detectable_effect(n, s.sd, alpha, power, two_sided=alternative == "two-sided"), "normal approximation"


def simulated_detectable(s: Differences, direction: str, alpha: float, power: float = TARGET_POWER,
                         n: int | None = None) -> float:
    """The detectable effect (or, for ``none``, margin) of the permutation test on ``n`` questions (default: the
    sample's) with the sizes of ``s`` (:mod:`~rag_lab.stats.permutation_power`), remembered per sample."""
    return _simulated(tuple(s.all_sizes().tolist()), int(n or s.n), direction, float(alpha), float(power))


@lru_cache(maxsize=512)
def _simulated(sizes: tuple[float, ...], n: int, direction: str, alpha: float, power: float) -> float:
    population = np.asarray(sizes, float)
    if direction == "none":
        return perm.permutation_tost_detectable_margin(population, n, alpha, power)
    return perm.permutation_detectable_effect(population, n, alpha, power, two_sided=direction == "two-sided")


def power_at(n: int, differences: Differences, direction: str, target: float, alpha: float) -> float:
    """The power of a claim's test (``direction`` as :func:`detectable` takes it) on ``n`` questions for the effect
    ``target`` (or, for ``none``, the margin ``target`` at a true difference of 0), with a pilot's discordance or
    spread (its :class:`Differences`): what ``rag-lab plan`` asks (:mod:`rag_lab.experiments.planning`)."""
    share = differences.share
    if differences.binary:
        if direction == "none":
            return tost_power(n, share / 2, share / 2, min(target, 0.999), alpha)
        sign = -1.0 if direction == "below" else 1.0
        alternative = CLAIM_ALTERNATIVE.get(direction, "two-sided")
        return sign_test_power(n, *effect_probabilities(sign * target, share), alpha, alternative)
    if differences.sizes is not None:
        sizes = differences.all_sizes()
        if direction == "none":
            return perm.permutation_tost_power(sizes, n, target, alpha)
        return perm.permutation_power(sizes, n, target, alpha, two_sided=direction == "two-sided")
    sd = differences.sd
    if not sd > 0:
        return 1.0
    z = abs(target) * math.sqrt(n) / sd
    if direction == "none":
        return float(max(0.0, 2 * sps.norm.cdf(z - sps.norm.ppf(1 - alpha)) - 1))
    level = alpha / 2 if direction == "two-sided" else alpha
    return float(sps.norm.cdf(z - sps.norm.ppf(1 - level)))


def questions_needed(differences: Differences, direction: str, target: float, alpha: float,
                     power: float = TARGET_POWER, n_max: int = MAX_QUESTIONS) -> int | None:
    """The smallest ``n`` (up to ``n_max``) whose power reaches ``power``, found by doubling, then bisection (the
    power of an exact test is a saw-tooth in ``n``, not monotone: the ``n`` found is one whose power reaches it, at
    most a few questions above the first that does). None when even ``n_max`` does not."""
    low, high = 1, 16   # doubling first: an exact TOST's table for n_max questions is costly to build
    while power_at(high, differences, direction, target, alpha) < power:
        if high >= n_max:
            return None
        low, high = high, min(2 * high, n_max)
    while high - low > 1:
        mid = (low + high) // 2
        if power_at(mid, differences, direction, target, alpha) >= power:
            high = mid
        else:
            low = mid
    return high


def detectable_at(n: int, differences: Differences, direction: str, alpha: float, power: float = TARGET_POWER) -> float:
    """The smallest effect (or margin, for ``none``) a study of ``n`` questions detects with ``power``, with the
    pilot's discordance or spread (as :func:`detectable` plans, but differences all of one size are simulated)."""
    return _detectable_effect(n, differences, direction, alpha, power, one_size_exact=False)[0]


def _fmt(x: float) -> str:
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}"
