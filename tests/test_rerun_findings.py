"""Re-running a sweep's declared findings on other datasets and seeds (rag_lab.experiments.robustness): one record
per finding and cell, each the claim's own test on that cell's run (the p ``sweep_findings`` gives it), a cell on
another dataset its first ``limit`` questions; a by-construction claim of a sweep file is tested on its contrast."""

from __future__ import annotations

import pytest

from rag_lab.errors import ConfigError
from rag_lab.experiments import load_sweep
from rag_lab.experiments.engine.findings import sweep_findings
from rag_lab.experiments.robustness import cell_spec, rerun_findings

SPEC = {"name": "rerun", "dataset": "world", "split": "test", "types": ["bridge"], "per_type": 6,
        "grid": [{"round_cap.max_rounds": [2]}, {"round_cap.max_rounds": [1]}],
        "findings": [{"name": "calls", "metric": "cost_llm_calls", "candidate": {"round_cap.max_rounds": 1},
                      "reference": {"round_cap.max_rounds": 2}, "direction": "below", "kind": "by_construction"},
                     {"metric": "quality_answer_containment_strict", "candidate": {"round_cap.max_rounds": 1},
                      "reference": {"round_cap.max_rounds": 2}, "direction": "none", "margin": 0.5}]}


def test_each_finding_is_tested_in_each_cell_with_its_own_test(tmp_path):
    seen = []
    records = rerun_findings(SPEC, ["world", "hotpotqa_sample"], [0, 1], tmp_path, limit=4, on_cell=seen.append)
    assert seen == records
    assert [(r["dataset"], r["seed"], r["finding"], r["name"]) for r in records] == [
        (d, s, i, name) for d in ("world", "hotpotqa_sample") for s in (0, 1) for i, name in ((0, "calls"), (1, ""))]
    for record in records:
        result = load_sweep(tmp_path / f"rerun_{record['dataset']}_s{record['seed']}")
        found = sweep_findings(result)[record["finding"]]
        assert (record["p"], record["delta"], record["n"]) == (found.p, found.delta, found.n)
        assert record["n"] == (6 if record["dataset"] == "world" else 4) == record["differences"]["n"]
        assert ("p_difference" in record) == (found.direction == "none")
    assert sweep_findings(load_sweep(tmp_path / "rerun_world_s0"))[0].kind == "by_construction"


def test_a_cell_on_another_dataset_drops_the_sweeps_own_questions_and_nothing_runs_without_findings(tmp_path):
    spec = cell_spec(SPEC, "world", 3, limit=9)
    assert (spec["name"], spec["per_type"], spec["types"], spec["seeds"], "limit" in spec) == (
        "rerun_world_s3", 6, ["bridge"], [3], False)
    with pytest.raises(ConfigError, match="states no findings"):
        rerun_findings({**SPEC, "findings": []}, ["world"], [0], tmp_path)
    with pytest.raises(ConfigError, match="at least one dataset and one seed"):
        rerun_findings(SPEC, [], [0], tmp_path)
