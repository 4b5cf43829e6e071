"""Paired differences between two configurations measured on the same questions: the mean per-question difference with a
paired percentile bootstrap interval (:func:`paired_difference`: questions resampled jointly for both sides, seeds
averaged within a question first, undefined cells left out on both sides), the unpaired interval beside it for contrast
(:func:`unpaired_difference`), the interval of a ratio of sums over pairs (:func:`ratio_interval`), and a difference's
``Δ [lo, hi]`` text (:func:`interval_text`). The method: docs/decisions.md, "A difference between two configurations".

Kept by hand, and checked against ``scipy.stats.bootstrap`` (tests/test_stats_against_scipy.py): it draws the same
resamples from the same seed, but reads its percentiles at ``(1 − confidence)/2``, a level off in the last bit
(shipped tables would change there), and neither stratifies nor drops a resample whose ratio is undefined."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from rag_lab.stats.holds import on_claimed_side

#: Two per-question values closer than this count as equal (for ``share_differ``).
EQUAL_TOL = 1e-12


class PairedDifference(NamedTuple):
    """Mean difference ``values − reference`` over the questions both define, with its bootstrap interval."""

    delta: float
    lo: float
    hi: float
    n: int
    n_seeds: int
    share_differ: float
    mean: float
    reference_mean: float

    @property
    def excludes_zero(self) -> bool:
        """Whether the interval lies entirely above or entirely below 0 (a measured difference)."""
        return on_claimed_side("two-sided", self.lo, self.hi)


def _matrix(values: Any, what: str) -> np.ndarray:
    """``values`` as a float (questions, seeds) matrix, None as NaN; a clear error otherwise."""
    try:
        array = np.array(values, dtype=object)
        array = np.where(np.equal(array, None), np.nan, array).astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}: expected numbers or None per question (and seed), got {exc}") from None
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(f"{what}: expected shape (questions,) or (questions, seeds), got {array.shape}")
    return array


def check_bootstrap(n_boot: int, alpha: float) -> None:
    """Refuse a bootstrap size that is not a positive integer or a level outside (0, 1)."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


def paired_means(values: Any, reference: Any) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Per-question means over the seeds both sides define: ``(a, b, n_seeds, kept)``, where ``kept`` is the
    boolean mask of the input questions that have at least one cell defined on both sides (the others dropped)."""
    a, b = _matrix(values, "values"), _matrix(reference, "reference")
    if a.shape != b.shape:
        raise ValueError(f"values and reference differ in shape: {a.shape} vs {b.shape} (the same questions "
                         "and seeds, in the same order, are needed for a paired difference)")
    both = ~(np.isnan(a) | np.isnan(b))
    count = both.sum(axis=1)
    keep = count > 0
    a_mean = np.where(both, a, 0.0).sum(axis=1)[keep] / count[keep]
    b_mean = np.where(both, b, 0.0).sum(axis=1)[keep] / count[keep]
    return a_mean, b_mean, a.shape[1], keep


def _strata_labels(strata: Any, n_questions: int) -> np.ndarray:
    """``strata`` (one hashable label per input question) as an array of labels; a clear error otherwise."""
    labels = np.asarray(list(strata), dtype=object)
    if labels.ndim != 1 or labels.size != n_questions:
        raise ValueError(f"strata: expected one label per question ({n_questions}), got shape {labels.shape}")
    return labels


def resample_indices(rng: np.random.Generator, n_boot: int, labels: np.ndarray | None, n: int) -> np.ndarray:
    """``(n_boot, n)`` question indices drawn with replacement: over all questions, or within each stratum
    (each stratum keeps its size, so its weight in the mean is the one it has in the data)."""
    if labels is None:
        return rng.integers(0, n, size=(n_boot, n))
    parts = []
    for label in dict.fromkeys(labels.tolist()):
        members = np.flatnonzero(labels == label)
        parts.append(members[rng.integers(0, members.size, size=(n_boot, members.size))])
    return np.concatenate(parts, axis=1)


def percentile_interval(statistics: np.ndarray, alpha: float) -> tuple[float, float]:
    """The percentile bootstrap ``1 − alpha`` interval of resampled ``statistics``: their ``alpha/2`` and
    ``1 − alpha/2`` quantiles (every bootstrap interval of the lab reads its bounds here)."""
    lo, hi = np.quantile(statistics, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def paired_difference(values: Any, reference: Any, n_boot: int = 2000, alpha: float = 0.05, seed: int = 0,
                      strata: Any = None) -> PairedDifference:
    """The mean of ``values − reference`` over the same questions, with a paired percentile bootstrap ``1 − alpha``
    interval (see the module doc). ``values`` and ``reference``: one value per question, shape ``(n,)``, or per question
    and seed, ``(n, seeds)``, in the same order on both sides. ``strata`` (optional, one label per question, e.g. its
    type) resamples within each stratum, so every bootstrap sample keeps the data's mix of question types. The same
    inputs and ``seed`` always give the same interval; no question defined on both sides gives NaNs and ``n = 0``."""
    check_bootstrap(n_boot, alpha)
    a, b, n_seeds, kept = paired_means(values, reference)
    labels = None if strata is None else _strata_labels(strata, kept.size)[kept]
    n = int(a.size)
    if n == 0:
        return PairedDifference(math.nan, math.nan, math.nan, 0, n_seeds, math.nan, math.nan, math.nan)
    diff = a - b
    idx = resample_indices(np.random.default_rng(seed), n_boot, labels, n)
    lo, hi = percentile_interval(diff[idx].mean(axis=1), alpha)
    return PairedDifference(
        delta=float(diff.mean()), lo=lo, hi=hi, n=n, n_seeds=n_seeds,
        share_differ=float((np.abs(diff) > EQUAL_TOL).mean()), mean=float(a.mean()), reference_mean=float(b.mean()))


def unpaired_difference(values: Any, reference: Any, n_boot: int = 2000, alpha: float = 0.05,
                        seed: int = 0) -> tuple[float, float, float]:
    """``(delta, lo, hi)`` as if the two sides were measured on different questions: each side's questions
    resampled independently (same inputs and question filtering as :func:`paired_difference`)."""
    check_bootstrap(n_boot, alpha)
    a, b, _, _ = paired_means(values, reference)
    n = a.size
    if n == 0:
        return (math.nan, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = a[resample_indices(rng, n_boot, None, n)].mean(axis=1) - b[resample_indices(rng, n_boot, None, n)].mean(axis=1)
    return (float(a.mean() - b.mean()), *percentile_interval(means, alpha))


def ratio_interval(numerator: np.ndarray, denominator: np.ndarray, n_boot: int = 2000, alpha: float = 0.05,
                   seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap ``1 − alpha`` interval of ``sum(numerator) / sum(denominator)`` over pairs resampled
    with replacement (the two arrays index the same pairs); a resample whose denominator sums to 0 leaves the
    ratio undefined and is dropped. NaNs when every resample is."""
    check_bootstrap(n_boot, alpha)
    draws = resample_indices(np.random.default_rng(seed), n_boot, None, len(numerator))
    sums_n, sums_d = numerator[draws].sum(axis=1), denominator[draws].sum(axis=1)
    ratios = sums_n[sums_d != 0] / sums_d[sums_d != 0]
    if not len(ratios):
        return (math.nan, math.nan)
    return percentile_interval(ratios, alpha)


def interval_text(row: Mapping[str, Any], decimals: int | None = None, missing: str = "–") -> str:
    """``Δ [lo, hi]`` of a paired difference (a row with ``delta``, ``lo``, ``hi``), signed, with
    ``decimals`` (default: 3 when every number is below 10 in size, else 1); ``missing`` when undefined."""
    delta, lo, hi = (float(row[k]) for k in ("delta", "lo", "hi"))
    if math.isnan(delta):
        return missing
    if decimals is None:
        decimals = 3 if max(abs(delta), abs(lo), abs(hi)) < 10 else 1
    return f"{delta:+.{decimals}f} [{lo:+.{decimals}f}, {hi:+.{decimals}f}]"
