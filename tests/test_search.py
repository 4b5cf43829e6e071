"""Searching the policy space (docs/design.md §6): the ``search:`` section, Optuna's samplers over dotted
ranges, choices and conditional branches, trials as candidates of the same run store, constraints, and
resume after SIGKILL giving the same trials and rows as an uninterrupted search."""

from __future__ import annotations

from pathlib import Path

import pytest
from killing import kill_mid_sweep_then_resume

from rag_lab.errors import ConfigError
from rag_lab.experiments import SweepSpec, load_sweep, run_sweep
from rag_lab.experiments.engine.resolved_sweep import parameter_grid
from rag_lab.experiments.engine.search_space import Constraint, Objective, SearchSpace
from rag_lab.experiments.engine.store import RunStore

REPO = Path(__file__).resolve().parent.parent
WORLD = {"dataset": "world", "split": "test", "per_type": 1, "backend": {"kind": "sim"}}
SPACE = {"round_cap.max_rounds": {"low": 1, "high": 4}, "disclosure.disclosed": [False, True],
         "crag.upper": {"low": 0.3, "high": 0.7, "step": 0.1}}


def search_sweep(name: str, **search) -> dict:
    return {"name": name, **WORLD, "grid": SPACE, "search": {"sampler": "nsga2", "trials": 8, "population": 4, **search}}


# --- the spec -------------------------------------------------------------------------------------


def test_objectives_and_constraints_parse_with_directions():
    assert Objective.parse("cost_llm_calls").minimize and not Objective.parse("quality_f1").minimize
    assert Objective.parse("quality_refused").minimize and not Objective.parse("max:cost_tokens").minimize
    c = Constraint.parse("cost_llm_calls <= 3")
    assert (c.metric, c.op, c.bound) == ("cost_llm_calls", "<=", 3.0) and c.holds(3.0) and not c.holds(3.01)
    assert Constraint.parse("quality_f1>=0.5").holds(0.6) and not Constraint.parse("quality_f1 >= 0.5").holds(0.4)
    for bad in ("cost_llm_calls < 3", "llm_calls <= 3", "cost_llm_calls <= many"):
        with pytest.raises(ValueError, match="constraint"):
            Constraint.parse(bad)


def test_search_section_errors_name_the_field():
    with pytest.raises(ConfigError, match="needs trials"):
        SweepSpec.from_dict({**search_sweep("x"), "search": {"sampler": "tpe"}})
    with pytest.raises(ConfigError, match="constraint"):
        SweepSpec.from_dict(search_sweep("x", constraints=["cost_llm_calls < 3"]))
    with pytest.raises(ConfigError, match="one seed"):
        SweepSpec.from_dict({**search_sweep("x"), "seeds": [0, 1]})
    with pytest.raises(ConfigError, match="low must be below high"):
        SweepSpec.from_dict({**search_sweep("x"), "grid": {"round_cap.max_rounds": {"low": 4, "high": 1}}})
    with pytest.raises(ConfigError, match="needs a step"):
        SweepSpec.from_dict({**search_sweep("x", sampler="grid"), "grid": {"crag.upper": {"low": 0.1, "high": 0.5}}})
    with pytest.raises(ConfigError, match="increasing"):
        SweepSpec.from_dict(search_sweep("x", race={"batches": [20, 10]}))
    with pytest.raises(ConfigError, match="list of values"):  # a range in a plain grid sweep stays an error
        SweepSpec.from_dict({"name": "x", **WORLD, "grid": SPACE})
    with pytest.raises(ConfigError, match="search key 'round_cap.nope'"):
        run_sweep({**search_sweep("x"), "grid": {"round_cap.nope": [1, 2]}}, "/nonexistent/never-created")


def test_space_suggests_conditional_params_and_enumerates_as_a_grid():
    import optuna

    space = SearchSpace([{"hyde.enabled": [False]}, {"hyde.enabled": [True], "hyde.n_docs": {"low": 1, "high": 4}}])
    assert [dict(p) for p in space.grid()] == [{"hyde.enabled": False}] + [
        {"hyde.enabled": True, "hyde.n_docs": n} for n in (1, 2, 3, 4)]
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    seen = [space.suggest(study.ask()) for _ in range(30)]
    assert all(("hyde.n_docs" in p) == p["hyde.enabled"] for p in seen)  # n_docs only where HyDE is on
    assert {p["hyde.enabled"] for p in seen} == {False, True}
    assert all(1 <= p["hyde.n_docs"] <= 4 and isinstance(p["hyde.n_docs"], int) for p in seen if "hyde.n_docs" in p)
    floats = SearchSpace({"crag.upper": {"low": 0.3, "high": 0.7, "step": 0.1}}).grid()
    assert [p["crag.upper"] for p in floats] == [0.3, 0.4, 0.5, 0.6, 0.7]


# --- running --------------------------------------------------------------------------------------


def _stored(run_dir: Path) -> tuple[list, dict]:
    """The trials (number, candidate, params, state, objectives) and every stored metrics row by pair (without
    ``spent_*`` and ``run_*``: cache misses and wall clock depend on the cache and the machine)."""
    store = RunStore.read(run_dir)
    trials = [(t["number"], t["candidate_id"], t["params"], t["state"], t["objectives"], t["n_questions"])
              for t in store.trials()]
    rows = {(c["candidate_id"], q): {k: v for k, v in r.items() if not k.startswith(("spent_", "run_"))}
            for c in store.candidates() for q, r in store.rows(c["candidate_id"]).items()}
    return trials, rows


@pytest.mark.slow
def test_search_resumes_after_sigkill_with_the_same_trials_and_rows(tmp_path):
    sweep = search_sweep("killed-search", trials=10)
    sweep["per_type"] = 2  # 16 questions x 10 trials: long enough to land a kill in the middle

    def fewer_trials_than_planned(run_dir: Path) -> None:
        assert len(RunStore.read(run_dir).trials()) < 10, "the search finished before the kill landed"

    killed = kill_mid_sweep_then_resume(sweep, tmp_path, rows_at_kill=40, at_kill=fewer_trials_than_planned)
    run_dir, killed_at, out = killed.run_dir, killed.killed_at, killed.resumed

    uninterrupted = run_sweep(sweep, tmp_path / "uninterrupted", progress="quiet")
    trials, rows = _stored(run_dir)
    trials_u, rows_u = _stored(uninterrupted.run_dir)
    assert len(trials) == 10 and trials == trials_u
    assert rows == rows_u  # the same (candidate, question) pairs with the same metrics rows
    assert out["computed"] + killed_at == len(rows)  # nothing ran twice
    resumed = load_sweep(run_dir)
    assert list(resumed.table["candidate_id"]) == list(uninterrupted.table["candidate_id"])
    assert list(resumed.table["is_pareto"]) == list(uninterrupted.table["is_pareto"])


@pytest.fixture(scope="module")
def unconstrained(tmp_path_factory):
    return run_sweep({**search_sweep("grid-all", sampler="grid"), "search": {"sampler": "grid"}},
                     tmp_path_factory.mktemp("grid-all"), progress="quiet")


def test_grid_sampler_runs_every_point_as_a_candidate(unconstrained):
    table = unconstrained.table
    assert len(table) == len(parameter_grid(SweepSpec.from_dict(search_sweep("g", sampler="grid")))) == 4 * 2 * 5
    assert unconstrained.complete and (table["status"] == "complete").all() and table["is_eligible"].all()
    assert unconstrained.question_runs() == len(table) * len(unconstrained.qids)


def test_constraints_are_honoured_on_the_front(tmp_path, unconstrained):
    costs = sorted(set(unconstrained.table["cost_llm_calls"]))
    assert len(costs) >= 2
    bound = costs[(len(costs) - 1) // 2]  # a bound some points keep and some break (from the data, not a guess)
    text = f"cost_llm_calls <= {bound!r}"
    result = run_sweep(search_sweep("constrained", trials=12, constraints=[text]), tmp_path / "c", progress="quiet")
    table = result.table
    assert ((table["cost_llm_calls"] <= bound) == table["is_feasible"]).all()
    assert table["is_pareto"].any() and table.loc[table["is_pareto"], "is_feasible"].all()
    assert not table.loc[~table["is_feasible"], "is_pareto"].any()
    # the grid's own front, with the same constraint applied, is reached by no infeasible point
    gridded = unconstrained.table.assign(is_eligible=unconstrained.table["cost_llm_calls"] <= bound)
    from rag_lab.stats.summary import add_pareto
    front = add_pareto(gridded, "cost_llm_calls", "quality_answer_containment_strict")
    assert (front.loc[front["is_pareto"], "cost_llm_calls"] <= bound).all()
    trials = result.trials()
    assert len(trials) == 12 and (trials["state"] == "complete").all()


def test_trials_repeating_a_config_reuse_its_rows(tmp_path):
    # a space of 2 points and 6 trials: the sampler must repeat itself, and repeats cost no question runs
    sweep = {**search_sweep("tiny", trials=6, population=2), "grid": {"disclosure.disclosed": [False, True]}}
    result = run_sweep(sweep, tmp_path / "tiny", progress="quiet")
    assert len(result.trials()) == 6 and len(result.table) <= 2
    assert result.question_runs() == len(result.table) * len(result.qids) == result.computed


def test_a_trial_outside_a_policy_bound_is_recorded_as_failed_and_the_search_goes_on(tmp_path):
    # crag.upper is bounded to [-1, 1]: a range reaching 1.4 makes some trials invalid configs
    sweep = {**search_sweep("bounds", trials=8, sampler="tpe"), "grid": {"crag.upper": {"low": 0.2, "high": 1.4}}}
    result = run_sweep(sweep, tmp_path / "bounds", progress="quiet")
    trials = result.trials()
    failed = trials[trials["state"].str.startswith("failed")]
    assert len(trials) == 8 and len(failed) and (failed["param_crag.upper"] > 1.0).all()
    assert all("crag.upper" in s for s in failed["state"])
    ok = trials[trials["state"] == "complete"]
    assert (ok["param_crag.upper"] <= 1.0).all() and set(ok["candidate_id"]) == set(result.table["candidate_id"])
    assert result.complete
