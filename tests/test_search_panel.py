"""SweepPanel's search, headless: the space from the value boxes (ranges ``low..high``), a raced Optuna search
started from the panel, trials and drops arriving in its log in order, and the table and front it draws
matching the run directory's results."""

from __future__ import annotations

import pytest

from rag_lab.errors import ConfigError
from rag_lab.experiments import load_sweep
from rag_lab.widgets import SweepPanel


def test_space_reads_ranges_and_choices_and_bad_values_fail_clearly():
    panel = SweepPanel(limit=4)
    panel.choose({"round_cap.max_rounds": ["1..4"], "disclosure.disclosed": [False, True]})
    assert panel.space() == {"round_cap.max_rounds": {"low": 1, "high": 4}, "disclosure.disclosed": [False, True]}
    spec = panel.search_spec(sampler="tpe", trials=5, race=[2], constraints=["cost_llm_calls <= 4"])
    assert spec.search.sampler == "tpe" and spec.search.trials == 5 and spec.search.race.batches == [2]
    assert spec.search.objectives == [panel.cost_col, panel.quality_col]
    with pytest.raises(ConfigError, match="cannot read '1..4'"):
        panel.search_spec(sampler="grid")  # a grid takes the values as a list of choices, not a range
    panel.choose({"round_cap.max_rounds": ["1..x"]})
    with pytest.raises(ConfigError, match="round_cap.max_rounds"):
        panel.space()


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    panel = SweepPanel(per_type=2, types=["single", "bridge", "comparison", "unanswerable"],
                       run_dir=tmp_path_factory.mktemp("panel-search") / "run")
    panel.choose({"round_cap.max_rounds": ["1..3"], "truncation.strategy": ["rank_then_truncate",
                                                                           "append_then_truncate"]})
    result = panel.search(sampler="nsga2", trials=6, race=[4])
    return panel, result


@pytest.mark.slow
def test_search_from_the_panel_reports_trials_drops_and_the_front(searched):
    panel, result = searched
    trials = [e for e in panel.events if e.kind == "trial"]
    assert [e.number for e in trials] == list(range(6)) and panel.events[-1].kind == "done"
    assert [e.candidate_id for e in trials] == list(result.trials()["candidate_id"])
    dropped = {e.candidate_id for e in panel.events if e.kind == "dropped"}
    assert dropped == set(result.table.loc[result.table["status"] == "dropped", "candidate_id"])
    lines = panel.log_lines()
    assert sum(line.startswith("trial ") for line in lines) == 6
    assert all(any(cid in line and "after" in line for line in lines) for cid in dropped)
    # what the panel draws is the run directory's table: its points and its front
    again = load_sweep(result.run_dir)
    assert list(again.table["candidate_id"]) == list(result.table["candidate_id"])
    points = panel.figure.data[0]
    assert len(points.x) == len(result.table)
    front = result.table[result.table["is_pareto"]]
    front_trace = [t for t in panel.figure.data if t.name and "Pareto" in t.name]
    assert front_trace and len(front_trace[0].x) == len(front)
    assert "status" in panel._table.value and f"{len(result.table)} candidates" in panel._state.value


def test_search_button_with_a_bad_constraint_shows_the_error(searched):
    panel, _ = searched
    panel._constraints.value = "cost_llm_calls < 3"
    panel._search_clicked()
    assert panel._state.value.startswith("invalid:") and "constraint" in panel._state.value
    panel._constraints.value = ""


@pytest.mark.slow
def test_dropped_candidates_arrive_in_the_panel_log(tmp_path):
    """Every question makes at least the router's LLM call (router on), so a bound of 0.5 calls per question is
    broken by every candidate: each is dropped after the first batch, and the panel shows each drop. (12
    questions: the look's family holds one dominance hypothesis per candidate and every constraint test, four
    hypotheses, so the exact p of 12 questions above the bound, 2^-12, survives Holm; 6 questions, 2^-6 · 4 =
    0.0625, would not.)"""
    panel = SweepPanel(per_type=4, types=["single", "bridge", "comparison", "unanswerable"],
                       run_dir=tmp_path / "run")
    panel.choose({"round_cap.max_rounds": ["1", "3"]})
    result = panel.search(sampler="grid", race=[12], constraints=["cost_llm_calls <= 0.5"])
    drops = [e for e in panel.events if e.kind == "dropped"]
    assert {e.candidate_id for e in drops} == set(result.table["candidate_id"]) and len(drops) == len(result.table)
    assert all(e.data["n_questions"] == 12 and e.data["rival"] is None for e in drops)
    lines = panel.log_lines()
    assert all(any(e.candidate_id in line and "breaks cost_llm_calls <= 0.5" in line for line in lines) for e in drops)
    assert not result.table["is_pareto"].any() and (result.table["status"] == "dropped").all()
    assert result.question_runs() == 12 * len(result.table)  # nothing ran past the first batch
