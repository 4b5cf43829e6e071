"""``rag-lab calibrate``: a simulator profile fitted to a run's traces. The simulator itself, with known,
distinctive knob rates, stands in for the real model: the estimates must recover the configured rates
(each within its interval), count the format failures and the answer role's premature stops exactly as
the simulator recorded them, keep what the traces cannot identify at the base profile's value, and write
a profile file the simulator loads (``--profile file.yaml``, ``backend.profile`` in a sweep). Bad profile
files are clear errors."""

from __future__ import annotations

import json
import math

import pytest
import yaml

from rag_lab.cli import main
from rag_lab.errors import ConfigError
from rag_lab.experiments import run_sweep
from rag_lab.experiments.calibration.calibrate import (
    CalibrationSource,
    calibrate,
    format_failure,
    read_run,
    wilson_interval,
)
from rag_lab.llm.sim.profile import KNOBS, PROFILES, SimulatorProfile, get_profile, load_profile_file
from rag_lab.llm.simulator import SimulatedBackend
from rag_lab.pipeline.trace import knob_rates

#: Distinctive rates, none equal to a named profile's.
RATES = dict(invalid_json=0.1, hallucinated_action=0.15, wrong_types=0.1, synonym_spinning=0.5, premature_stop=0.3,
             bridge_drop=0.6, comparison_underrate=0.4, budget_anchoring=0.4, budget_thrift=0.5)
TYPES = ["comparison", "bridge", "single", "unanswerable"]


@pytest.fixture(scope="module")
def sim_runs(world):
    """200 world questions (50 of each of four types) run twice by the simulator with :data:`RATES`: budget
    undisclosed on seed 0, disclosed on seed 1 (independent draws), round cap 2, no zero-yield stop (so
    the controller meets its budget spent and unspent). Returns (runs, types, the seed-0 backend)."""
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

    questions = world.evalset.select(types=TYPES, per_type=50)
    resources = CorpusResources(world.corpus)
    runs, backends = [], []
    for seed, disclosed in ((0, False), (1, True)):
        backend = SimulatedBackend(SimulatorProfile(name="distinct", **RATES), seed=seed)
        backends.append(backend)
        config = PipelineConfig().with_params({"disclosure.disclosed": disclosed, "round_cap.max_rounds": 2,
                                               "zero_yield.enabled": False})
        pipeline = Pipeline(config, resources, backend)
        runs += [(f"seed{seed}", pipeline.run(q)[1]) for q in questions]
    return runs, {q.qid: q.type for q in questions}, backends[0]


@pytest.fixture(scope="module")
def calibration(sim_runs):
    runs, types, backend = sim_runs
    return calibrate(CalibrationSource(runs, types, "simulated runs"), base="typical",
                     name="fitted", similarity=backend.similarity)


@pytest.mark.slow
def test_calibration_recovers_the_configured_rates_within_their_intervals(calibration):
    for knob, rate in RATES.items():
        c = calibration.knobs[knob]
        assert c.status == "estimated", (knob, c.reason)
        e = c.estimate
        assert e.lo <= rate <= e.hi, f"{knob}: configured {rate} outside [{e.lo:.3f}, {e.hi:.3f}] ({e.fired}/{e.opportunities})"
        # enough opportunities to say something; budget_thrift's rate is solved from three (spinning, anchoring,
        # the re-search rate), so its interval is the widest: 0.72 on these 200 questions with the one reader
        assert e.opportunities >= 7 and e.hi - e.lo < (0.75 if knob == "budget_thrift" else 0.7), (knob, e)
        assert calibration.profile.knobs()[knob] == pytest.approx(e.rate, abs=1e-4)
    assert calibration.unidentified == []
    assert calibration.profile.name == "fitted"


@pytest.mark.slow
def test_format_failures_and_answer_premature_stops_are_counted_as_the_simulator_recorded_them(sim_runs, calibration):
    """Where the estimator's opportunities are the simulator's own (every route/controller output for the
    format knobs, the answer role's partial evidence), its counts equal the simulator's record exactly."""
    runs, _, _ = sim_runs
    recorded: dict[tuple[str, str], list[int]] = {}
    for key in ("seed0", "seed1"):  # the two runs draw independently; every call is distinct
        for row in knob_rates(t for k, t in runs if k == key):
            tally = recorded.setdefault((row["role"], row["knob"]), [0, 0])
            tally[0] += row["fired"]
            tally[1] += row["opportunities"]
    estimated = {(e.role, e.knob): [e.fired, e.opportunities] for e in calibration.estimates}
    pairs = [(role, knob) for role in ("route", "controller")
             for knob in ("invalid_json", "hallucinated_action", "wrong_types")] + [("answer", "premature_stop")]
    for pair in pairs:
        assert estimated[pair] == recorded[pair], pair
        assert recorded[pair][0] > 0, pair  # the knob did fire: the equality is not 0 == 0
    # a knob at 0 in this profile (route_underrate) and what no knob stands for (echo): the simulator never does them
    for pair in (("route", "route_underrate"), ("answer", "echo")):
        fired, n = estimated[pair]
        assert fired == 0 and n > 10, pair
    assert not any("no knob" in note for note in calibration.notes)


def test_format_failure_reads_raw_outputs_like_the_simulator_breaks_them():
    good = {"action": "answer", "queries": [], "reason": "ok"}
    assert format_failure("controller", json.dumps(good))[0] is None
    assert format_failure("controller", "Sure, here it is:\n```json\n" + json.dumps(good) + "\n```")[0] is None
    assert format_failure("controller", "Sure! Here is my decision.\naction: answer")[0] == "invalid_json"
    assert format_failure("controller", '{"action": "answer", "queries": [')[0] == "invalid_json"
    assert format_failure("controller", "{'action': 'answer'}")[0] == "invalid_json"
    assert format_failure("controller", '{"action": "search_web", "queries": ["x"]}')[0] == "hallucinated_action"
    assert format_failure("controller", '{"action": ["answer"], "queries": []}')[0] == "wrong_types"
    assert format_failure("controller", '{"action": "answer", "queries": "a; b"}')[0] == "wrong_types"
    assert format_failure("controller", '{"action": "retrieve_again", "queries": []}')[0] == "wrong_types"
    assert format_failure("route", '{"route": "MEDIUM"}')[0] == "hallucinated_action"
    assert format_failure("route", '{"route": ["COMPLEX"]}')[0] == "wrong_types"
    assert format_failure("judge", '{"verdict": "maybe", "score": 0.5}')[0] == "wrong_types"  # no label knob there
    assert format_failure("route", '{"route": "SIMPLE"}')[1].route == "SIMPLE"


def test_wilson_interval():
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(1 - hi) and lo == pytest.approx(0.2366, abs=1e-4)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


@pytest.mark.slow
def test_what_the_traces_cannot_identify_keeps_the_base_value_and_is_listed(sim_runs, tmp_path):
    runs, types, backend = sim_runs
    undisclosed = [(k, t) for k, t in runs if k == "seed0"]  # no prompt states a budget
    result = calibrate(CalibrationSource(undisclosed, types, "undisclosed run"), base="sloppy",
                       similarity=backend.similarity)
    assert set(result.unidentified) == {"budget_anchoring", "budget_thrift"}
    for knob in ("budget_anchoring", "budget_thrift"):
        assert result.profile.knobs()[knob] == PROFILES["sloppy"].knobs()[knob]
        assert "stated budget" in result.knobs[knob].reason
    assert result.knobs["synonym_spinning"].status == "estimated"
    text = result.table_text()
    assert "unidentified (kept at the base profile's value): budget_anchoring, budget_thrift" in text
    path = result.write(tmp_path / "p.yaml")
    raw = path.read_text()
    assert "# Unidentified (kept at the base profile's value): budget_anchoring, budget_thrift" in raw
    assert yaml.safe_load(raw)["calibration"]["unidentified"] == ["budget_anchoring", "budget_thrift"]
    # too few opportunities is unidentified too
    strict = calibrate(CalibrationSource(undisclosed, types), base="typical", min_opportunities=10_000,
                       similarity=backend.similarity)
    assert set(strict.unidentified) == set(KNOBS) and strict.profile.knobs() == PROFILES["typical"].knobs()


@pytest.mark.slow
def test_the_profile_file_round_trips_and_the_simulator_loads_it(calibration, tmp_path):
    path = calibration.write(tmp_path / "fitted.yaml")
    assert get_profile(str(path)) == calibration.profile == load_profile_file(path)
    assert get_profile(str(path), seed=3).seed == 3
    data = yaml.safe_load(path.read_text())
    assert data["calibration"]["knobs"]["bridge_drop"]["opportunities"] == calibration.knobs["bridge_drop"].estimate.opportunities


@pytest.mark.parametrize(("text", "message"), [
    ("invalid_json: 1.5\n", r"bad\.yaml: invalid simulator profile: invalid_json: Input should be less than or equal to 1"),
    ("invalid_json: 0.1\nspinning: 0.2\n", r"bad\.yaml: invalid simulator profile: spinning: Extra inputs"),
    ("- 0.1\n- 0.2\n", r"bad\.yaml: a simulator profile file must hold a mapping, got list"),
    ("invalid_json: [0.1\n", r"bad\.yaml: not valid YAML"),
    ("", r"bad\.yaml: the simulator profile file sets no field"),
    ("reader: world\n", r"bad\.yaml: invalid simulator profile: reader: Extra inputs"),  # no field picks a reader
])
def test_bad_profile_files_are_clear_errors(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        get_profile(str(path))


def test_missing_profile_file_and_unknown_names_are_clear_errors(tmp_path, capsys):
    with pytest.raises(ConfigError, match=r"missing\.yaml: cannot read simulator profile file"):
        get_profile(str(tmp_path / "missing.yaml"))
    with pytest.raises(ConfigError, match="unknown simulator profile 'typcal'.*or give a profile file"):
        get_profile("typcal")
    bad = tmp_path / "bad.yaml"
    bad.write_text("wrong_types: -0.1\n")
    assert main(["eval", "--dataset", "world", "--limit", "1", "--profile", str(bad)]) == 2
    assert "bad.yaml: invalid simulator profile: wrong_types" in capsys.readouterr().err


def test_calibrate_refuses_what_is_not_a_run(tmp_path):
    with pytest.raises(ConfigError, match="neither a sweep run directory"):
        read_run(tmp_path)
    (tmp_path / "questions.jsonl").write_text("{}\n")
    with pytest.raises(ConfigError, match="without traces.jsonl"):
        read_run(tmp_path)


@pytest.mark.slow
def test_cli_eval_out_then_calibrate_then_the_profile_in_eval_and_a_sweep(tmp_path, capsys):
    """End to end: ``eval --out`` keeps traces, ``calibrate --from`` reads them and writes a profile,
    ``eval --profile FILE`` and a sweep's ``backend.profile`` (relative to the sweep file) run it."""
    out = tmp_path / "eval"
    assert main(["eval", "--dataset", "world", "--split", "dev", "--types", "comparison", "single", "--limit", "30",
                 "--sim", "invalid_json=0.3", "--no-cache", "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    assert len((out / "traces.jsonl").read_text().splitlines()) == 30
    profile = tmp_path / "sweeps" / "fitted.yaml"
    assert main(["calibrate", "--from", str(out), "--out", str(profile), "--base", "ideal", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    rows = {r["knob"]: r for r in result["knobs"]}
    assert rows["invalid_json"]["status"] == "estimated" and rows["invalid_json"]["configured"] == 0.3
    assert rows["invalid_json"]["lo"] <= 0.3 <= rows["invalid_json"]["hi"]
    assert "budget_thrift" in result["unidentified"]
    fitted = load_profile_file(profile)
    assert fitted.invalid_json == pytest.approx(rows["invalid_json"]["rate"], abs=1e-4) and fitted.budget_thrift == 0.0

    assert main(["eval", "--dataset", "world", "--limit", "2", "--profile", str(profile), "--no-cache", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sim_profile"]["invalid_json"] == fitted.invalid_json
    sweep = tmp_path / "sweeps" / "s.yaml"
    sweep.write_text(yaml.safe_dump({"name": "fitted", "dataset": "world", "split": "dev", "limit": 2,
                                     "backend": {"kind": "sim", "profile": "fitted.yaml", "cache": False},
                                     "grid": {"round_cap.max_rounds": [1, 2]}}))
    done = run_sweep(sweep, tmp_path / "run", progress="quiet")
    assert done.complete and done.description["backend"]["profile"]["invalid_json"] == fitted.invalid_json
    again = read_run(tmp_path / "run")  # a sweep run directory is a calibration source too
    assert len(again.runs) == 4 and again.sim_profile == fitted


def _runs(world, profile: SimulatorProfile, questions) -> list:
    """``questions`` run by ``profile`` with the budget undisclosed (seed 0) and disclosed (seed 1), cap 2, no
    zero-yield stop, as :func:`sim_runs`."""
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

    resources = CorpusResources(world.corpus)
    runs = []
    for seed, disclosed in ((0, False), (1, True)):
        config = PipelineConfig().with_params({"disclosure.disclosed": disclosed, "round_cap.max_rounds": 2,
                                               "zero_yield.enabled": False})
        pipeline = Pipeline(config, resources, SimulatedBackend(profile, seed=seed))
        runs += [(f"seed{seed}", pipeline.run(q)[1]) for q in questions]
    return runs


@pytest.mark.slow
def test_calibration_fits_both_reactions_to_a_stated_budget(world, sim_runs):
    """Traces of the ``anchored`` and of the ``thrifty`` profile: calibration recovers the reaction that defines
    each (anchoring 0.9, thrift 0.8) within its interval, finds the other (0.05) low, and tells the two
    apart (anchoring's intervals do not overlap; thrift's estimate is higher for the thrifty model)."""
    _, _, backend = sim_runs
    questions = world.evalset.select(types=TYPES, per_type=50)
    types = {q.qid: q.type for q in questions}
    fitted = {}
    for name in ("anchored", "thrifty"):
        result = calibrate(CalibrationSource(_runs(world, PROFILES[name], questions), types, name), base="ideal",
                           similarity=backend.similarity)
        for knob in ("budget_anchoring", "budget_thrift"):
            c = result.knobs[knob]
            assert c.status == "estimated", (name, knob, c.reason)
            configured = getattr(PROFILES[name], knob)
            if configured >= 0.5:  # the knob that defines the profile: recovered within its interval
                assert c.estimate.lo <= configured <= c.estimate.hi, (name, knob, configured, c.estimate)
            else:  # the other one, 0.05: found low (near 0 the percentile interval is too narrow to cover it;
                assert c.value <= 0.15, (name, knob, c.estimate)  # anchored's thrift: 0.0 [0, 0.04], 6/116 stops)
        fitted[name] = result.knobs
    assert fitted["anchored"]["budget_anchoring"].estimate.lo > fitted["thrifty"]["budget_anchoring"].estimate.hi
    assert fitted["thrifty"]["budget_thrift"].value > fitted["anchored"]["budget_thrift"].value + 0.3


@pytest.mark.slow
def test_route_underrate_is_fitted_from_a_router_that_says_simple(tmp_path):
    """Traces of a model that routes every question SIMPLE give route_underrate near 1 (estimated once there are
    enough opportunities) and the fitted simulator routes like it."""
    from rag_lab.experiments.calibration.calibrate import calibrate
    from rag_lab.loaders import load_dataset
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

    dataset = load_dataset("hotpotqa_sample")
    questions = [q for q in dataset.evalset.questions if q.type == "bridge"][:8]
    model = SimulatedBackend(SimulatorProfile(name="simple-router", route_underrate=1.0, comparison_underrate=1.0))
    pipeline = Pipeline(PipelineConfig().with_params({"round_cap.max_rounds": 1}), CorpusResources(dataset.corpus), model)
    traces = [pipeline.run(q)[1] for q in questions]
    fit = calibrate(traces, base="typical", min_opportunities=5)
    route = {e.knob: e for e in fit.estimates if e.role == "route"}["route_underrate"]
    assert route.opportunities >= 5 and route.fired == route.opportunities
    assert fit.profile.route_underrate == 1.0
