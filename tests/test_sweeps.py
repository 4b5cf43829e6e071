"""Sweeps (docs/design.md §6): grid semantics, spec files, the run store, resume after SIGKILL, parallel and
Dask execution equal to serial, reuse across candidates through the response cache, and the CLI."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
import yaml
from killing import kill_mid_sweep_then_resume

from rag_lab.cli import main
from rag_lab.errors import ConfigError
from rag_lab.evaluation import evaluate_pipeline
from rag_lab.experiments import Grid, SweepSpec, candidate_id, load_sweep, run_sweep
from rag_lab.experiments.engine.resolved_sweep import ResolvedSweep, base_config, parameter_grid, select_questions
from rag_lab.experiments.engine.store import RUN_FILE, RunStore
from rag_lab.experiments.engine.sweep import BackendSpec
from rag_lab.experiments.engine.sweep_file import load_sweep_spec
from rag_lab.llm.factory import open_backend
from rag_lab.loaders import load_dataset
from rag_lab.paths import cache_dir
from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

REPO = Path(__file__).resolve().parent.parent

#: A small sweep: three runs (one pair of candidates collapses into the base config) over 9 questions.
SMALL = {
    "name": "small",
    "dataset": "world",
    "split": "test",
    "types": ["single", "bridge", "comparison"],
    "per_type": 3,
    "grid": [{"round_cap.max_rounds": [1, 2]}, {"truncation.strategy": ["rank_then_truncate", "append_then_truncate"]}],
}


def deterministic_columns(table: pd.DataFrame) -> list[str]:
    """The columns equal across executors and cache states (spent_* and run_* are not)."""
    return ["candidate_id", "seed", *[c for c in table.columns if c.startswith(("param_", "quality_", "cost_"))]]


def assert_same_table(a: pd.DataFrame, b: pd.DataFrame) -> None:
    cols = deterministic_columns(a)
    assert cols == deterministic_columns(b)
    pd.testing.assert_frame_equal(a[cols].reset_index(drop=True), b[cols].reset_index(drop=True))


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    return run_sweep(SMALL, tmp_path_factory.mktemp("small"), progress="quiet")


@pytest.fixture
def cold_llm_cache(tmp_path, monkeypatch):
    """A fresh LLM response cache; embeddings are copied from the shared cache to keep the test fast."""
    shared = cache_dir() / "embeddings.sqlite"
    cold = tmp_path / "cache"
    cold.mkdir()
    if shared.is_file():
        shutil.copy(shared, cold / "embeddings.sqlite")
    monkeypatch.setenv("RAG_LAB_CACHE", str(cold))
    return cold


# --- grid semantics ------------------------------------------------------------------------------


def test_dict_grid_order_len_and_indexing():
    grid = Grid({"round_cap.max_rounds": [1, 2, 3], "disclosure.disclosed": [False, True]})
    expected = [{"disclosure.disclosed": d, "round_cap.max_rounds": r} for d in (False, True) for r in (1, 2, 3)]
    assert len(grid) == 6 and list(grid) == expected  # keys sorted, the last key varies fastest
    assert [grid[i] for i in range(6)] == expected and grid[-1] == expected[-1]
    with pytest.raises(IndexError):
        grid[6]
    assert grid.keys == ["disclosure.disclosed", "round_cap.max_rounds"]
    assert len(Grid({})) == 1 and list(Grid({})) == [{}]


def test_list_of_dicts_is_a_conditional_grid():
    grid = Grid([{"hyde.enabled": [False]}, {"hyde.enabled": [True], "hyde.n_docs": [1, 2, 4]}])
    assert len(grid) == 4
    assert list(grid) == [{"hyde.enabled": False}] + [{"hyde.enabled": True, "hyde.n_docs": n} for n in (1, 2, 4)]
    assert grid[2] == {"hyde.enabled": True, "hyde.n_docs": 2}


@pytest.mark.parametrize("spec, message", [
    ([], "at least one dict"),
    ({"crag.upper": 0.5}, "expected a list of values"),
    ({"crag.upper": []}, "value list is empty"),
    ([{"crag.upper": [0.5]}, "hyde"], "grid dict 1: expected a dict"),
    ("crag.upper", "got str"),
])
def test_malformed_grids_are_rejected(spec, message):
    with pytest.raises(ConfigError, match=message):
        Grid(spec)


def test_candidates_are_validated_against_the_base_before_running():
    base = PipelineConfig()
    with pytest.raises(ConfigError, match=r"grid key 'crag.uper'.*unknown field 'uper'"):
        Grid({"crag.uper": [0.5]}).resolve(base)
    with pytest.raises(ConfigError, match=r"grid candidate 1 \{'crag.upper': 1.5\}.*crag.upper"):
        Grid({"crag.upper": [0.5, 1.5]}).resolve(base)
    with pytest.raises(ConfigError, match=r"grid candidate 0 .*rewrite or hyde"):
        Grid({"hyde.enabled": [True], "rewrite.enabled": [True]}).resolve(base)


def test_duplicate_candidates_collapse_into_the_first_with_merged_params():
    grid = Grid([{"round_cap.max_rounds": [2, 3]}, {"crag.upper": [0.5, 0.7]}])  # 2 and 0.5 are the defaults
    resolved = grid.resolve(PipelineConfig())
    assert len(grid) == 4 and len(resolved) == 3
    assert resolved[0].params == {"round_cap.max_rounds": 2, "crag.upper": 0.5}
    assert resolved[0].grid_indices == (0, 2) and resolved[0].config == PipelineConfig()
    assert [c.params for c in resolved[1:]] == [{"round_cap.max_rounds": 3}, {"crag.upper": 0.7}]


def test_candidate_id_hashes_the_resolved_config_backend_and_seed():
    base, sim = PipelineConfig(), BackendSpec()
    same = base.with_params({"crag.upper": 0.5})  # the default, spelled out
    assert candidate_id(same, sim, 0) == candidate_id(base, sim, 0)
    assert candidate_id(base, sim, 1) != candidate_id(base, sim, 0)
    assert candidate_id(base, BackendSpec(profile="ideal"), 0) != candidate_id(base, sim, 0)
    assert candidate_id(base, BackendSpec(knobs={"bridge_drop": 0.5}), 0) != candidate_id(base, sim, 0)
    assert candidate_id(base, BackendSpec(cache=False), 0) == candidate_id(base, sim, 0)


# --- spec files ----------------------------------------------------------------------------------


def test_spec_from_yaml_and_json_with_a_base_config_file(tmp_path):
    (tmp_path / "base.yaml").write_text("crag:\n  upper: 0.6\n")
    spec = {**SMALL, "base": "base.yaml", "seeds": [0, 1]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec))
    (tmp_path / "s.json").write_text(json.dumps(spec))
    from_yaml, from_json = load_sweep_spec(tmp_path / "s.yaml"), load_sweep_spec(tmp_path / "s.json")
    assert from_yaml == from_json
    assert base_config(from_yaml).get("crag.upper") == 0.6  # relative to the sweep file
    assert len(parameter_grid(from_yaml)) == 4


@pytest.mark.parametrize("change, message", [
    ({"grid": {"crag.upper": 0.5}}, r"grid: .*expected a list of values"),
    ({"limt": 3}, r"limt: Extra inputs are not permitted"),
    ({"seeds": [1, 1]}, r"seeds: .*distinct"),
    ({"backend": {"kind": "sim", "knobs": {"bridge_drop": 2.0}}}, r"backend: .*bridge_drop"),
    ({"backend": {"kind": "gpt"}}, r"backend.kind: .*unknown backend 'gpt'"),
    ({"backend": {"kind": "openai"}, "seeds": [0, 1]}, r"seeds: several seeds need the simulator"),
])
def test_spec_file_errors_name_the_file_and_field(tmp_path, change, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**SMALL, **change}))
    with pytest.raises(ConfigError, match=rf"bad.yaml: invalid sweep: {message}"):
        load_sweep_spec(path)


def test_spec_file_syntax_and_question_selection_errors(tmp_path, world):
    path = tmp_path / "broken.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="broken.yaml: not valid YAML"):
        load_sweep_spec(path)
    with pytest.raises(ConfigError, match="cannot read sweep file"):
        load_sweep_spec(tmp_path / "missing.yaml")
    spec = SweepSpec.from_dict({**SMALL, "types": ["no-such-type"]})
    with pytest.raises(ConfigError, match="no questions selected"):
        select_questions(spec, world.evalset)


def test_shipped_sweep_files_validate(world):
    for path in sorted((REPO / "sweeps").glob("*.yaml")):
        spec = load_sweep_spec(path)
        resolved = ResolvedSweep.build(spec, load_dataset(spec.dataset).evalset)
        searched = spec.search is not None and spec.search.sampler != "grid"  # a search plans its trials as it runs
        assert (resolved.runs or searched) and resolved.qids, path
    quickstart = ResolvedSweep.build(load_sweep_spec(REPO / "sweeps/quickstart.yaml"), world.evalset)
    assert 10 <= len(quickstart.runs) <= 14


# --- runs, store and resume ----------------------------------------------------------------------


@pytest.mark.slow
def test_table_has_one_row_per_run_with_params_ci_costs_and_pareto(small_run):
    table = small_run.table
    assert len(table) == 3 and small_run.complete and small_run.computed == 27
    assert table["param_round_cap.max_rounds"].tolist() == [1, 2, None]
    assert table["param_truncation.strategy"].tolist() == [None, "rank_then_truncate", "append_then_truncate"]
    assert (table["n_questions"] == 9).all()
    for col in ("quality_answer_containment", "quality_evidence_recall"):
        assert ((table[f"{col}_lo"] <= table[col]) & (table[col] <= table[f"{col}_hi"])).all()
    assert {"cost_llm_calls", "cost_calls_route", "spent_llm_calls", "run_wall_latency_s", "is_pareto"} <= set(table.columns)
    assert table["is_pareto"].any()
    flipped = small_run.pareto("cost_tokens", "quality_abstention_accuracy")
    assert flipped["is_pareto"].any() and len(flipped) == 3
    assert list(small_run.over_seeds()["n_seeds"]) == [1, 1, 1]
    configs = small_run.configs()
    assert len(configs) == 3 and configs.loc[0, "round_cap.max_rounds"] == 1 and "crag.upper" in configs


@pytest.mark.slow
def test_each_candidate_runs_on_a_fresh_pipeline_equal_to_a_standalone_run(small_run, world):
    base = PipelineConfig()
    dataset = world
    questions = select_questions(SweepSpec.from_dict(SMALL), dataset.evalset)
    first, last = small_run.table["candidate_id"].iloc[0], small_run.table["candidate_id"].iloc[-1]
    assert (small_run.rows(first)["cost_rounds"] <= 1).all()  # the cap of candidate 0 ...
    assert base == PipelineConfig() and base.get("round_cap.max_rounds") == 2  # ... never touched the base
    # the last candidate (append_then_truncate, rounds back at the base cap) equals a run of its own config alone
    config = base.with_params({"truncation.strategy": "append_then_truncate"})
    with open_backend("sim") as backend:
        alone = evaluate_pipeline(Pipeline(config, CorpusResources(dataset.corpus), backend), questions)
    cols = [c for c in alone.frame().columns if c.startswith(("quality_", "cost_"))]
    stored = small_run.rows(last)
    pd.testing.assert_frame_equal(stored[cols].astype(float), alone.frame()[cols].astype(float))
    assert small_run.configs().iloc[-1].drop(["candidate_id", "seed"]).to_dict() == json.loads(json.dumps(config.flat()))


@pytest.mark.slow
def test_traces_results_and_ledger_read_back_from_the_store(small_run):
    cid = small_run.table["candidate_id"].iloc[1]
    traces = small_run.traces(cid)
    qid = small_run.qids[0]
    assert len(traces) == 9 and set(traces) == set(small_run.qids)
    assert traces[qid].qid == qid and traces[qid].steps[0].kind == "route"
    assert small_run.result(cid, qid).qid == qid
    ledger = small_run.calls_by_role(cid)
    assert ledger.set_index("role")["incurred"].sum() == small_run.rows(cid)["cost_llm_calls"].sum()
    with pytest.raises(KeyError, match="no candidate"):
        small_run.traces("nope")
    sizes = small_run.store.sizes()
    assert 0 < sizes["traces"] < 27 * 8_000  # zlib-compressed trace JSON


@pytest.mark.slow
def test_rerun_into_the_same_dir_computes_nothing(small_run, monkeypatch):
    calls = []
    from rag_lab.experiments.engine.worker import WorkerState

    original = WorkerState.run
    monkeypatch.setattr(WorkerState, "run", lambda self, unit: calls.append(unit) or original(self, unit))
    again = run_sweep(SMALL, small_run.run_dir, progress="quiet")
    assert calls == [] and again.computed == 0 and again.reused == 27
    assert_same_table(again.table, small_run.table)
    sessions = again.store.sessions()
    assert [s["computed"] for s in sessions[-2:]] == [27, 0]
    assert sessions[-1]["code"]["source_sha256"] and sessions[-1]["code"]["rag_lab_version"]


@pytest.mark.slow
def test_resume_computes_only_the_missing_pairs(small_run, tmp_path):
    run_dir = tmp_path / "partial"
    shutil.copytree(small_run.run_dir, run_dir)
    with sqlite3.connect(run_dir / RUN_FILE) as conn:
        conn.execute("DELETE FROM rows WHERE qid IN (?, ?)", tuple(small_run.qids[:2]))
    resumed = run_sweep(SMALL, run_dir, progress="quiet")
    assert resumed.computed == 6 and resumed.reused == 21
    assert_same_table(resumed.table, small_run.table)


@pytest.mark.slow
def test_a_different_sweep_in_the_same_dir_is_an_error_unless_overwritten(small_run, tmp_path):
    run_dir = tmp_path / "other"
    shutil.copytree(small_run.run_dir, run_dir)
    other = {**SMALL, "per_type": 1}
    with pytest.raises(ConfigError, match="holds another sweep"):
        run_sweep(other, run_dir, progress="quiet")
    replaced = run_sweep(other, run_dir, progress="quiet", overwrite=True)
    assert replaced.computed == 9 and RunStore.read(run_dir).count_rows() == 9


def test_reading_a_folder_that_is_not_a_run_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="not a sweep run directory"):
        load_sweep(tmp_path)


def test_reading_a_sqlite_file_that_holds_no_sweep_is_an_error_and_leaves_it_as_it_was(tmp_path):
    foreign = tmp_path / RUN_FILE
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    conn.close()
    before = foreign.read_bytes()
    with pytest.raises(ConfigError, match="not a sweep run directory"):
        RunStore.read(tmp_path)
    assert foreign.read_bytes() == before


# --- kill and resume -----------------------------------------------------------------------------

#: Large enough (6 runs × 40 questions) that a SIGKILL reliably lands in the middle of the sweep.
KILLED = {"name": "killed", "dataset": "world", "split": "test", "per_type": 5,
          "grid": {"round_cap.max_rounds": [1, 2, 3], "crag.upper": [0.4, 0.6]}}


@pytest.mark.slow
def test_sigkill_mid_sweep_then_resume_equals_an_uninterrupted_run(tmp_path):
    killed = kill_mid_sweep_then_resume(KILLED, tmp_path, rows_at_kill=20, wait_s=120)
    total, killed_at, run_dir = 6 * 40, killed.killed_at, killed.run_dir
    assert killed_at < total, "the sweep finished before the kill landed"
    assert killed.resumed["computed"] == total - killed_at

    store = RunStore.read(run_dir)
    stored_qids = store.sweep_description()["qids"]
    runs = [c["candidate_id"] for c in store.candidates()]
    assert store.done_pairs() == {(c, q) for c in runs for q in stored_qids} and store.count_rows() == total
    sessions = store.sessions()
    assert sessions[0]["finished_at"] is None and sessions[-1]["computed"] == total - killed_at
    resumed = load_sweep(run_dir)
    for cid in runs:  # every stored trace is whole
        assert len(resumed.traces(cid)) == 40 and all(t.steps for t in resumed.traces(cid).values())

    uninterrupted = run_sweep(KILLED, tmp_path / "uninterrupted", progress="quiet")
    assert_same_table(resumed.table, uninterrupted.table)


# --- parallel and distributed execution ----------------------------------------------------------


@pytest.mark.slow
def test_threads_and_processes_give_the_serial_table(small_run, tmp_path):
    threads = run_sweep(SMALL, tmp_path / "threads", executor="threads", workers=3, progress="quiet")
    assert_same_table(threads.table, small_run.table)
    processes = run_sweep(SMALL, tmp_path / "processes", executor="processes", workers=2, progress="quiet")
    assert processes.computed == 27
    assert_same_table(processes.table, small_run.table)


@pytest.mark.slow
def test_dask_local_cluster_gives_the_serial_table(small_run, tmp_path):
    import distributed
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        result = run_sweep(SMALL, tmp_path / "dask", executor="dask", dask_address=cluster.scheduler_address,
                           chunk_size=2, progress="quiet")
    assert result.computed == 27
    assert_same_table(result.table, small_run.table)


def test_executor_arguments_are_validated(tmp_path):
    with pytest.raises(ConfigError, match="unknown executor 'gpu'"):
        run_sweep(SMALL, tmp_path, executor="gpu")
    with pytest.raises(ConfigError, match="workers must be a positive integer"):
        run_sweep(SMALL, tmp_path, executor="processes", workers=0)
    with pytest.raises(ConfigError, match="needs executor='dask'"):
        run_sweep(SMALL, tmp_path, dask_address="tcp://127.0.0.1:8786")


# --- reuse across candidates ---------------------------------------------------------------------


@pytest.mark.slow
def test_finalize_only_candidates_reuse_shared_llm_work_through_the_cache(cold_llm_cache, tmp_path):
    spec = {"name": "finalize", "dataset": "world", "split": "test", "types": ["single", "bridge", "comparison"],
            "per_type": 3, "grid": {"truncation.strategy": ["rank_then_truncate", "append_then_truncate"],
                                    "crag.upper": [0.3, 0.7]}}
    result = run_sweep(spec, tmp_path / "run", progress="quiet")
    table = result.table.set_index("candidate_id")
    ledgers = {cid: result.calls_by_role(cid).set_index("role") for cid in table.index}
    first, *later = table.index
    assert ledgers[first].loc["route", "spent"] == ledgers[first].loc["route", "incurred"] == 9  # cold: all new
    for cid in later:
        ledger = ledgers[cid]
        # route, controller: shared stages, answered by the cache; incurred stays what the policy costs
        for role in ("route", "controller"):
            assert ledger.loc[role, "spent"] == 0
            assert ledger.loc[role, "incurred"] == ledgers[first].loc[role, "incurred"]
        assert table.loc[cid, "spent_llm_calls"] < table.loc[cid, "cost_llm_calls"]
    assert table["cost_calls_route"].nunique() == 1 and table["cost_calls_controller"].nunique() == 1


# --- progress and CLI ----------------------------------------------------------------------------


@pytest.mark.slow
def test_progress_shows_pairs_runs_and_cache_hits_unless_quiet(small_run, capfd):
    run_sweep(SMALL, small_run.run_dir, progress="quiet")
    assert capfd.readouterr().err == ""
    run_sweep(SMALL, small_run.run_dir, progress="auto")
    err = capfd.readouterr().err
    assert "sweep small" in err and "27/27" in err and "candidates 3/3" in err
    with pytest.raises(ConfigError, match="progress must be one of"):
        run_sweep(SMALL, small_run.run_dir, progress="loud")


@pytest.mark.slow
def test_cli_sweep_and_report(small_run, tmp_path, capsys):
    sweep_file = tmp_path / "small.yaml"
    sweep_file.write_text(yaml.safe_dump(SMALL))
    run_dir = tmp_path / "run"
    shutil.copytree(small_run.run_dir, run_dir)
    assert main(["sweep", str(sweep_file), "--out", str(run_dir), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "round_cap.max_rounds" in text and "containment" in text and f"run: {run_dir}" in text
    assert main(["sweep", str(sweep_file), "--out", str(run_dir), "--quiet", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["computed"] == 0 and out["reused"] == 27 and len(out["table"]) == 3
    assert main(["report", str(run_dir), "--out", str(tmp_path / "report.html")]) == 0
    assert "wrote" in capsys.readouterr().out and (tmp_path / "report.html").stat().st_size > 10_000

    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump({**SMALL, "per_type": 1}))
    assert main(["sweep", str(other), "--out", str(run_dir), "--quiet"]) == 2
    assert "holds another sweep" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**SMALL, "grid": {"crag.uper": [1]}}))
    assert main(["sweep", str(bad), "--out", str(tmp_path / "bad"), "--quiet"]) == 2
    assert "grid key 'crag.uper'" in capsys.readouterr().err

