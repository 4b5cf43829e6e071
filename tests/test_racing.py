"""Racing candidates over questions: drops only on a Holm-corrected paired test of dominance (or of a broken
constraint), stages of growing batches, incumbents, the reasons stored and shown, and a raced search on the
world that resumes after SIGKILL to the same rows and decisions."""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import numpy as np
import pytest
from killing import kill_mid_sweep_then_resume

from rag_lab.experiments import holm, load_sweep, run_sweep
from rag_lab.experiments.engine.search_space import Constraint, Objective, RaceSpec
from rag_lab.experiments.tuning.racing import look_alphas, race_order, race_rule, run_race, stage_drops
from rag_lab.stats.exact_tests import noninferiority_p
from rag_lab.stats.significance import difference_p

REPO = Path(__file__).resolve().parent.parent
OBJECTIVES = [Objective.parse("cost_llm_calls"), Objective.parse("quality_answer_containment_strict")]
N = 40


def _values(cost: list[float] | float, quality: list[float]) -> dict[str, np.ndarray]:
    cost = [cost] * len(quality) if not isinstance(cost, list) else cost
    return {"cost_llm_calls": np.array(cost, float), "quality_answer_containment_strict": np.array(quality, float)}


@pytest.fixture
def field():
    """Made-up per-question values (no simulator): ``leader`` cheap and right; ``worse`` dearer and often wrong;
    ``same_cost`` as cheap but more often wrong (weakly dominated); ``cheaper`` cheapest but wrong (a trade-off);
    ``close`` one question worse than the leader (not enough to show anything)."""
    rng = np.random.default_rng(5)
    leader_q = (rng.random(N) < 0.8).astype(float)
    worse_q = np.where(rng.random(N) < 0.7, 0.0, leader_q)
    close_q = leader_q.copy()
    close_q[np.flatnonzero(leader_q)[0]] = 0.0
    return {
        "leader": _values(2.0, list(leader_q)),
        "worse": _values(list(2.0 + rng.integers(1, 3, N)), list(worse_q)),
        "same_cost": _values(2.0, list(worse_q)),
        "cheaper": _values(1.0, [0.0] * N),
        "close": _values(2.0, list(close_q)),
    }


def test_stage_drops_only_what_a_corrected_paired_test_shows_dominated(field):
    ids = list(field)
    drops = {d.candidate_id: d for d in stage_drops(field, ids, ids, OBJECTIVES, [], 0.05, N)}
    # cheaper is a trade-off, close is not shown worse, and same_cost's tie on cost over 40 questions is no
    # evidence that the leader is not dearer on 2% of questions ((1 - 0.02)^40 = 0.45)
    assert set(drops) == {"worse"}
    worse = drops["worse"]
    assert worse.rival in ("leader", "close") and worse.n_questions == N and worse.status == "dropped"
    gains = {"cost_llm_calls": field["worse"]["cost_llm_calls"] - field[worse.rival]["cost_llm_calls"],
             "quality_answer_containment_strict": (field[worse.rival]["quality_answer_containment_strict"]
                                                   - field["worse"]["quality_answer_containment_strict"])}
    tests = worse.detail["tests"]   # one objective shown better, every objective shown not worse
    assert [t["test"] for t in tests] == ["better", "not_worse", "not_worse"]
    assert tests[0]["metric"] == worse.detail["objective"]
    assert tests[0]["p_any"] == pytest.approx(min(1.0, 2 * tests[0]["p"]))     # better on one of two objectives
    for t in tests:
        g = gains[t["metric"]]
        want = (difference_p(g, "greater", lattice=True)[0] if t["test"] == "better"
                else noninferiority_p(int((g > 0).sum()), int((g < 0).sum()), N, 0.02))
        assert t["p"] == pytest.approx(want) and t["n_worse"] == 0
    assert worse.detail["p_rival"] == max([tests[0]["p_any"]] + [t["p"] for t in tests[1:]])
    assert worse.detail["rivals"] == len(ids) - 1        # Bonferroni over the rivals of the candidate
    assert worse.detail["p"] == pytest.approx(min(1.0, (len(ids) - 1) * worse.detail["p_rival"]))
    assert worse.detail["family"] == len(ids)            # one hypothesis per candidate: no rival dominates it
    assert worse.detail["p_holm"] <= 0.05 and worse.detail["p_holm"] >= worse.detail["p"]
    assert (f"dominated by {worse.rival}" in worse.reason and f"after {N} questions" in worse.reason
            and "Holm" in worse.reason and "not worse" in worse.reason)
    strict = {d.candidate_id for d in stage_drops(field, ids, ids, OBJECTIVES, [], 0.05, N, dominance="strict")}
    assert strict == {"worse"}


def test_a_tie_shows_non_inferiority_only_with_enough_questions():
    """Same calls on every question, 0.3 worse answers: a tie is evidence that the rival is not dearer, but only
    as much as (1 - margin)^n: 40 ties show a margin of 0.10 (p = 0.015, Holm over the two candidates' hypotheses
    makes it 0.03), 25 do not (p = 0.072)."""
    rng = np.random.default_rng(3)
    for n, dropped in ((40, True), (25, False)):
        lead_q = (rng.random(n) < 0.8).astype(float)
        field = {"leader": _values(2.0, list(lead_q)), "tied": _values(2.0, list(lead_q * (rng.random(n) < 0.6)))}
        drops = stage_drops(field, list(field), list(field), OBJECTIVES, [], 0.05, n, margin=0.10)
        assert bool(drops) == dropped, (n, drops)
        if dropped:
            cost = {t["metric"]: t for t in drops[0].detail["tests"]}["cost_llm_calls"]
            assert cost["p"] == pytest.approx(0.9 ** n, rel=1e-6) and drops[0].detail["family"] == 2


def test_never_worse_so_far_is_an_observation_not_a_test():
    """Better on cost, and on quality better on two questions and worse on none: the old rule counted "never
    worse" as p = 0 and dropped it; 20 questions do not *show* the leader not worse on quality."""
    leader_q = np.ones(20)
    other_q = leader_q.copy()
    other_q[[3, 7]] = 0.0
    field = {"leader": _values(2.0, list(leader_q)), "other": _values(3.0, list(other_q))}
    assert stage_drops(field, ["other"], ["leader", "other"], OBJECTIVES, [], 0.05, 20) == []
    big = {k: {m: np.tile(v, 10) for m, v in d.items()} for k, d in field.items()}  # the same pattern, 200 questions
    drops = stage_drops(big, ["other"], ["leader", "other"], OBJECTIVES, [], 0.05, 200)
    assert [d.candidate_id for d in drops] == ["other"]


def test_holm_correction_and_the_looks_decide():
    """Two candidates each worse than the leader on 6 questions and never better (one-sided exact p = 1/64, one
    objective): either alone is dropped (Holm over the two candidates' hypotheses: 1/32); together each has two
    rivals (Bonferroni: 1/32) in a family of three (Holm: 3/32) and neither is; and at a look whose share of α
    is 0.025, even one alone stays (1/32 > 0.025)."""
    one = OBJECTIVES[1:]
    leader = np.ones(20)
    edges = {}
    for name, wrong in (("edge1", range(0, 6)), ("edge2", range(6, 12))):
        q = leader.copy()
        q[list(wrong)] = 0.0
        edges[name] = _values(2.0, list(q))
    field = {"leader": _values(2.0, list(leader)), **edges}
    pair = {k: field[k] for k in ("leader", "edge1")}
    alone = stage_drops(pair, list(pair), list(pair), one, [], 0.05, 20)
    assert [d.candidate_id for d in alone] == ["edge1"] and alone[0].detail["p"] == pytest.approx(1 / 64)
    assert alone[0].detail["p_holm"] == pytest.approx(1 / 32) and alone[0].detail["family"] == 2
    assert stage_drops(field, list(field), list(field), one, [], 0.05, 20) == []
    assert stage_drops(pair, list(pair), list(pair), one, [], 0.025, 20) == []
    # a rival dropped at an earlier look still counts: with three that entered, edge1's p is 2/64, Holm's 4/64
    assert stage_drops(pair, list(pair), list(pair), one, [], 0.05, 20, rival_count=2) == []
    assert holm([1 / 64, 1 / 64, 1]) == pytest.approx([3 / 64, 3 / 64, 1])


def test_a_rival_dropped_at_an_earlier_look_still_counts():
    """Which rivals are left at a look depends on the questions, so Bonferroni counts every candidate that
    entered: ``clear`` (dearer, always wrong) goes after 40 questions; ``slow`` (a call dearer on a quarter of
    the questions, wrong on a twelfth) after 80, its p counting three rivals though two are left."""
    q = np.arange(120)
    field = {"leader": _values(2.0, [1.0] * 120), "clear": _values(4.0, [0.0] * 120),
             "slow": _values(list(2.0 + (q % 4 == 0)), list((q % 12 != 1).astype(float))),
             "tradeoff": _values(1.0, [0.0] * 120)}
    order = [f"q{i}" for i in range(120)]

    def metric_values(cid, qids, metric):
        return field[cid][metric][[order.index(x) for x in qids]]

    out = run_race(["clear", "slow", "tradeoff"], ["leader"], order, RaceSpec(batches=[40, 80]), OBJECTIVES, [],
                   lambda ids, qids: None, metric_values)
    assert (out["clear"].n_questions, out["slow"].n_questions, out["tradeoff"].status) == (40, 80, "survived")
    slow = out["slow"].detail
    assert slow["rivals"] == 3 and slow["p"] == pytest.approx(3 * slow["p_rival"])
    assert slow["family"] == 2 and slow["p_holm"] == pytest.approx(2 * slow["p"])


def test_a_broken_constraint_drops_with_its_reason(field):
    k = Constraint.parse("cost_llm_calls <= 2.5")
    drops = {d.candidate_id: d for d in stage_drops(field, ["worse", "leader"], ["worse", "leader"], OBJECTIVES, [k],
                                                   0.05, N)}
    assert drops["worse"].rival in ("leader", None) and "leader" not in drops
    only_constraint = stage_drops({"worse": field["worse"]}, ["worse"], ["worse"], OBJECTIVES, [k], 0.05, N)
    assert len(only_constraint) == 1 and only_constraint[0].rival is None
    assert "breaks cost_llm_calls <= 2.5" in only_constraint[0].reason


def test_run_race_stages_incumbents_and_question_runs(field):
    order = [f"q{i}" for i in range(N)]
    asked: list[tuple[tuple[str, ...], int]] = []

    def evaluate(ids, qids):
        asked.append((tuple(ids), len(qids)))

    def metric_values(cid, qids, metric):
        return field[cid][metric][[order.index(q) for q in qids]]

    spec = RaceSpec(batches=[10, 20])
    out = run_race(["worse", "same_cost", "cheaper"], ["leader"], order, spec, OBJECTIVES, [], evaluate, metric_values)
    assert asked[0] == (("worse", "same_cost", "cheaper"), 10)  # every challenger runs the first batch
    dropped = {c: o.n_questions for c, o in out.items() if o.status == "dropped"}
    assert out["cheaper"].status == "survived" and out["cheaper"].n_questions == N
    assert dropped and all(n in (10, 20) for n in dropped.values())
    for ids, n in asked[1:]:  # later stages run only the candidates still in the race
        assert not set(ids) & {c for c, at in dropped.items() if at < n}
    assert [n for _, n in asked] == [10, 20, N][:len(asked)]
    assert race_order(order, 3) == race_order(order, 3) and sorted(race_order(order, 3)) == sorted(order)
    assert race_order(order, 3) != race_order(order, 4)


# --- on the world ------------------------------------------------------------------------------------

RACED = {"name": "raced", "dataset": "world", "split": "test", "per_type": 3,
         "backend": {"kind": "sim"},
         "grid": {"round_cap.max_rounds": [1, 2, 3], "disclosure.disclosed": [False, True],
                  "truncation.strategy": ["rank_then_truncate", "append_then_truncate"]},
         "search": {"sampler": "grid", "race": {"batches": [8, 16]}}}


def _check_race(result) -> None:
    """Each dropped candidate ran exactly the questions before its drop, and the stored test is what the
    paired test gives on those rows; survivors ran every question; the front holds survivors only."""
    table = result.table.set_index("candidate_id")
    order = race_order(result.qids, result.search["seed"])
    race = result.store.race()
    assert set(race) == set(table.index)
    progress = result.progress()   # complete: every planned row stored, a dropped candidate's up to its drop
    assert result.complete and progress.finished == progress.planned == sum(r["n_questions"] for r in race.values())
    for cid, r in race.items():
        stored = set(result.store.qids(cid))
        assert stored == set(order[:r["n_questions"]])
        if r["status"] != "dropped":
            assert r["n_questions"] == len(order)
            continue
        assert table.loc[cid, "status"] == "dropped" and not table.loc[cid, "is_pareto"]
        assert table.loc[cid, "dropped_after"] == r["n_questions"] and r["reason"] == table.loc[cid, "drop_reason"]
        qids = order[:r["n_questions"]]
        detail = r["detail"]
        for t in detail["tests"]:
            mine = result.rows(cid).set_index("qid").loc[qids, t["metric"]].astype(float).to_numpy()
            if r["rival"] is None:
                continue
            theirs = result.rows(r["rival"]).set_index("qid").loc[qids, t["metric"]].astype(float).to_numpy()
            keep = ~(np.isnan(mine) | np.isnan(theirs))
            minimize = t["metric"].startswith("cost_")
            gain = ((mine - theirs) if minimize else (theirs - mine))[keep]
            if t["test"] == "better":
                assert difference_p(gain, "greater", lattice=True)[0] == pytest.approx(t["p"])
            else:
                assert t["test"] == "not_worse" and t["n_worse"] == int((gain < 0).sum())
                assert noninferiority_p(int((gain > 0).sum()), int((gain < 0).sum()), int(gain.size),
                                        detail["margin"]) == pytest.approx(t["p"])
        if r["rival"] is None:
            assert detail["p"] == pytest.approx(detail["tests"][0]["p"])
        else:
            parts = [t.get("p_any", t["p"]) for t in detail["tests"]]
            assert detail["p_rival"] == pytest.approx(max(parts))
            assert detail["p"] == pytest.approx(min(1.0, detail["rivals"] * detail["p_rival"]))
        stages = RaceSpec(**result.search["race"]).stages(len(order))
        assert detail["p_holm"] <= detail["alpha_look"]
        assert detail["alpha_look"] == pytest.approx(look_alphas(stages, 0.05)[stages.index(r["n_questions"])])
    assert table.loc[table["is_pareto"], "status"].eq("survived").all()


@pytest.mark.slow
def test_a_raced_grid_resumes_after_sigkill_to_the_same_rows_and_decisions(tmp_path):
    killed = kill_mid_sweep_then_resume(RACED, tmp_path, rows_at_kill=30)
    run_dir, killed_at, out = killed.run_dir, killed.killed_at, killed.resumed
    uninterrupted = run_sweep(RACED, tmp_path / "uninterrupted", progress="quiet")
    resumed = load_sweep(run_dir)
    strip = lambda rows: {q: {k: v for k, v in r.items() if not k.startswith(("spent_", "run_"))}  # noqa: E731
                          for q, r in rows.items()}
    for cid in uninterrupted.table["candidate_id"]:
        assert strip(resumed.store.rows(cid)) == strip(uninterrupted.store.rows(cid))
    assert resumed.store.race() == uninterrupted.store.race()
    assert resumed.question_runs() == uninterrupted.question_runs() == out["computed"] + killed_at
    grid_runs = len(uninterrupted.table) * len(uninterrupted.qids)
    dropped = (uninterrupted.table["status"] == "dropped").sum()
    assert (uninterrupted.question_runs() < grid_runs) == bool(dropped)
    _check_race(uninterrupted)


@pytest.fixture(scope="module")
def raced_search(tmp_path_factory):
    sweep = {**RACED, "name": "raced-nsga2", "grid": {**RACED["grid"], "round_cap.max_rounds": {"low": 1, "high": 4}},
             "search": {"sampler": "nsga2", "trials": 10, "population": 4, "race": {"batches": [8, 16]},
                        "constraints": ["cost_llm_calls <= 50"]}}
    return run_sweep(sweep, tmp_path_factory.mktemp("raced-nsga2"), progress="quiet")


def test_a_raced_search_stores_trials_decisions_and_a_front_of_survivors(raced_search):
    result = raced_search
    trials = result.trials()
    assert len(trials) == 10 and result.complete
    table = result.table.set_index("candidate_id")
    for _, t in trials.iterrows():  # a trial's values are means over the questions its candidate ran
        rows = result.rows(t["candidate_id"])
        assert t["n_questions"] == table.loc[t["candidate_id"], "n_questions"] == len(rows)
        assert t["cost_llm_calls"] == pytest.approx(rows["cost_llm_calls"].mean())
    _check_race(result)
    assert result.question_runs() <= len(table) * len(result.qids)


def test_report_states_who_was_dropped_after_how_many_questions_and_why(raced_search, tmp_path):
    from rag_lab.report import write_report

    html_text = write_report(raced_search, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Search and race" in html_text
    table = raced_search.table
    assert f"{raced_search.question_runs()} question runs" in html_text
    for _, row in table[table["status"] == "dropped"].iterrows():
        assert row["candidate_id"] in html_text and f"after {int(row['dropped_after'])} questions" in html_text
    rule = race_rule(RaceSpec(**raced_search.search["race"]), len(raced_search.qids))
    assert html.escape(rule) in html_text and "race.margin = 0.02" in rule
    assert math.isfinite(float(table["n_questions"].sum()))


def test_the_sweep_command_prints_the_race_rule_with_its_numbers(raced_search):
    """What ``rag-lab sweep`` prints after a raced search: the looks, the margin and what it lets through, α and
    each look's share (here 8/24 and 16/24 of 0.05), then each drop with its reason."""
    from rag_lab.cli.sweep_commands import _search_text

    text = _search_text(raced_search)
    assert f"race: looks after 8, 16 of {len(raced_search.qids)} questions" in text
    assert "race.margin = 0.02: a rival that loses on at most 2% more of the questions" in text
    assert "α = 0.05 shared over the looks in proportion to their questions (0.017, 0.033)" in text
    assert look_alphas([8, 16, 24], 0.05) == pytest.approx([0.05 / 3, 0.1 / 3])


def test_verify_on_a_searched_front_works_as_on_a_grid(raced_search, capsys):
    from rag_lab.cli import main
    from rag_lab.experiments.calibration.verify import select_candidates

    chosen = select_candidates(raced_search, top=3)
    table = raced_search.table.set_index("config_id")
    assert len(chosen) and table.loc[list(chosen["config_id"]), "is_eligible"].all()  # no dropped or infeasible one
    front = set(table.index[table["is_pareto"]])
    assert set(chosen.loc[chosen["reason"] == "pareto front", "config_id"]) == front or len(front) > 3
    assert main(["verify", str(raced_search.run_dir), "--backend", "sim", "--profile", "ideal", "--top", "3",
                 "--questions", "6", "--quiet", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["complete"] and len(out["candidates"]) == len(chosen)
