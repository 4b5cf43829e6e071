"""One rule for each number read off a sweep's stored rows, wherever it is read.

* A metric's value per question (:func:`rag_lab.experiments.engine.results.question_values`): the loop a search and
  a race read (``Evaluator.values``), the paired comparisons (``SweepResult.metric_matrix``) and the verification
  on a real backend all read a question that is not stored, an undefined value and a row without the key the same
  way.
* The questions a claim counts (``questions=``: its pilot and flagged twins left out) are left out the same way
  when it is tested (:func:`~rag_lab.experiments.engine.findings.paired_finding`) and when it is planned
  (:func:`~rag_lab.experiments.planning.plan_claim`).
* Whether a sweep is complete is whether every pair its progress plans is stored: the banner's count and the
  word can not disagree.
* The candidates a verification picks (:func:`~rag_lab.experiments.calibration.verify.select_candidates`): the
  simulated front, then the rest, each in the order of the ranking by the headline quality.
* Which real contrasts are shown against the simulator (``contrast_agreement``) is the exploratory Δ table's rule
  (:func:`rag_lab.experiments.engine.comparisons.with_holm`): the same Holm p and the same verdict for the same
  contrast.
"""

from __future__ import annotations

import math
import shutil
import sqlite3

import numpy as np
import pytest

from rag_lab.experiments import load_sweep, run_sweep
from rag_lab.experiments.calibration.sim_vs_real import contrast_agreement
from rag_lab.experiments.calibration.verify import _values as verified_values
from rag_lab.experiments.calibration.verify import select_candidates
from rag_lab.experiments.engine.comparisons import comparisons, is_measured
from rag_lab.experiments.engine.evaluator import Evaluator
from rag_lab.experiments.engine.findings import paired_finding
from rag_lab.experiments.engine.resolved_sweep import ResolvedSweep
from rag_lab.experiments.engine.results import question_values
from rag_lab.experiments.engine.sweep import SweepSpec
from rag_lab.experiments.planning import plan_claim
from rag_lab.stats.significance import holm

SPEC = {
    "name": "one-reading", "dataset": "world", "split": "test", "types": ["bridge", "comparison"], "per_type": 4,
    "base": {"round_cap.max_rounds": 3}, "grid": {"round_cap.max_rounds": [1, 3], "hyde.enabled": [False, True]},
}
QUALITY, CALLS = "quality_answer_containment_strict", "cost_llm_calls"
#: A cost no row holds (a role never called): it counts as 0, not as missing.
NEVER_CALLED = "cost_never_called_role"


def test_a_question_not_stored_an_undefined_value_and_a_missing_key():
    rows = {"q1": {QUALITY: 1, CALLS: 2}, "q2": {QUALITY: None}}
    calls = question_values(rows, ["q1", "q2", "q3"], CALLS)
    quality = question_values(rows, ["q1", "q2", "q3"], QUALITY)
    assert calls[:2].tolist() == [2.0, 0.0] and math.isnan(calls[2])
    assert quality[0] == 1.0 and math.isnan(quality[1]) and math.isnan(quality[2])


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return run_sweep(SPEC, tmp_path_factory.mktemp("reading") / "run", progress="quiet")


def test_the_loop_the_comparisons_and_the_verification_read_the_same_values(sweep, world):
    resolved = ResolvedSweep.build(SweepSpec.from_dict(SPEC), world.evalset)
    evaluator = Evaluator(sweep.store, resolved, world, progress="quiet")
    qids = [*sweep.qids[:5], "not-a-question"]
    for cid in sweep.table["candidate_id"]:
        for metric in (QUALITY, CALLS, NEVER_CALLED):
            loop = evaluator.values(cid, qids, metric)
            table = sweep.metric_matrix([cid], metric, qids)[:, 0]
            verify = verified_values(sweep, [cid], qids, metric)
            np.testing.assert_array_equal(loop, table)
            np.testing.assert_array_equal(loop, verify)
            assert math.isnan(loop[-1])
        assert not evaluator.values(cid, qids[:-1], NEVER_CALLED).any()


def test_real_against_sim_shows_a_contrast_as_the_delta_table_does(sweep, tmp_path):
    twin = run_sweep({**SPEC, "name": "one-reading-anchored", "backend": {"kind": "sim", "profile": "anchored"}},
                     tmp_path / "twin", progress="quiet")
    metrics = [QUALITY, CALLS]
    agreement = contrast_agreement(sweep, twin, metrics)
    table = comparisons(sweep, metrics)
    cells = [row for m in metrics for _, row in table[m][~table[m]["is_reference"]].iterrows()]
    assert len(agreement) == len(cells) == 6
    assert agreement["real_holm"].tolist() == pytest.approx(holm(agreement["real_p"]), nan_ok=True)
    for (_, mine), cell in zip(agreement.iterrows(), cells, strict=True):
        assert (mine["metric"], mine["contrast"]) == (cell["metric"], cell["label"])
        assert mine["real_holm"] == pytest.approx(cell["p_holm"], nan_ok=True)
        assert mine["real_shown"] == is_measured(cell)
        assert mine["real_detectable"] == ("" if cell["detectable"] is None else cell["detectable"].text)


def test_a_claim_is_tested_and_planned_on_the_same_questions(sweep):
    candidate = {"round_cap.max_rounds": 1, "hyde.enabled": False}
    questions = sweep.qids[1:6]
    finding = paired_finding(sweep, CALLS, candidate, direction="below", questions=questions)
    plan = plan_claim(sweep, CALLS, candidate, direction="below", questions=questions)
    assert finding.n == plan.pilot_n == len(questions)
    assert plan.pilot_delta == pytest.approx(finding.delta)


def test_a_sweep_is_complete_when_its_progress_says_every_planned_pair_is_stored(sweep, tmp_path):
    planned = len(sweep.table) * len(sweep.qids)
    assert sweep.complete and sweep.progress() == (planned, planned)
    shutil.copytree(sweep.run_dir, tmp_path / "partial")
    with sqlite3.connect(tmp_path / "partial" / "run.sqlite") as conn:
        conn.execute("DELETE FROM rows WHERE rowid IN (SELECT rowid FROM rows LIMIT 3)")
    partial = load_sweep(tmp_path / "partial")
    assert not partial.complete and partial.progress() == (planned - 3, planned)


def test_a_race_is_complete_when_each_candidate_ran_up_to_its_drop(tmp_path):
    """Every question makes at least one LLM call, so a bound of 0.5 a question drops every candidate at the look
    after 12 questions (tests/test_search_panel.py says why 12 suffice); its planned pairs end there."""
    spec = {**SPEC, "name": "one-reading-race", "per_type": 8, "grid": {"round_cap.max_rounds": [1, 3]},
            "search": {"sampler": "grid", "race": {"batches": [12]}, "constraints": ["cost_llm_calls <= 0.5"]}}
    result = run_sweep(spec, tmp_path / "run", progress="quiet")
    assert (result.table["status"] == "dropped").all() and len(result.qids) == 16
    assert result.complete and result.progress() == (24, 24)


def test_a_verification_picks_the_front_then_the_rest_each_in_the_ranking_order(tmp_path):
    grid = [{"round_cap.max_rounds": [1, 2, 3]}, {"hyde.enabled": [True]}, {"truncation.strategy": ["append_then_truncate"]},
            {"crag.upper": [0.3]}]
    sim = run_sweep({**SPEC, "name": "one-reading-pick", "per_type": 8, "grid": grid}, tmp_path / "run", progress="quiet")
    every = select_candidates(sim, top=10)
    ranked = list(select_candidates(sim, top=10, by=QUALITY)["config_id"])
    parts = [list(every.loc[every["reason"] == part, "config_id"]) for part in ("pareto front", f"best of the rest by {QUALITY}")]
    assert len(parts[0]) >= 2 and len(parts[1]) >= 2 and parts[0] + parts[1] == list(every["config_id"])
    for ids in parts:
        assert ids == [k for k in ranked if k in ids]
