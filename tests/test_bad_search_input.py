"""Bad input to a search or a report is an error in words: an objective, a constraint or a stated finding that
names no metric lists the known ones; `rag-lab report --mlflow F` with F a file says so before writing."""

from __future__ import annotations

import pytest

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import METRICS
from rag_lab.experiments.engine.search_space import Constraint, Objective, SearchSpec
from rag_lab.experiments.engine.sweep import SweepSpec

SPEC = {"name": "bad", "dataset": "world", "split": "test", "per_type": 2, "grid": {"round_cap.max_rounds": [1, 2]}}


def test_an_objective_or_constraint_naming_no_metric_lists_the_known_ones():
    with pytest.raises(ConfigError, match="'quality_nonsense' names no metric; the known metrics are: .*cost_llm_calls"):
        SweepSpec.from_dict({**SPEC, "search": {"sampler": "grid",
                                                "objectives": ["cost_llm_calls", "quality_nonsense"]}})
    with pytest.raises(ValueError, match="'cost_nonsense' names no metric"):
        Constraint.parse("cost_nonsense <= 3")
    with pytest.raises(ValueError, match="names no metric"):
        Objective.parse("max:quality_answer_containment_strictly")
    with pytest.raises(ConfigError, match="finding metric 'quality_typo' names no metric"):
        SweepSpec.from_dict({**SPEC, "findings": [{"metric": "quality_typo", "candidate": {"round_cap.max_rounds": 1}}]})
    # every metric a question row writes is known, the per-role counts included
    assert {"cost_llm_calls", "quality_answer_containment_strict", "cost_calls_controller", "spent_usd"} <= set(METRICS)
    spec = SearchSpec.model_validate({"sampler": "grid", "objectives": ["cost_calls_controller", "quality_f1"],
                                      "constraints": ["quality_refused <= 0.2"]})
    assert [o.metric for o in spec.parsed_objectives()] == ["cost_calls_controller", "quality_f1"]


def test_the_old_weak_dominance_is_an_error_that_says_what_replaced_it():
    with pytest.raises(ConfigError, match="'weak'.*observation, not a test.*noninferior"):
        SweepSpec.from_dict({**SPEC, "search": {"sampler": "grid", "race": {"batches": [4], "dominance": "weak"}}})


def test_mlflow_into_a_file_says_so_before_writing_anything(tmp_path, capsys):
    from rag_lab.cli import main

    target = tmp_path / "F"
    target.write_text("not a folder")
    run_dir = tmp_path / "run"
    assert main(["report", str(run_dir), "--out", str(tmp_path / "r.html"), "--mlflow", str(target)]) == 2
    err = capsys.readouterr().err
    assert "is a file, not a folder" in err and "Errno" not in err
    assert not (tmp_path / "r.html").exists()
