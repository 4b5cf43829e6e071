"""Findings (rag_lab.experiments.engine.findings): a claim holds only with its interval on the claimed side *and* its
one-sided paired test's p below alpha after Bonferroni over its family's declared size; "no change" is an
equivalence test with a margin; a by-construction finding carries its control. On a small in-memory result
with per-question values given directly, so each case is exact."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.experiments import FindingFamily, holm, paired_finding


class TinyResult:
    """The part of SweepResult a finding reads: two or more configs with per-question values of one metric."""

    def __init__(self, values: dict[str, list[float]], knobs: dict | None = None) -> None:
        self.values = {k: np.asarray(v, dtype=float)[:, None] for k, v in values.items()}
        self.spec = {"backend": {"kind": "sim", "knobs": knobs or {}}}

    def reference(self, ref):
        key = next(iter(self.values)) if ref is None else ref if isinstance(ref, str) else ref["arm"]
        return {"config_id": key, "candidate_id": key}

    def labels(self):
        return {k: f"arm={k}" for k in self.values}

    def paired_values(self, metric, candidate, reference=None):
        return self.values[self.reference(candidate)["config_id"]], self.values[self.reference(reference)["config_id"]]


def flips(n, better, worse=0):
    ref = np.zeros(n)
    ref[better + worse:][::2] = 1.0
    values = ref.copy()
    values[:better] = 1.0
    ref[better:better + worse] = 1.0
    return values.tolist(), ref.tolist()


def test_four_flipped_questions_are_no_longer_a_finding():
    for n in (20, 60, 120):
        on, off = flips(n, better=4)
        f = paired_finding(TinyResult({"off": off, "on": on}), "quality_f1", candidate={"arm": "on"}, direction="above")
        assert f.lo > 0 and f.on_claimed_side          # what the interval alone used to call a finding
        assert f.p == pytest.approx(0.0625) and f.method == "exact, one-sided" and (f.n_better, f.n_worse) == (4, 0)
        assert not f.holds and "does NOT hold" in f.message and "p=0.062 (exact, one-sided)" in f.message
    on, off = flips(120, better=12)
    f = paired_finding(TinyResult({"off": off, "on": on}), "quality_f1", candidate={"arm": "on"}, direction="above")
    assert f.holds and f.p == pytest.approx(0.5**12)


def test_a_family_declared_up_front_fixes_each_verdict_when_it_is_made():
    """Fixed sequence in the declared order: a finding's adjusted p is the largest p up to it, the same before
    and after later findings join (Holm's step-down would change an earlier verdict when a later one joins)."""
    strong, weak = flips(120, better=12), flips(120, better=7, worse=1)   # one-sided p = 0.00024 and 0.035
    result = TinyResult({"off": strong[1], "on": strong[0], "off2": weak[1], "on2": weak[0]})
    family = FindingFamily(size=3)
    first = paired_finding(result, "quality_f1", candidate={"arm": "on"}, reference={"arm": "off"}, family=family)
    before = (first.p_adjusted, first.holds, first.message)
    assert first.p_adjusted == first.p == pytest.approx(0.5 ** 12) and first.holds
    assert "finding 1 of the 3 declared, in fixed sequence" in first.message
    second = paired_finding(result, "quality_f1", candidate={"arm": "on2"}, reference={"arm": "off2"}, family=family)
    assert second.p == pytest.approx(9 / 256) and second.p_adjusted == second.p and second.holds
    same = TinyResult({"off": strong[1], "on": strong[1]})
    third = paired_finding(same, "quality_f1", candidate={"arm": "on"}, reference={"arm": "off"}, family=family)
    assert family.complete and (first.p_adjusted, first.holds, first.message) == before   # unchanged by later ones
    assert second.holds and not third.holds and third.p == 1.0
    assert holm([first.p, second.p, third.p])[1] == pytest.approx(2 * second.p)   # Holm: 0.070, second fails
    with pytest.raises(ValueError, match="full"):
        paired_finding(result, "quality_f1", candidate={"arm": "on"}, reference={"arm": "off"}, family=family)
    with pytest.raises(ValueError, match="size"):
        FindingFamily(size=0)


def test_in_a_sequence_a_finding_counts_only_after_every_earlier_one():
    # the weak claim first: it fails at p = 0.0625 (4 up of 120), and so does every claim after it, however strong
    four, strong = flips(120, better=4), flips(120, better=12)
    result = TinyResult({"off": four[1], "on": four[0], "off2": strong[1], "on2": strong[0]})
    alone = paired_finding(result, "quality_f1", candidate={"arm": "on2"}, reference={"arm": "off2"})
    assert alone.holds
    family = FindingFamily(size=2)
    weak = paired_finding(result, "quality_f1", candidate={"arm": "on"}, reference={"arm": "off"}, family=family)
    after = paired_finding(result, "quality_f1", candidate={"arm": "on2"}, reference={"arm": "off2"}, family=family)
    assert not weak.holds and after.p == alone.p and after.p_adjusted == pytest.approx(0.0625) and not after.holds


def test_no_change_is_an_equivalence_test_with_a_stated_margin():
    same = [0.0, 1.0] * 60
    result = TinyResult({"a": same, "b": same, "c": same[:20] + [0.0] * 100})
    f = paired_finding(result, "quality_f1", candidate={"arm": "b"}, direction="none", margin=0.05)
    assert f.holds and f.method == "TOST exact" and f.p == pytest.approx(0.95 ** 120)
    with pytest.raises(ValueError, match="margin"):
        paired_finding(result, "quality_f1", candidate={"arm": "b"}, direction="none")
    with pytest.raises(ValueError, match="margin"):
        paired_finding(result, "quality_f1", candidate={"arm": "b"}, direction="none", margin=0.0)
    far = paired_finding(result, "quality_f1", candidate={"arm": "c"}, direction="none", margin=0.05)  # Δ = −0.417
    assert not far.holds
    few = TinyResult({"a": same[:20], "b": same[:20]})       # 20 identical questions prove no ±0.05 equivalence
    assert not paired_finding(few, "quality_f1", candidate={"arm": "b"}, direction="none", margin=0.05).holds
    # a bounded non-binary metric the same on every question: the exact bound on the share that differ
    f1 = TinyResult({"a": [0.5] * 120, "b": [0.5] * 120})
    bounded = paired_finding(f1, "quality_f1", candidate={"arm": "b"}, direction="none", margin=0.05)
    assert bounded.method == "TOST exact bound" and bounded.p == pytest.approx(0.95 ** 120) and bounded.holds
    five = TinyResult({"a": [0.5] * 5, "b": [0.5] * 5})
    assert not paired_finding(five, "quality_f1", candidate={"arm": "b"}, direction="none", margin=0.05).holds
    calls = TinyResult({"a": [3.0] * 120, "b": [3.0] * 120})    # unbounded: refused, however many questions
    refused = paired_finding(calls, "cost_llm_calls", candidate={"arm": "b"}, direction="none", margin=0.5)
    assert refused.method == "TOST refused" and refused.p == 1.0 and not refused.holds


def test_a_by_construction_finding_needs_its_control():
    on, off = flips(120, better=15)
    knob_on = TinyResult({"off": off, "on": on}, knobs={"budget_anchoring": 0.6})
    vanished = TinyResult({"off": off, "on": off}, knobs={"budget_anchoring": 0.0})
    persists = TinyResult({"off": off, "on": on}, knobs={"budget_anchoring": 0.0})
    with pytest.raises(ValueError, match="control"):
        paired_finding(knob_on, "quality_f1", candidate={"arm": "on"}, kind="by_construction")
    with pytest.raises(ValueError, match="control"):
        paired_finding(knob_on, "quality_f1", candidate={"arm": "on"}, kind="measured", control=vanished)
    good = paired_finding(knob_on, "quality_f1", candidate={"arm": "on"}, kind="by_construction", control=vanished)
    assert good.holds and good.control.delta == 0 and good.control.margin == pytest.approx(15 / 120 / 2)
    assert good.control.p == pytest.approx((1 - 15 / 240) ** 120) and "0 of 120 questions" in good.message
    assert "by construction" in good.message and "budget_anchoring=0.0" in good.message
    bad = paired_finding(knob_on, "quality_f1", candidate={"arm": "on"}, kind="by_construction", control=persists)
    assert bad.on_claimed_side and not bad.holds and bad.p == pytest.approx(bad.control.p) and bad.control.p > 0.5


def test_a_by_construction_finding_with_no_effect_fails_instead_of_raising():
    """With the knob's code switched off both arms agree (Δ = 0): the claim fails and says so; the
    control margin (half of |Δ|) is 0, so the control is not shown — never an error."""
    _, off = flips(120, better=15)
    same = TinyResult({"off": off, "on": off}, knobs={"budget_anchoring": 0.6})
    vanished = TinyResult({"off": off, "on": off}, knobs={"budget_anchoring": 0.0})
    nothing = paired_finding(same, "quality_f1", candidate={"arm": "on"}, kind="by_construction", control=vanished)
    assert not nothing.holds and nothing.delta == 0 and nothing.control.margin == 0 and nothing.p == 1.0


def test_kinds_and_outcomes():
    on, off = flips(120, better=15)
    result = TinyResult({"off": off, "on": on})
    d = paired_finding(result, "cost_llm_calls", candidate={"arm": "on"}, kind="definitional")
    assert d.kind == "definitional" and not d.is_outcome and "(definitional)" in d.message
    assert paired_finding(result, "quality_answer_containment_strict", candidate={"arm": "on"}).is_outcome
    with pytest.raises(ValueError, match="kind"):
        paired_finding(result, "quality_f1", candidate={"arm": "on"}, kind="obvious")


class TinySweep:
    """Configs with per-question values of several metrics, and SweepResult's ``compare`` for the cost."""

    def __init__(self, metrics: dict[str, dict[str, list[float]]]) -> None:
        self.metrics = {m: {k: np.asarray(v, dtype=float)[:, None] for k, v in arms.items()} for m, arms in metrics.items()}
        self.arms = list(next(iter(metrics.values())))

    def reference(self, ref):
        key = self.arms[0] if ref is None else ref
        return {"config_id": key, "candidate_id": key, "rule": "base"}

    def paired_values(self, metric, candidate, reference=None):
        return self.metrics[metric][candidate], self.metrics[metric][self.reference(reference)["config_id"]]

    def compare(self, metric, reference=None, n_boot=2000):
        from rag_lab.experiments import paired_test
        ref = self.reference(reference)["config_id"]
        rows = []
        for arm in self.arms:
            t = paired_test(self.metrics[metric][arm], self.metrics[metric][ref], n_boot=n_boot)
            rows.append({"label": arm, "candidate_id": arm, "config_id": arm, "is_reference": arm == ref,
                         "delta": t.delta, "lo": t.lo, "hi": t.hi})
        import pandas as pd
        return pd.DataFrame(rows)


def test_the_recommendation_needs_equivalence_not_absence_of_evidence():
    from rag_lab.experiments.tuning.recommend import recommend, recommendation_text, verdicts

    n = 200
    base = flips(n, better=0)[1]                           # every other question right
    hurts = [0.0 if i < 60 else b for i, b in enumerate(base)]       # 30 right answers lost
    unclear = [1.0 - b if i < 9 else b for i, b in enumerate(base)]  # 5 lost, 4 gained: nothing shown either way
    quality = {"base": base, "same_cheap": list(base), "hurts_cheapest": hurts, "unclear_cheap": unclear}
    calls = {"base": [3.0] * n, "same_cheap": [2.0] * n, "hurts_cheapest": [1.0] * n, "unclear_cheap": [1.5] * n}
    sweep = TinySweep({"quality_f1": quality, "cost_llm_calls": calls})
    table = verdicts(sweep, metrics=["quality_f1"], cost="cost_llm_calls", margin=0.03)
    v = dict(zip(table["label"], table["quality_f1: verdict"], strict=True))
    assert v["base"] == "reference" and v["same_cheap"] == "equivalent"
    assert v["hurts_cheapest"] == "hurts" and v["unclear_cheap"] == "inconclusive"
    assert table.attrs["family"] == 6                        # 3 candidates x (difference + TOST)
    assert recommend(table)["label"] == "same_cheap"         # not the cheaper inconclusive one
    text = recommendation_text(table)
    assert text.startswith("Recommended: same_cheap") and "Avoid: hurts_cheapest" in text
    only_unclear = verdicts(TinySweep({"quality_f1": {"base": base, "u": unclear}, "cost_llm_calls":
                                       {"base": calls["base"], "u": calls["unclear_cheap"]}}),
                            metrics=["quality_f1"], cost="cost_llm_calls", margin=0.03)
    assert recommend(only_unclear)["label"] == "base"
    assert recommendation_text(only_unclear).startswith("Recommended: keep base")
