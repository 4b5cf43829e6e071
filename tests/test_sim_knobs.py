"""Behaviour knobs whose effects are not built in: common random numbers, every fired knob in the
trace, observed vs configured rates, budget thrift next to budget anchoring, premature stop that
answers from partial evidence, and the stated format-failure rates."""

from __future__ import annotations

import json

import pytest

from rag_lab.llm import prompts
from rag_lab.llm.prompts import INSUFFICIENT, EvidenceItem
from rag_lab.llm.sim.knobs import CallRandom, format_failure_rate
from rag_lab.llm.sim.profile import KNOBS, PROFILES, SimulatorProfile
from rag_lab.llm.simulator import SimulatedBackend
from rag_lab.pipeline.trace import knob_rates

E = EvidenceItem
Q = "Who was born first, Anna Verhoeven or Tomas Riedel?"
ANNA = E(1, "Anna Verhoeven", "Anna Verhoeven (born 14 March 1931) is a Dutch painter. She lived in Utrecht.")
TOMAS = E(2, "Tomas Riedel", "Tomas Riedel (born 2 July 1947) is a German composer. He studied in Leipzig.")
OTHER = E(3, "Utrecht", "Utrecht is a city in the Netherlands. It has a large university.")


def sim(**knobs: float) -> SimulatedBackend:
    return SimulatedBackend(SimulatorProfile(name="test", **knobs))


def explain_controller(backend, question, evidence, searches, disclose=True, max_rounds=3):
    text, record = backend.explain("controller", prompts.controller_prompt(question, evidence, searches, max_rounds,
                                                                           disclose))
    return text, record


def test_draws_are_common_random_numbers():
    """A draw depends on (seed, role, question, step), never on the evidence."""
    p = PROFILES["typical"]
    a = CallRandom(p, "controller", Q, step=1)
    assert [a.draw(k) for k in KNOBS] == [CallRandom(p, "controller", Q, step=1).draw(k) for k in KNOBS]
    for other in (CallRandom(p, "controller", Q, step=2), CallRandom(p, "route", Q, step=1),
                  CallRandom(p, "controller", Q + " Really?", step=1),
                  CallRandom(SimulatorProfile(name="typical", seed=1), "controller", Q, step=1)):
        assert [a.draw(k) for k in KNOBS] != [other.draw(k) for k in KNOBS]
    # the simulator's draws for one controller step are the same whatever the evidence
    backend = SimulatedBackend(SimulatorProfile(name="half", **{k: 0.5 for k in KNOBS}))
    _, r1 = explain_controller(backend, Q, [ANNA, TOMAS], [Q])
    _, r2 = explain_controller(backend, Q, [ANNA, OTHER], [Q])
    d1 = {r["knob"]: r["draw"] for r in r1}
    d2 = {r["knob"]: r["draw"] for r in r2}
    shared = set(d1) & set(d2)
    assert shared and all(d1[k] == d2[k] for k in shared)


def test_two_configs_differing_only_in_truncation_face_the_same_draws():
    from rag_lab.loaders import load_dataset
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

    ds = load_dataset("world")
    questions = ds.evalset.select(split="dev", types=["comparison", "bridge"], limit=40)
    res = CorpusResources(ds.corpus)
    backend = SimulatedBackend(SimulatorProfile(name="half", **{k: 0.5 for k in KNOBS}))
    base = PipelineConfig().set({"router.comparison_upgrade": False})
    configs = [base.set({"truncation.strategy": "append_then_truncate", "truncation.max_snippets": 2}),
               base.set({"truncation.strategy": "rank_then_truncate", "truncation.max_snippets": 6})]

    def draws(config) -> dict[str, list]:
        out = {}
        for q in questions:
            _, trace = Pipeline(config, res, backend).run(q)
            out[q.qid] = [(s.kind, s.round, [(k["knob"], k["draw"], k["fired"]) for k in s.llm.knobs])
                          for s in trace.steps if s.kind in ("route", "controller")]
        return out

    a, b = draws(configs[0]), draws(configs[1])
    assert a == b
    assert sum(len(v) for v in a.values()) > len(questions)  # route and controller steps were compared
    assert any(fired for steps in a.values() for _, _, ks in steps for _, _, fired in ks)


def test_every_fired_knob_is_recorded_not_only_the_first():
    # ideal: answer (both sides present); spinning fires, a stated budget lets thrift undo it,
    # anchoring then keeps searching, and the output's JSON is broken: four knobs on one call
    backend = sim(synonym_spinning=1.0, budget_thrift=1.0, budget_anchoring=1.0, invalid_json=1.0)
    text, record = explain_controller(backend, Q, [ANNA, TOMAS], [Q], disclose=True)
    fired = [r["knob"] for r in record if r["fired"]]
    assert fired == ["synonym_spinning", "budget_thrift", "budget_anchoring", "invalid_json"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_fired_knobs_reach_the_trace_and_the_rates():
    from rag_lab.evaluation import evaluate_pipeline
    from rag_lab.loaders import load_dataset
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

    ds = load_dataset("world")
    evalset = ds.evalset.select(split="dev", limit=60)
    backend = SimulatedBackend(PROFILES["sloppy"])
    run = evaluate_pipeline(Pipeline(PipelineConfig(), CorpusResources(ds.corpus), backend), evalset)
    steps = [s for t in run.traces.values() for s in t.steps if s.llm is not None]
    assert any(len(s.knobs) >= 2 for s in steps) or any(s.knobs for s in steps)
    assert all(s.knobs == [k["knob"] for k in s.llm.knobs if k["fired"]] for s in steps)
    rates = run.knob_rates()
    assert set(rates.columns) >= {"role", "knob", "opportunities", "fired", "configured", "observed", "per_call"}
    route_json = rates[(rates.role == "route") & (rates.knob == "invalid_json")].iloc[0]
    assert route_json.opportunities == route_json.calls == len(evalset)  # every route output can break
    assert route_json.configured == PROFILES["sloppy"].invalid_json
    assert (rates.fired <= rates.opportunities).all() and (rates.opportunities <= rates.calls * 1).all()
    assert knob_rates(run.traces.values()) == rates.to_dict(orient="records")


def test_observed_rate_matches_the_configured_rate():
    """Over many questions, fired / opportunities estimates the configured rate."""
    backend = sim(comparison_underrate=0.3)
    names = [("Anna Verhoeven", "Tomas Riedel"), ("Lena Park", "Omar Diaz"), ("Ivo Stern", "Mila Rossi")]
    records = []
    for i in range(300):
        a, b = names[i % 3]
        question = f"Who was born first, {a} {i} or {b}?"
        records += backend.explain("route", prompts.route_prompt(question))[1]
    underrate = [r for r in records if r["knob"] == "comparison_underrate"]
    assert len(underrate) == 300
    observed = sum(r["fired"] for r in underrate) / len(underrate)
    assert abs(observed - 0.3) < 0.08


def test_budget_thrift_is_the_opposite_of_anchoring_and_needs_a_stated_budget():
    searches = [Q]
    spin = sim(synonym_spinning=1.0, budget_thrift=1.0)
    hidden, _ = explain_controller(spin, Q, [ANNA, TOMAS], searches, disclose=False)
    stated, record = explain_controller(spin, Q, [ANNA, TOMAS], searches, disclose=True)
    assert json.loads(hidden)["action"] == "retrieve_again"  # spinning, no budget known
    assert json.loads(stated)["action"] == "answer"  # knows its budget: stops once evidence suffices
    assert [r["knob"] for r in record if r["fired"]] == ["synonym_spinning", "budget_thrift"]
    # the sign of the disclosure effect comes from the rates: anchoring alone adds a search
    anchored, _ = explain_controller(sim(budget_anchoring=1.0), Q, [ANNA, TOMAS], searches, disclose=True)
    assert json.loads(anchored)["action"] == "retrieve_again"


def test_premature_stop_answers_from_partial_evidence():
    ideal = SimulatedBackend("ideal")
    stopper = sim(premature_stop=1.0)
    one_side = prompts.answer_prompt(Q, [ANNA, OTHER], "correct")
    assert ideal.respond("answer", one_side) == INSUFFICIENT
    text, record = stopper.explain("answer", one_side)
    assert text != INSUFFICIENT and "1931" in text and "[1]" in text  # a confident partial answer
    assert [r["knob"] for r in record] == ["premature_stop"]
    # with both sides there is no opportunity for the knob
    assert stopper.explain("answer", prompts.answer_prompt(Q, [ANNA, TOMAS], "correct"))[1] == []
    decision = json.loads(explain_controller(stopper, Q, [ANNA, OTHER], [Q])[0])
    assert decision["action"] == "answer"


def test_format_failure_rates_are_stated():
    assert format_failure_rate(PROFILES["ideal"]) == 0.0
    assert format_failure_rate(PROFILES["typical"]) == pytest.approx(0.142625)
    assert format_failure_rate(PROFILES["sloppy"]) == pytest.approx(0.271)
    assert "0.143" in (SimulatorProfile.__doc__ or "") and "0.271" in (SimulatorProfile.__doc__ or "")
