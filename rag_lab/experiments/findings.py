"""A finding: a claim about a measured effect, checked with a paired difference on the same questions.

The course notebooks (and anyone writing up a sweep) state what they expect a policy to do — "rank
then truncate keeps more later-round gold than append then truncate" — and check it against the
sweep: the paired difference of a metric between two configurations
(:meth:`SweepResult.compare`), with its bootstrap interval. The claim *holds* when the interval lies
entirely on the expected side of 0 (or, for ``direction="none"``, contains 0 within ``tolerance``).
:class:`Finding` carries the measured numbers and a message that says what was expected and what was
measured, so ``assert finding.holds, finding.message`` fails with a sentence a reader can act on::

    finding = paired_finding(result, "quality_later_gold_retained",
                             candidate={"truncation.strategy": "rank_then_truncate"},
                             reference={"truncation.strategy": "append_then_truncate"},
                             direction="above", claim="ranking first keeps later-round gold")
    print(finding)
    assert finding.holds, finding.message
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from rag_lab.evaluation.catalog import label as metric_label

if TYPE_CHECKING:
    from rag_lab.experiments.results import SweepResult

Direction = Literal["above", "below", "none"]
_EXPECT = {
    "above": "its 95% interval entirely above 0",
    "below": "its 95% interval entirely below 0",
    "none": "its 95% interval inside ±{tol:g} (no effect)",
}


@dataclass(frozen=True)
class Finding:
    """The outcome of checking one claim: the paired Δ (candidate − reference) of ``metric`` and whether it
    lies where the claim says."""

    claim: str
    metric: str
    candidate: str
    reference: str
    direction: Direction
    tolerance: float
    delta: float
    lo: float
    hi: float
    n: int
    share_differ: float
    mean: float
    reference_mean: float

    @property
    def holds(self) -> bool:
        """Whether the interval lies where the claim says (never true for an undefined difference)."""
        if self.n == 0 or self.lo != self.lo or self.hi != self.hi:  # NaN
            return False
        if self.direction == "above":
            return self.lo > 0
        if self.direction == "below":
            return self.hi < 0
        return -self.tolerance <= self.lo and self.hi <= self.tolerance

    @property
    def measured(self) -> str:
        """``Δ = +0.094 [+0.040, +0.150] (0.594 vs 0.500), n=120 questions, 14% differ``."""
        return (f"Δ = {self.delta:+.3f} [{self.lo:+.3f}, {self.hi:+.3f}] ({self.mean:.3f} vs {self.reference_mean:.3f}), "
                f"n={self.n} questions, {self.share_differ:.0%} differ")

    @property
    def message(self) -> str:
        """What was expected and what was measured, in one paragraph."""
        expected = _EXPECT[self.direction].format(tol=self.tolerance)
        verdict = "holds" if self.holds else "does NOT hold"
        return (f"Finding {verdict}: {self.claim}. Expected the paired difference of {metric_label(self.metric)} "
                f"({self.metric}), {self.candidate} minus {self.reference}, with {expected}; measured {self.measured}.")

    def __str__(self) -> str:
        return self.message

    def _repr_markdown_(self) -> str:
        mark = "✅" if self.holds else "❌"
        return f"{mark} {self.message}"


def paired_finding(
    result: SweepResult,
    metric: str,
    candidate: str | Mapping[str, Any],
    reference: str | Mapping[str, Any] | None = None,
    direction: Direction = "above",
    claim: str = "",
    tolerance: float = 0.0,
    n_boot: int = 2000,
) -> Finding:
    """Check that ``candidate`` − ``reference`` on ``metric`` (paired over the same questions) lies
    ``direction`` of 0. ``candidate`` and ``reference`` pick one configuration each, as in
    :meth:`SweepResult.reference` (a candidate/config id, or a dict of dotted keys matching exactly one
    config; ``reference=None`` is the sweep's base config). ``direction="none"`` claims *no* effect:
    the interval must lie within ``±tolerance``."""
    if direction not in _EXPECT:
        raise ValueError(f"direction must be one of {sorted(_EXPECT)}, got {direction!r}")
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance!r}")
    ref = result.reference(reference)
    cand = result.reference(candidate)
    table = result.compare(metric, reference=ref["config_id"], n_boot=n_boot).set_index("config_id")
    row = table.loc[cand["config_id"]]
    labels = result.labels()
    cand_label = labels[cand["candidate_id"]]
    ref_label = labels[ref["candidate_id"]]
    if cand_label == ref_label:
        raise ValueError(f"candidate and reference are the same configuration ({cand_label})")
    return Finding(
        claim=claim or f"{cand_label} changes {metric_label(metric)} against {ref_label}",
        metric=metric, candidate=cand_label, reference=ref_label, direction=direction, tolerance=tolerance,
        delta=float(row["delta"]), lo=float(row["lo"]), hi=float(row["hi"]), n=int(row["n"]),
        share_differ=float(row["share_differ"]), mean=float(row["mean"]), reference_mean=float(row["reference_mean"]),
    )
