"""Behaviour knobs whose effects are not built in: common random numbers keyed by decision, every fired
knob in the trace, observed vs configured rates, budget thrift beside budget anchoring with the sign of
disclosure measured (``anchored`` raises rounds, ``thrifty`` lowers them), premature stop that answers
from partial evidence, and the stated format-failure rates."""

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


def _controller_draws(config, questions, resources, backend) -> tuple[dict, dict]:
    """Per (qid, role, decision index): the route / controller knob draws, and the prompt the call was sent."""
    from rag_lab.pipeline import Pipeline

    draws, sent = {}, {}
    for q in questions:
        _, trace = Pipeline(config, resources, backend).run(q)
        controller = 0
        for s in trace.steps:
            if s.kind not in ("route", "controller") or s.llm is None:  # a disabled router has no call
                continue
            key = (q.qid, s.kind, controller if s.kind == "controller" else 0)
            controller += s.kind == "controller"
            draws[key] = [(k["knob"], k["draw"]) for k in s.llm.knobs]
            sent[key] = json.dumps(s.llm.messages)
    return draws, sent


@pytest.mark.slow
@pytest.mark.parametrize("change", ["truncation", "rewrite", "retriever"])
def test_configurations_whose_prompts_differ_face_the_same_draws_at_the_same_decision(world, change):
    """Common random numbers keyed by decision (role, question, rounds already run), not by prompt text nor
    by the number of queries: with three rewrites in round 1 the second controller call lists 5 searches
    against 2 without, BM25 and dense show other evidence, yet every decision both runs reach draws the
    same numbers. Fails when the key is the prompt or ``len(searches)`` (shown once)."""
    from rag_lab.pipeline import CorpusResources, PipelineConfig

    questions = world.evalset.select(split="dev", types=["comparison", "bridge", "single"], per_type=12)
    res = CorpusResources(world.corpus)
    formats = ("invalid_json", "hallucinated_action", "wrong_types")  # low: a fallback ends the loop at once
    backend = SimulatedBackend(SimulatorProfile(name="half", **{k: 0.1 if k in formats else 0.5 for k in KNOBS}))
    base = PipelineConfig().with_params({"router.enabled": False, "zero_yield.enabled": False, "round_cap.max_rounds": 3})
    a, b = {
        "truncation": ({"truncation.strategy": "append_then_truncate", "truncation.max_snippets": 2},
                       {"truncation.strategy": "rank_then_truncate", "truncation.max_snippets": 6}),
        "rewrite": ({"rewrite.enabled": False}, {"rewrite.enabled": True, "rewrite.n_rewrites": 3}),
        "retriever": ({"retrieval.retriever": "bm25"}, {"retrieval.retriever": "dense"}),
    }[change]
    draws_a, sent_a = _controller_draws(base.with_params(a), questions, res, backend)
    draws_b, sent_b = _controller_draws(base.with_params(b), questions, res, backend)
    shared = [k for k in draws_a if k in draws_b]
    later = [k for k in shared if k[1] == "controller" and k[2] >= 1]
    assert len(later) >= 10, len(later)  # decisions after a second round were compared, not only the first
    # which knobs a decision draws depends on what the evidence offers; a knob drawn on both sides draws the same
    both = [(k, knob) for k in shared for knob in dict(draws_a[k]).keys() & dict(draws_b[k]).keys()]
    assert len(both) >= len(shared)
    mismatched = [(k, knob) for k, knob in both if dict(draws_a[k])[knob] != dict(draws_b[k])[knob]]
    assert not mismatched, f"{len(mismatched)} of {len(both)} shared draws differ: {mismatched[:3]}"
    if change != "truncation":  # the controller's prompts really differ (truncation's need not)
        calls = [k for k in shared if k[1] == "controller"]
        differ = [k for k in calls if sent_a[k] != sent_b[k]]
        assert len(differ) >= len(calls) // 2, (len(differ), len(calls))


def test_every_fired_knob_is_recorded_not_only_the_first():
    # ideal: search for the missing side (one side present); premature stop answers, the unspent stated
    # budget anchors it back to searching, and the output's JSON is broken: three knobs on one call
    backend = sim(premature_stop=1.0, budget_anchoring=1.0, invalid_json=1.0, budget_thrift=1.0)
    text, record = explain_controller(backend, Q, [ANNA, OTHER], [Q], disclose=True)
    fired = [r["knob"] for r in record if r["fired"]]
    assert fired == ["premature_stop", "budget_anchoring", "invalid_json"]  # thrift: no search left to skip
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_fired_knobs_reach_the_trace_and_the_rates(world):
    from rag_lab.evaluation import evaluate_pipeline
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

    evalset = world.evalset.select(split="dev", limit=60)
    backend = SimulatedBackend(PROFILES["sloppy"])
    run = evaluate_pipeline(Pipeline(PipelineConfig(), CorpusResources(world.corpus), backend), evalset)
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


def test_budget_thrift_is_independent_of_spinning_and_disjoint_from_anchoring():
    """Thrift no longer undoes spinning: on sufficient evidence a spinning re-search stays a re-search with a
    stated budget; anchoring acts only on stops, thrift only on the ideal's searches."""
    spin = sim(synonym_spinning=1.0, budget_thrift=1.0)
    for disclose in (False, True):
        text, record = explain_controller(spin, Q, [ANNA, TOMAS], [Q], disclose=disclose)
        assert json.loads(text)["action"] == "retrieve_again"
        assert [r["knob"] for r in record if r["fired"]] == ["synonym_spinning"]
    anchored, record = explain_controller(sim(budget_anchoring=1.0, budget_thrift=1.0), Q, [ANNA, TOMAS], [Q],
                                          disclose=True)
    assert json.loads(anchored)["action"] == "retrieve_again"
    assert [r["knob"] for r in record if r["knob"].startswith("budget")] == ["budget_anchoring"]  # a stop: no thrift


def _first_controller_prompt(world, qid: str, disclose: bool):
    """The first controller prompt the ideal pipeline sends for ``qid`` (router off, cap 4), and its decision."""
    from rag_lab.llm.base import Message
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

    config = PipelineConfig().with_params({"router.enabled": False, "round_cap.max_rounds": 4,
                                           "disclosure.disclosed": disclose})
    _, trace = Pipeline(config, CorpusResources(world.corpus), SimulatedBackend("ideal")).run(world.evalset[qid])
    first = next(s for s in trace.steps if s.kind == "controller")
    return tuple(Message(**m) for m in first.llm.messages), first.decision


def test_budget_thrift_stops_once_the_evidence_settles_and_needs_a_stated_budget(world):
    """A question whose first round already holds an answer the model would settle for: the ideal controller
    searches once more before settling; told its budget, a thrifty one answers now (fewer rounds, and the
    answer the skipped search could have improved). Without a stated budget thrift has no opportunity."""
    stated, ideal_decision = _first_controller_prompt(world, "single-022", True)
    hidden, _ = _first_controller_prompt(world, "single-022", False)
    assert ideal_decision["action"] == "retrieve_again"
    thrifty = sim(budget_thrift=1.0)
    text, record = thrifty.explain("controller", stated)
    assert json.loads(text)["action"] == "answer" and [r["knob"] for r in record if r["fired"]] == ["budget_thrift"]
    text, record = thrifty.explain("controller", hidden)
    assert json.loads(text)["action"] == "retrieve_again" and "budget_thrift" not in [r["knob"] for r in record]
    # a comparison with a side missing never settles: thrift has no opportunity there
    assert "budget_thrift" not in [r["knob"] for r in explain_controller(thrifty, Q, [ANNA, OTHER], [Q], disclose=True)[1]]


def _rounds(world, profile: SimulatorProfile, disclosed: bool) -> list[int]:
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

    config = PipelineConfig().with_params({"disclosure.disclosed": disclosed, "round_cap.max_rounds": 4,
                                           "router.enabled": False, "zero_yield.enabled": False})
    pipeline = Pipeline(config, CorpusResources(world.corpus), SimulatedBackend(profile))
    return [pipeline.run(q)[0].rounds_used for q in world.evalset.select(split="test", per_type=10)]


@pytest.mark.slow  # six pipeline runs over the world's 80 test questions; the knobs' unit checks stay in the quick loop
def test_disclosure_sign_is_measured_anchored_raises_thrifty_lowers(world):
    """The sign of disclosure's effect on rounds is not built in: on the world's 80 test questions at the
    article's cap of 4 (router and zero-yield stop off, as in its agent loop) ``anchored`` raises rounds and
    ``thrifty`` lowers them, each by an exact paired test; with both budget knobs at 0 the two arms run
    the very same rounds (the control: the prompts differ by the cap sentence alone)."""
    from rag_lab.experiments import paired_test

    measured = {}
    for name in ("anchored", "thrifty"):
        hidden, shown = _rounds(world, PROFILES[name], False), _rounds(world, PROFILES[name], True)
        measured[name] = (sum(hidden) / len(hidden), sum(shown) / len(shown))
        test = paired_test(shown, hidden, alternative="greater" if name == "anchored" else "less")
        assert test.p < 0.01 and (test.delta > 0) == (name == "anchored"), (name, test)
    assert measured["anchored"][1] - measured["anchored"][0] > 0.8, measured  # the article's kind of gap
    assert measured["thrifty"][1] < measured["thrifty"][0] - 0.15, measured
    off = SimulatorProfile.model_validate({**PROFILES["typical"].model_dump(), "budget_anchoring": 0.0,
                                           "budget_thrift": 0.0})
    assert _rounds(world, off, True) == _rounds(world, off, False)


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


def test_route_underrate_sends_non_comparison_complex_questions_simple():
    """``route_underrate`` (fitted to a model that routes everything SIMPLE) applies where the reader routes
    COMPLEX and the question is no comparison; comparisons stay ``comparison_underrate``'s."""
    from rag_lab.llm.base import LLMRequest
    from rag_lab.llm.schemas import RouteDecision

    chain = "The band who released the debut album Tinted Windows had their first performance in what city?"
    comparison = "Was Pepper Keenan or Rob Parissi born first?"

    def route(profile: SimulatorProfile, question: str) -> str:
        request = LLMRequest(role="route", messages=prompts.route_prompt(question), response_schema=RouteDecision)
        return SimulatedBackend(profile).complete(request).parsed.route

    off = SimulatorProfile(name="off")
    on = SimulatorProfile(name="on", route_underrate=1.0)
    assert route(off, chain) == "COMPLEX" and route(on, chain) == "SIMPLE"
    assert route(off, comparison) == route(on, comparison) == "COMPLEX"  # not route_underrate's to change
    assert route(SimulatorProfile(name="c", comparison_underrate=1.0), comparison) == "SIMPLE"


def test_the_knobs_are_the_profiles_rates():
    """One list of knobs: every field of a profile but its name and seed is a knob, in the order declared."""
    assert [f for f in SimulatorProfile.model_fields if f not in ("name", "seed")] == list(KNOBS)
    assert SimulatorProfile(**{k: 0.5 for k in KNOBS}).knobs() == dict.fromkeys(KNOBS, 0.5)
