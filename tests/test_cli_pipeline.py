"""``rag-lab run`` and ``rag-lab eval`` end to end on the shipped world with the simulator."""

from __future__ import annotations

import json

import pytest

from rag_lab.cli import main
from rag_lab.cli.pipeline_commands import parse_settings


def test_parse_settings_types_values():
    assert parse_settings(["crag.upper=0.6", "disclosure.disclosed=true", "truncation.strategy=refine",
                           "sources.simple=[wiki, runbook]"]) == {
        "crag.upper": 0.6, "disclosure.disclosed": True, "truncation.strategy": "refine",
        "sources.simple": ["wiki", "runbook"]}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_settings(["crag.upper"])


@pytest.mark.slow
def test_run_prints_result_and_trace(capsys):
    assert main(["run", "--dataset", "world", "--question", "bridge-025", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"]["qid"] == "bridge-025" and out["trace"]["steps"][0]["kind"] == "route"
    assert out["trace"]["stop_reason"] in {"answered", "cap_reached", "empty_round", "insufficient",
                                           "policy_rejected", "fallback", "budget_time", "budget_tokens"}


@pytest.mark.slow
def test_eval_summarises_quality_and_cost(tmp_path, capsys):
    code = main(["eval", "--dataset", "world", "--split", "test", "--limit", "12", "--set", "round_cap.max_rounds=1",
                 "--profile", "ideal", "--out", str(tmp_path), "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["questions"] == 12 and out["config"]["round_cap.max_rounds"] == 1
    assert 0.0 <= out["overall"]["quality_abstention_accuracy"] <= 1.0
    assert out["overall"]["cost_llm_calls"] >= 2
    assert len((tmp_path / "questions.jsonl").read_text().splitlines()) == 12


def test_bad_settings_and_questions_exit_2(capsys):
    assert main(["eval", "--dataset", "world", "--set", "crag.uper=1"]) == 2
    assert "unknown field 'uper'" in capsys.readouterr().err
    assert main(["run", "--dataset", "world", "--question", "nope"]) == 2
    assert "no question 'nope'" in capsys.readouterr().err


@pytest.mark.slow
def test_second_identical_evaluation_spends_nothing_and_incurs_the_same(tmp_path, world):
    from rag_lab.evaluation import evaluate_pipeline
    from rag_lab.llm.factory import open_backend
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

    questions = world.evalset.select(split="dev", limit=16)
    totals = []
    for _ in range(2):  # a fresh backend (and in-process state) each time, one cache file
        with open_backend("sim", profile="typical", cache=tmp_path / "llm.sqlite") as backend:
            run = evaluate_pipeline(Pipeline(PipelineConfig(), CorpusResources(world.corpus), backend), questions)
        totals.append({k: sum(r[k] for r in run.rows) for k in ("cost_llm_calls", "cost_tokens", "spent_llm_calls")})
    assert totals[0]["spent_llm_calls"] > 0 and totals[1]["spent_llm_calls"] == 0
    assert totals[0]["cost_llm_calls"] == totals[1]["cost_llm_calls"] and totals[0]["cost_tokens"] == totals[1]["cost_tokens"]
