"""Plan a study's size from a pilot before it is recorded (``rag-lab plan``): per declared claim, the power the pilot
had, the questions needed for 80% power, and the effect each size would detect, from the claim's discordance or
spread on the pilot (:mod:`rag_lab.stats.power`). The method: docs/decisions.md."""

from __future__ import annotations

import math
import warnings
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.findings import claim_sources, claim_values, flagged_twins, unflagged
from rag_lab.experiments.engine.pairs import PairedHalves
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.stats import power as pw
from rag_lab.stats.power import MAX_QUESTIONS, detectable_at, power_at, questions_needed


@dataclass(frozen=True)
class ClaimPlan:
    """The plan of one claim: what the pilot showed, the target, the power at the pilot's size, the questions
    needed, and the detectable effect at each size asked about (``{n: effect}``)."""

    claim: str
    metric: str
    direction: str
    alpha: float
    pilot_n: int
    pilot_delta: float
    discordance: float
    sd: float
    binary: bool
    target: float
    pilot_power: float
    needed: int | None
    detectable_at: dict[int, float]
    method: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def line(self) -> str:
        """One line: the claim, what the pilot showed, and the questions needed."""
        spread = (f"{self.discordance:.0%} of questions differ" if self.binary else f"sd {self.sd:.3g} a question")
        needed = f"{self.needed} questions" if self.needed is not None else f"more than {MAX_QUESTIONS} questions"
        what = f"margin ±{self.target:g}" if self.direction == "none" else f"|Δ| = {self.target:.3g}"
        sizes = ", ".join(f"n={n}: {_fmt(e)}" for n, e in self.detectable_at.items())
        return (f"{self.claim} ({self.metric}, {self.direction}, α={self.alpha:g}): pilot n={self.pilot_n}, "
                f"Δ {self.pilot_delta:+.3f}, {spread}; target {what}: power {self.pilot_power:.2f} at the pilot's size, "
                f"{needed} for {pw.TARGET_POWER:.0%} ({self.method})"
                + (f"; detectable {'margin' if self.direction == 'none' else 'effect'} at {sizes}" if sizes else ""))


def _fmt(x: float) -> str:
    return "none" if math.isinf(x) else f"{x:.3f}"


def plan_claim(pilot: SweepResult | PairedHalves, metric: str, candidate: str | Mapping[str, Any],
               reference: str | Mapping[str, Any] | None = None, direction: str = "above", *,
               margin: float | None = None, target: float | None = None, alpha: float = 0.05,
               sizes: Sequence[int] = (), claim: str = "", power: float = pw.TARGET_POWER,
               questions: Collection[str] | None = None) -> ClaimPlan:
    """Plan one claim (``candidate`` − ``reference`` on ``metric``, as a sweep's ``findings:`` states it) from the
    ``pilot`` sweep's per-question values (or per-pair values, ``pilot`` a
    :class:`~rag_lab.experiments.engine.pairs.PairedHalves`), on its ``questions`` (default: all): see the module
    doc."""
    if direction not in ("above", "below", "none", "two-sided"):
        raise ConfigError(f"direction must be above, below, none or two-sided, got {direction!r}")
    if direction == "none" and not (margin and margin > 0):
        raise ConfigError("a no-change claim is planned for its equivalence margin: give margin > 0")
    cand, ref = pilot.reference(candidate), pilot.reference(reference)
    values, ref_values = claim_values(pilot, metric, cand["config_id"], ref["config_id"], questions)
    d = pw.paired_differences(values, ref_values)
    if d.n < 2:
        raise ConfigError(f"the pilot has {d.n} question(s) with {metric} defined on both arms: nothing to plan from")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        delta = float(np.nanmean(np.nanmean(np.asarray(values, float) - np.asarray(ref_values, float), axis=1)))
    goal = float(margin) if direction == "none" else (abs(delta) if target is None else abs(float(target)))
    if goal == 0 and direction != "none":
        raise ConfigError("the pilot shows no difference on this claim: give the target effect (--delta)")
    method = ("exact TOST power" if d.binary and direction == "none" else "exact sign-test power" if d.binary else
              "simulated permutation-test power" if d.sizes is not None else "normal approximation")
    return ClaimPlan(
        claim=claim or f"{pilot.labels(ref['config_id'])[cand['candidate_id']]} on {metric}", metric=metric,
        direction=direction, alpha=alpha, pilot_n=d.n, pilot_delta=delta, discordance=d.share, sd=d.sd,
        binary=d.binary, target=goal, pilot_power=power_at(d.n, d, direction, goal, alpha),
        needed=questions_needed(d, direction, goal, alpha, power),
        detectable_at={int(n): detectable_at(int(n), d, direction, alpha, power) for n in sizes}, method=method)


def plan_study(pilot: SweepResult, claims: Sequence[Mapping[str, Any]], *, alpha: float = 0.05,
               correction: str = "fixed-sequence", sizes: Sequence[int] = (),
               targets: Mapping[int, float] | None = None) -> list[ClaimPlan]:
    """Plan every claim of a declared family (``claims``: a sweep file's ``findings:`` entries, their candidates and
    references picked in the ``pilot``). ``correction``: ``fixed-sequence`` (each claim at the full ``alpha``, as a
    sweep's findings are tested; a claim counts only when those before it do) or ``holm`` (the strictest step,
    ``alpha / len(claims)``). ``targets``: the target effect of claim ``i`` (default: the pilot's |Δ|). A claim
    ``over: pairs`` is planned on the pilot's pairs (the pilot run keeps its other half), and every claim on the
    pilot's unflagged twins, as the study will test it."""
    if correction not in ("fixed-sequence", "holm"):
        raise ConfigError(f"correction must be fixed-sequence or holm, got {correction!r}")
    level = alpha if correction == "fixed-sequence" else alpha / max(1, len(claims))
    plans = []
    for i, (c, source) in enumerate(zip(claims, claim_sources(pilot, claims), strict=True)):
        flagged = flagged_twins(source) if hasattr(source, "rows") or isinstance(source, PairedHalves) else set()
        plans.append(plan_claim(source, c["metric"], c["candidate"], c.get("reference"), c.get("direction", "above"),
                                margin=c.get("margin"), target=(targets or {}).get(i), alpha=level, sizes=sizes,
                                claim=c.get("claim", ""), questions=unflagged(source) if flagged else None))
    return plans
