"""What a guardrail buys, as figures: the risk–coverage curve of a refusal threshold (rag_lab.stats.selective, checked
against a hand-computed example and the prefix definition of AURC), its figure from a sweep's rows, the right
answers lost against the wrong answers prevented per candidate (rag_lab.figures.guard_tradeoff), and the report's
"What each guardrail buys" section. Made to fail once: the hand example's expected AURC was written with the risk
at the *smaller* neighbouring coverage, (1/2 + 1/3 + 2·0)/7, and the test failed (``assert 0.22380952380952382 ==
0.11904761904761904 ± 1.2e-07``); then restored."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import pytest

from rag_lab.errors import ConfigError
from rag_lab.experiments import run_sweep
from rag_lab.figures import (
    GuardTradeoffInfo,
    RiskCoverageInfo,
    guard_tradeoff_figure,
    guard_tradeoff_info,
    risk_coverage_figure,
    risk_coverage_info,
)
from rag_lab.report import report_figures, write_report
from rag_lab.stats import risk_coverage

NAN = math.nan

# ---------------------------------------------------------------- risk-coverage from scores

# seven questions: one refused anyway (no score), one refused by the model (a score, not answered), two tied at 0.8
SCORE = [0.9, 0.8, 0.8, 0.5, NAN, 0.3, 0.7]
ANSWERED = [1, 1, 1, 1, 0, 1, 0]
RIGHT = [1, 0, 1, 0, 0, 1, 0]


def test_risk_coverage_of_a_hand_computed_example():
    rc = risk_coverage(np.array(SCORE), np.array(ANSWERED), np.array(RIGHT))
    # t = 0.3: q0 q1 q2 q3 q5 answered, q1 q3 wrong; t = 0.5: q5 refused too; t = 0.8: q3 too; t = 0.9: q0 alone
    assert rc.thresholds == (0.3, 0.5, 0.8, 0.9)
    assert rc.answered == (5, 4, 3, 1) and rc.n == 7
    assert rc.coverage == pytest.approx((5 / 7, 4 / 7, 3 / 7, 1 / 7))
    assert rc.risk == pytest.approx((2 / 5, 2 / 4, 1 / 3, 0.0))
    # the step curve, the risk between two coverages being the larger one's: (1/7)(2/5 + 1/2 + 2 · 1/3 + 1 · 0)
    assert rc.aurc == pytest.approx((2 / 5 + 1 / 2 + 2 / 3) / 7)


def test_without_ties_aurc_is_the_mean_selective_risk_of_the_ranked_prefixes():
    rng = np.random.default_rng(3)
    score = rng.permutation(50) / 50.0
    answered = np.ones(50)
    right = (rng.random(50) < 0.7).astype(float)
    rc = risk_coverage(score, answered, right)
    wrong_ranked = 1 - right[np.argsort(-score)]
    prefix_risk = np.cumsum(wrong_ranked) / np.arange(1, 51)
    assert rc.aurc == pytest.approx(prefix_risk.mean())            # Geifman & El-Yaniv: (1/n) sum of prefix risks
    assert len(rc.thresholds) == 50 and rc.coverage[0] == 1.0


def test_tied_scores_do_not_depend_on_their_order_and_refused_questions_stay_out():
    order = [6, 2, 5, 1, 0, 4, 3]
    shuffled = risk_coverage(*(np.array(v)[order] for v in (SCORE, ANSWERED, RIGHT)))
    assert shuffled == risk_coverage(np.array(SCORE), np.array(ANSWERED), np.array(RIGHT))
    none = risk_coverage(np.array([NAN, 0.4]), np.array([0, 0]), np.array([0, 0]))
    assert none.thresholds == () and math.isnan(none.aurc) and none.n == 2


def test_risk_coverage_rejects_bad_input():
    with pytest.raises(ValueError, match="one value per question"):
        risk_coverage(np.array([0.1, 0.2]), np.array([1]), np.array([1]))
    with pytest.raises(ValueError, match="only 0 and 1"):
        risk_coverage(np.array([0.1]), np.array([0.5]), np.array([0]))
    with pytest.raises(ValueError, match="right but not answered"):
        risk_coverage(np.array([0.1]), np.array([0]), np.array([1]))


# ---------------------------------------------------------------- on a small simulated sweep

THRESHOLD = "citations.refusal_threshold"
SPEC = {"name": "guard-figures", "dataset": "world", "split": "test", "types": ["single", "bridge", "unanswerable"],
        "per_type": 3, "seeds": [0],
        "grid": [{THRESHOLD: [0.1, 0.4, 0.6]}, {"generation.reader": ["plain"]}]}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return run_sweep(SPEC, tmp_path_factory.mktemp("guard-figures") / "run", progress="quiet")


def _by_label(sweep):
    return {label: cid for cid, label in sweep.labels().items()}


def test_thresholding_the_base_run_reproduces_each_threshold_config(sweep):
    """The citation guard runs after the last LLM call: the base run's curve, read at a config's threshold, is that
    config's own coverage and risk (on the simulated world, question by question)."""
    info = risk_coverage_info(sweep, points_by=THRESHOLD)
    assert isinstance(info, RiskCoverageInfo) and len(info.curves) == 1
    (curve,) = info.curves
    assert curve.label == "base" and curve.n == 9 and curve.unscored == 0
    assert info.point_values == ("0.1", "0.4", "0.6")                     # the plain reader leaves it unset: no point
    base = sweep.rows(curve.candidate_id)
    for cid, value, coverage, risk in zip(info.point_ids, info.point_values, info.point_coverage, info.point_risk,
                                          strict=True):
        rows = sweep.rows(cid)
        kept = (base["quality_answered"] == 1) & (base["best_relevance"] >= float(value))
        assert kept.tolist() == (rows["quality_answered"] == 1).tolist()
        assert coverage == pytest.approx(kept.mean())
        if kept.any():
            assert risk == pytest.approx(rows["quality_confident_error"].sum() / kept.sum())
            on_curve = [k for k, t in enumerate(curve.thresholds) if t >= float(value)][0]
            assert (curve.coverage[on_curve], curve.risk[on_curve]) == pytest.approx((coverage, risk))
    # the plain reader's run as a second curve, named by a config id as well as a candidate id
    plain = _by_label(sweep)["generation.reader=plain"]
    config = sweep.table.set_index("candidate_id").loc[plain, "config_id"]
    both = risk_coverage_info(sweep, [curve.candidate_id, config])
    assert [c.label for c in both.curves] == ["base", "generation.reader=plain"] and both.point_ids == ()


def test_risk_coverage_figure_and_its_errors(sweep):
    info = risk_coverage_info(sweep, points_by=THRESHOLD)
    fig = risk_coverage_figure(info)
    assert isinstance(fig, go.Figure) and fig.to_json() == risk_coverage_figure(info).to_json()
    line, marks, points = fig.data
    assert line.line.shape == "vh" and line.x[0] == 0.0 and "AURC" in line.name
    assert list(marks.customdata) == [info.curves[0].candidate_id] * len(info.curves[0].coverage)
    assert list(points.customdata) == list(info.point_ids) and points.marker.symbol == "diamond"
    assert not any(cid in fig.layout.title.text for cid in sweep.table["candidate_id"])
    with pytest.raises(ConfigError, match="no column"):
        risk_coverage_info(sweep, thresholds_from="nope")
    with pytest.raises(ConfigError, match="not a key this sweep varies"):
        risk_coverage_info(sweep, points_by="crag.lower")


# ---------------------------------------------------------------- what each guardrail buys

def test_guard_tradeoff_counts_question_by_question(sweep):
    labels = _by_label(sweep)
    plain = labels["generation.reader=plain"]
    info = guard_tradeoff_info(sweep, reference=plain)               # against the unguarded reader
    assert isinstance(info, GuardTradeoffInfo) and info.reference == "generation.reader=plain"
    assert info.reference_id == plain and plain not in set(info.table["candidate_id"])
    ref = sweep.rows(plain)
    for _, row in info.table.iterrows():
        cand = sweep.rows(row["candidate_id"])
        lost = int(((ref["quality_right"] == 1) & (cand["quality_right"] == 0)).sum())
        prevented = int(((ref["quality_confident_error"] == 1) & (cand["quality_confident_error"] == 0)).sum())
        gained = int(((ref["quality_right"] == 0) & (cand["quality_right"] == 1)).sum())
        new = int(((ref["quality_confident_error"] == 0) & (cand["quality_confident_error"] == 1)).sum())
        assert (row["n"], row["lost"], row["prevented"], row["gained_right"], row["new_wrong"]) == (
            9, lost, prevented, gained, new)
        assert row["net_c1"] == (gained - lost) - (new - prevented)
        assert row["net_c1"] == round(9 * (cand["quality_utility"].mean() - ref["quality_utility"].mean()))
        assert row["delta_calls"] == pytest.approx(cand["cost_llm_calls"].mean() - ref["cost_llm_calls"].mean())
    strict = info.table.set_index("label").loc[f"{THRESHOLD}=0.6, generation.reader=guarded"]
    assert strict["prevented"] > 0 and strict["gained_right"] == strict["new_wrong"] == 0   # a guard only refuses
    default = guard_tradeoff_info(sweep)
    assert default.reference == "the base config" and len(default.table) == 3


def test_guard_tradeoff_figure(sweep):
    info = guard_tradeoff_info(sweep)
    fig = guard_tradeoff_figure(info)
    diagonal, points = fig.data
    assert diagonal.x == diagonal.y and diagonal.x[0] == 0.0
    assert list(points.x) == info.table["lost"].tolist() and list(points.y) == info.table["prevented"].tolist()
    assert list(points.customdata) == info.table["candidate_id"].tolist()
    assert any(t for t in points.text)                                    # labelled where a label fits
    assert "against the base config" in fig.layout.title.text
    assert not any(cid in fig.layout.title.text for cid in sweep.table["candidate_id"])


def test_the_report_shows_what_each_guardrail_buys_only_with_the_metrics(sweep, tmp_path, monkeypatch):
    text = write_report(sweep, tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<h2>What each guardrail buys</h2>" in text and 'id="guard-tradeoff"' in text
    assert "<th>right answers lost</th>" in text and "<th>net at c = 1</th>" in text
    assert f"{THRESHOLD}=0.6" in text
    assert "guard_tradeoff" in report_figures(sweep)
    rows = sweep.rows
    monkeypatch.setattr(sweep, "rows", lambda cid: rows(cid).drop(columns=["quality_right", "quality_confident_error"]))
    older = write_report(sweep, tmp_path / "older.html").read_text(encoding="utf-8")
    assert "What each guardrail buys" not in older and "guard_tradeoff" not in report_figures(sweep)
