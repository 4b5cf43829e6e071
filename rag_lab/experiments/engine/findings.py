"""A finding: a claim about an effect (:func:`paired_finding`), checked with its one paired test on the same
questions (:func:`~rag_lab.stats.significance.claim_test`), corrected within the family its notebook or report
declared up front (:class:`FindingFamily`, fixed sequence), and labelled with what kind of claim it is:
``measured``, ``by_construction`` (with its control: the same contrast with the knob at 0) or ``definitional``.
:class:`Finding` carries the numbers and a message that says what was expected and what was measured, so
``assert finding.holds, finding.message`` fails with a sentence a reader can act on. The method:
docs/decisions.md, "One test per claim"."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from scipy.stats import binomtest

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import is_outcome, value_range
from rag_lab.evaluation.catalog import label as metric_label
from rag_lab.experiments.engine.pair_metrics import PAIR_METRICS
from rag_lab.experiments.engine.pairs import PairedHalves, stored_other_half
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.stats.holds import holds, on_claimed_side
from rag_lab.stats.power import Detectable, detectable, paired_differences
from rag_lab.stats.significance import claim_test, p_clause, paired_test

Direction = Literal["above", "below", "none"]
Kind = Literal["measured", "by_construction", "definitional"]
KINDS = ("measured", "by_construction", "definitional")
_EXPECT = {
    "above": "its 95% interval entirely above 0",
    "below": "its 95% interval entirely below 0",
    "none": "it shown to lie within ±{margin:g} (equivalence, TOST)",
}
_KIND_TEXT = {"measured": "measured", "by_construction": "by construction", "definitional": "definitional"}


class FindingFamily:
    """The findings one notebook (or report) asserts, corrected together by the **fixed-sequence** procedure
    (docs/decisions.md, "Families declared up front"): ``size`` findings, stated up front, tested in the order they
    join, the ``k``-th one's adjusted p the largest of the first ``k`` p-values, so a later finding never changes an
    earlier verdict. A finding that would make the family larger than ``size`` is an error."""

    def __init__(self, size: int, name: str = "") -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ConfigError(f"size must be a positive integer (the number of findings asserted), got {size!r}")
        self.size = size
        self.name = name
        self._p: list[float] = []

    def join(self, p: float) -> int:
        """Add one finding's p-value; its index in the family."""
        if len(self._p) >= self.size:
            raise ConfigError(f"family {self.name or ''} of {self.size} findings is full: a notebook that asserts more "
                             "findings must say so in FindingFamily(size=...)")
        self._p.append(float(p))
        return len(self._p) - 1

    @property
    def complete(self) -> bool:
        return len(self._p) == self.size

    def adjusted(self, index: int) -> float:
        """The adjusted p of the ``index``-th finding: the largest p of the findings up to it (fixed sequence);
        NaN when one of them is undefined."""
        ps = self._p[:index + 1]
        if any(p != p for p in ps):
            return math.nan
        return max(ps)

    def __len__(self) -> int:
        return len(self._p)

    def __repr__(self) -> str:
        return f"FindingFamily(size={self.size}, joined={len(self._p)})"


@dataclass(frozen=True)
class Control:
    """A by-construction finding's control: the same contrast with the knob at 0, where the effect must
    vanish. By default (``method="share differing"``) the arms must differ on under ``margin`` of the questions
    — half the share they differ on with the knob on — by an exact binomial test (no assumption about how
    far a question's value can move). ``knobs`` names the control's simulator settings."""

    delta: float
    lo: float
    hi: float
    n: int
    p: float
    margin: float
    knobs: str
    method: str = ""
    note: str = ""

    @property
    def measured(self) -> str:
        head = f"with the knob at 0 ({self.knobs}) Δ = {self.delta:+.3f} [{self.lo:+.3f}, {self.hi:+.3f}]"
        if self.method == "share differing":
            return f"{head}; {self.note}: {p_clause(self.p)}"
        how = f" ({self.note})" if self.note else ""
        return f"{head}, within ±{self.margin:.3g}: {self.method or 'TOST'} {p_clause(self.p)}{how}"


@dataclass(frozen=True)
class Finding:
    """The outcome of checking one claim: the paired Δ (candidate − reference) of ``metric``, its test, and
    whether it lies where the claim says. ``p`` is the claim's p-value (the paired test for a direction, the
    TOST for ``none``; with a control, the larger of the claim's, ``p_claim``, and the control's), ``p_adjusted``
    the same after its ``family``'s fixed-sequence correction (``p`` itself without one)."""

    claim: str
    metric: str
    candidate: str
    reference: str
    direction: Direction
    margin: float
    delta: float
    lo: float
    hi: float
    n: int
    share_differ: float
    mean: float
    reference_mean: float
    p: float = math.nan
    method: str = ""
    n_better: int = 0
    n_worse: int = 0
    kind: Kind = "measured"
    alpha: float = 0.05
    control: Control | None = None
    family: FindingFamily | None = field(default=None, repr=False, compare=False)
    family_index: int = -1
    p_claim: float | None = None
    detectable: Detectable | None = None
    candidate_config: str = ""
    reference_config: str = ""

    @property
    def p_adjusted(self) -> float:
        """``p`` after the fixed-sequence correction of its family: the largest p of the findings up to it."""
        if self.family is None:
            return self.p
        return self.family.adjusted(self.family_index)

    @property
    def is_outcome(self) -> bool:
        """Whether the metric is an outcome (answer quality, evidence kept, abstention), not a cost or a counter."""
        return is_outcome(self.metric)

    @property
    def on_claimed_side(self) -> bool:
        """Whether the interval lies where the claim says (for ``none``: inside ±margin)."""
        return on_claimed_side(self.direction, self.lo, self.hi, delta=self.delta, margin=self.margin, n=self.n)

    @property
    def holds(self) -> bool:
        """Interval on the claimed side *and* the (family-adjusted) p below ``alpha``; never for an undefined
        difference. A by-construction finding's p includes its control's."""
        return holds(self.direction, self.p_adjusted, self.lo, self.hi, self.alpha, delta=self.delta,
                     margin=self.margin, n=self.n)

    @property
    def measured(self) -> str:
        """``Δ = +0.033 [+0.008, +0.067] (0.533 vs 0.500), n=120 questions, 3% differ (4↑ 0↓), p=0.125 (exact)``."""
        text = (f"Δ = {self.delta:+.3f} [{self.lo:+.3f}, {self.hi:+.3f}] ({self.mean:.3f} vs {self.reference_mean:.3f}), "
                f"n={self.n} questions, {self.share_differ:.0%} differ ({self.n_better}↑ {self.n_worse}↓), "
                f"{p_clause(self.p if self.p_claim is None else self.p_claim)} ({self.method})")
        if self.control is not None:
            text += f", with its control {p_clause(self.p)}"
        if self.family is not None:
            text += (f", finding {self.family_index + 1} of the {self.family.size} declared, in fixed sequence: "
                     f"{p_clause(self.p_adjusted)}")
        if self.control is not None:
            text += f"; control: {self.control.measured}"
        elif self.kind == "by_construction":
            text += "; its control (the knob at 0) was not run: the contrast alone"
        if self.detectable is not None:
            text += f"; not shown — {self.detectable.text}"
        return text

    @property
    def mark(self) -> str:
        """The verdict's word wherever a claim is printed: ``✓ holds`` or ``✗ not shown``."""
        return "✓ holds" if self.holds else "✗ not shown"

    @property
    def verdict(self) -> str:
        """The claim's one verdict in a few words, as every page shows it beside its Δ: ``✓ holds, p=0.0039
        (declared 1 of 4, one-sided, fixed sequence)`` or ``✗ not shown, …`` (a TOST: ``within ±0.06``)."""
        mark = self.mark
        if self.direction == "none":
            mark += f" within ±{self.margin:g}"
        test = "TOST" if self.direction == "none" else "one-sided"
        where = (f"declared {self.family_index + 1} of {self.family.size}, {test}, fixed sequence"
                 if self.family is not None else f"declared, {test}")
        return f"{mark}, {p_clause(self.p_adjusted)} ({where})"

    @property
    def message(self) -> str:
        """What was expected and what was measured, in one paragraph."""
        expected = _EXPECT[self.direction].format(margin=self.margin)
        verdict = "holds" if self.holds else "does NOT hold"
        control = "; and the effect vanishing with the knob at 0" if self.control is not None else ""
        return (f"Finding {verdict} ({_KIND_TEXT[self.kind]}): {self.claim}. Expected the paired difference of "
                f"{metric_label(self.metric)} ({self.metric}), {self.candidate} minus {self.reference}, with {expected} "
                f"and p < {self.alpha:g}{control}; measured {self.measured}.")

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON-able data (what ``rag-lab sweep --json`` prints): the claim, the contrast, the
        numbers, its p before and after its family's correction, and its verdict."""
        return {"claim": self.claim, "metric": self.metric, "candidate": self.candidate, "reference": self.reference,
                "direction": self.direction, "margin": self.margin, "kind": self.kind, "delta": self.delta,
                "lo": self.lo, "hi": self.hi, "n": self.n, "n_better": self.n_better, "n_worse": self.n_worse,
                "p": self.p, "method": self.method, "p_adjusted": self.p_adjusted, "holds": self.holds,
                "verdict": self.verdict}

    def __str__(self) -> str:
        return self.message

    def _repr_markdown_(self) -> str:
        mark = "✅" if self.holds else "❌"
        return f"{mark} {self.message}"


def _knob_text(result: SweepResult) -> str:
    knobs = (result.spec.get("backend") or {}).get("knobs") or {}
    return ", ".join(f"{k}={v}" for k, v in knobs.items()) or "default knobs"


def paired_finding(
    result: SweepResult,
    metric: str,
    candidate: str | Mapping[str, Any],
    reference: str | Mapping[str, Any] | None = None,
    direction: Direction = "above",
    claim: str = "",
    n_boot: int = 2000,
    *,
    kind: Kind = "measured",
    margin: float | None = None,
    control: SweepResult | None = None,
    family: FindingFamily | None = None,
    alpha: float = 0.05,
    questions: Collection[str] | None = None,
) -> Finding:
    """Check that ``candidate`` − ``reference`` on ``metric`` (paired over the same questions) lies
    ``direction`` of 0, with a paired test. ``candidate`` and ``reference`` pick one configuration each, as
    in :meth:`SweepResult.reference` (a candidate/config id, or a dict of dotted keys matching exactly one
    config; ``reference=None`` is the sweep's base config). ``direction="none"`` claims *no* effect: an
    equivalence test within ``±margin``, which must be stated.

    ``kind`` says what the finding rests on (docs/decisions.md, "What a finding rests on"); ``"by_construction"``
    needs ``control``, a sweep with the responsible knob at 0 holding the same two configurations. ``family``
    joins the finding to its notebook's :class:`FindingFamily` (fixed-sequence correction over the family)::

        FINDINGS = FindingFamily(size=2)      # the claims this notebook asserts, tested in this order
        finding = paired_finding(result, "quality_later_gold_retained", kind="measured", family=FINDINGS,
                                 candidate={"truncation.strategy": "rank_then_truncate"},
                                 reference={"truncation.strategy": "append_then_truncate"},
                                 direction="above", claim="ranking first keeps later-round gold")
        assert finding.holds, finding.message

    ``questions``: the question ids the test counts (default: all of the sweep's; a declared claim leaves out its
    pilot and its flagged twins). ``result`` may also be a
    :class:`~rag_lab.experiments.engine.pairs.PairedHalves`, whose values are pairs (a metric of
    :data:`~rag_lab.experiments.engine.pair_metrics.PAIR_METRICS`)."""
    if direction not in _EXPECT:
        raise ConfigError(f"direction must be one of {sorted(_EXPECT)}, got {direction!r}")
    if kind not in KINDS:
        raise ConfigError(f"kind must be one of {KINDS}, got {kind!r}")
    if margin is not None and not (isinstance(margin, (int, float)) and margin >= 0):
        raise ConfigError(f"margin must be >= 0, got {margin!r}")
    if direction == "none" and not margin:
        raise ConfigError("a 'no change' claim (direction='none') needs a stated equivalence margin > 0 "
                         "(margin=0.05: the difference is shown to lie within ±0.05)")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must be in (0, 1), got {alpha!r}")
    if kind == "by_construction" and control is None:
        raise ConfigError("a by-construction finding needs its control: control=<a sweep of the same two "
                         "configurations with the responsible knob at 0>, where the effect must vanish")
    if kind != "by_construction" and control is not None:
        raise ConfigError(f"control= is for by-construction findings; this one is {kind!r}")
    ref = result.reference(reference)
    cand = result.reference(candidate)
    labels = result.labels()
    cand_label = labels[cand["candidate_id"]]
    ref_label = labels[ref["candidate_id"]]
    if cand_label == ref_label:
        raise ConfigError(f"candidate and reference are the same configuration ({cand_label})")
    values, ref_values = claim_values(result, metric, cand["config_id"], ref["config_id"], questions)
    metric_range = PAIR_METRICS[metric].value_range if metric in PAIR_METRICS else value_range(metric)
    claimed = claim_test(values, ref_values, direction, margin, n_boot=n_boot, value_range=metric_range)
    test, diff = claimed.test, claimed.test.difference
    p = claimed.p
    p_claim = p
    checked = None
    if control is not None:
        c_values, c_ref = control.paired_values(metric, candidate, reference)
        c_test = paired_test(c_values, c_ref, n_boot=n_boot)
        # the arms must differ on under half the share of questions they differ on with the knob on
        on_share = (test.n_better + test.n_worse) / test.n if test.n else 0.0
        c_differ = c_test.n_better + c_test.n_worse
        share = on_share / 2
        # a measured Δ of exactly 0 leaves no share to show the control vanish below: the claim fails on its
        # own, and the control is not shown (p = 1) rather than an error
        c_p = (float(binomtest(c_differ, c_test.n, min(1.0, share), alternative="less").pvalue)
               if share > 0 and c_test.n else 1.0)
        checked = Control(delta=c_test.delta, lo=c_test.lo, hi=c_test.hi, n=c_test.n, p=c_p, margin=share,
                          knobs=_knob_text(control), method="share differing",
                          note=(f"the arms differ on {c_differ} of {c_test.n} questions, against "
                                f"{test.n_better + test.n_worse} of {test.n} with the knob on: exact binomial test "
                                f"of a share below half of that ({share:.3g})"))
        p = max(p, checked.p)
    index = family.join(p) if family is not None else -1
    adjusted = family.adjusted(index) if family is not None else p
    shown = claimed.test.n > 0 and holds(direction, adjusted, diff.lo, diff.hi, alpha, delta=diff.delta,
                                         margin=float(margin or 0.0), n=diff.n)
    return Finding(
        claim=claim or f"{cand_label} changes {metric_label(metric)} against {ref_label}",
        metric=metric, candidate=cand_label, reference=ref_label, direction=direction, margin=float(margin or 0.0),
        delta=diff.delta, lo=diff.lo, hi=diff.hi, n=diff.n, share_differ=diff.share_differ, mean=diff.mean,
        reference_mean=diff.reference_mean, p=float(p), method=claimed.method + ("" if direction == "none" else
                                                                                 ", one-sided"),
        n_better=test.n_better, n_worse=test.n_worse, kind=kind, alpha=alpha, control=checked, family=family,
        family_index=index, p_claim=p_claim, candidate_config=str(cand["config_id"]),
        reference_config=str(ref["config_id"]),
        # what its sample could have detected, with its test at its level (:func:`rag_lab.stats.power.detectable`)
        detectable=None if shown else detectable(paired_differences(values, ref_values), direction=direction,
                                                 alpha=alpha, margin=margin, value_range=metric_range),
    )


def claim_values(result: Any, metric: str, candidate: str, reference: str,
                 questions: Collection[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``result.paired_values`` of two configs, NaN outside ``questions`` (default: all kept): what a claim is tested
    (:func:`paired_finding`) and planned (:func:`~rag_lab.experiments.planning.plan_claim`) on."""
    values, ref_values = result.paired_values(metric, candidate, reference)
    if questions is not None:
        kept = set(questions)
        left_out = [i for i, q in enumerate(result.qids) if q not in kept]
        values, ref_values = values.copy(), ref_values.copy()
        values[left_out], ref_values[left_out] = np.nan, np.nan
    return values, ref_values


def sweep_findings(result: SweepResult, alpha: float | None = None,
                   pairs_with: SweepResult | None = None) -> list[Finding]:
    """The findings a sweep stated up front (its spec's ``findings:``, :class:`~rag_lab.experiments.engine.sweep.ClaimSpec`),
    each checked by :func:`paired_finding` in one :class:`FindingFamily` of their number, in the order listed — what
    ``rag-lab sweep`` prints and the HTML report shows. Each is tested on the questions outside the sweep's
    ``pilot:`` and its flagged twins (:func:`claim_qids`); a finding ``over: pairs`` on the pairs the sweep forms
    with ``pairs_with`` (the run of the sweep its ``pairs_with:`` names; default: the one the sweep runner keeps in
    its run directory, :func:`~rag_lab.experiments.engine.pairs.stored_other_half`), which it then needs. The level
    is the one the sweep's ``family:`` declares (0.05 by default), unless ``alpha`` is given."""
    claims = list((result.spec or {}).get("findings") or [])
    if not claims:
        return []
    if alpha is None:
        alpha = float(((result.spec or {}).get("family") or {}).get("alpha", 0.05))
    family = FindingFamily(size=len(claims), name=str(result.spec.get("name", "")))
    out = []
    for c, source in zip(claims, claim_sources(result, claims, pairs_with), strict=True):
        kind = c.get("kind", "measured")   # a by-construction claim's control is another sweep: its contrast alone here
        found = paired_finding(source, c["metric"], c["candidate"], c.get("reference"), c.get("direction", "above"),
                               claim=c.get("claim", ""), margin=c.get("margin"), family=family, alpha=alpha,
                               questions=claim_qids(source), kind="measured" if kind == "by_construction" else kind)
        out.append(replace(found, kind=kind))
    return out


def claim_sources(result: SweepResult, claims: Sequence[Mapping[str, Any]],
                  pairs_with: SweepResult | None = None) -> list[Any]:
    """What each of ``claims`` (a sweep file's ``findings:`` entries) reads: ``result``, or for a claim ``over: pairs``
    the :class:`~rag_lab.experiments.engine.pairs.PairedHalves` of ``result`` and ``pairs_with`` (default: the run of
    its other half kept in its run directory, :func:`~rag_lab.experiments.engine.pairs.stored_other_half`)."""
    if not any(c.get("over") == "pairs" for c in claims):
        return [result] * len(claims)
    other = pairs_with if pairs_with is not None else stored_other_half(result)
    if other is None:
        raise ConfigError(f"{result.run_dir}: claims over pairs read both halves, and no run of the other half "
                          f"(pairs_with: {result.spec.get('pairs_with')}) is kept in it: run its sweep first")
    pairs = PairedHalves(result, other)
    return [pairs if c.get("over") == "pairs" else result for c in claims]


def claim_qids(result: Any) -> list[str]:
    """The questions (or pairs) a declared claim of ``result`` is tested on: all but the spec's ``pilot:`` and, in a
    sweep of unanswerable twins, the twins flagged because their corpus still holds the answer."""
    if isinstance(result, PairedHalves):
        return result.claim_qids()
    pilot = set((result.spec or {}).get("pilot") or ())
    return [q for q in unflagged(result) if q not in pilot]


def unflagged(result: Any) -> list[str]:
    """``result``'s questions (or pairs) but its flagged twins (whose corpus still holds the answer)."""
    flagged = flagged_twins(result)
    return [q for q in result.qids if q not in flagged]


def flagged_twins(result: Any) -> set[str]:
    """The questions (or pairs) of ``result`` whose twin is flagged: its corpus still holds its original's answer
    (:mod:`rag_lab.loaders.twins`); empty for a sweep of no twins."""
    if isinstance(result, PairedHalves):
        return set(result.qids) - set(result.unflagged())
    rows = result.rows(result.reference()["candidate_id"])
    return set(rows.loc[rows["twin_flagged"].astype(bool), "qid"]) if "twin_flagged" in rows else set()


def kind_text(finding: Finding) -> str:
    """The finding's kind in words: ``measured``, ``by construction`` or ``definitional``."""
    return _KIND_TEXT[finding.kind]


def finding_line(finding: Finding, provisional: bool = False) -> str:
    """One line per finding: ``✓ holds (measured): <claim> (metric, candidate − reference): Δ … p=… (…), …``
    (``✗ not shown`` where it is not: :attr:`Finding.mark`); ``provisional``: tested on an unfinished
    sweep, and the line says so first."""
    lead = "provisional, " if provisional else ""
    return (f"{finding.mark} ({lead}{kind_text(finding)}): {finding.claim} ({finding.metric}, {finding.candidate} − "
            f"{finding.reference}): {finding.measured}")


def provisional_findings(result: SweepResult) -> list[Finding]:
    """:func:`sweep_findings` of a finished sweep; of an unfinished one, the same tests on the question runs stored
    so far (provisional: every page that shows them says so) — none before a question has finished, nor where
    a claim cannot be tested yet (e.g. the other half of its pairs has not run)."""
    if result.complete:
        return sweep_findings(result)
    if not result.question_runs():
        return []
    try:
        return sweep_findings(result)
    except (ConfigError, KeyError):
        return []
