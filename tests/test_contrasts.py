"""The helpers the notebooks call instead of defining their own: named configurations, labelled tables,
group means, the contrast-question picker, a paired difference across two sweeps, the trace facts against
gold (first round, gold found per stage, time split) and the lesson setup."""

from __future__ import annotations

import pandas as pd
import pytest

import lessons
from lessons import contrasts, lesson_sweep, setup_notebook, validation_table
from rag_lab.evaluation.trace_facts import (
    best_crag_score,
    crag_scores,
    fusion_table,
    gold_found,
    mark_gold,
    round_chunks,
    time_split,
)
from rag_lab.experiments import paired_finding, paired_test
from rag_lab.llm.schemas import ControllerDecision
from rag_lab.pipeline import Intervention, PipelineConfig
from rag_lab.pipeline.policies import RoundCap
from rag_lab.pipeline.trace import Trace, TraceStep
from rag_lab.stats.paired import interval_text
from rag_lab.widgets import shared_data

SPEC = {"name": "contrasts-test", "dataset": "world", "split": "test", "types": ["bridge", "comparison"],
        "per_type": 4, "backend": {"kind": "sim", "profile": "typical"}, "grid": {"round_cap.max_rounds": [1, 2]}}
Q = "quality_answer_containment_strict"
ONE, TWO = {"round_cap.max_rounds": 1}, {"round_cap.max_rounds": 2}


@pytest.fixture(scope="module")
def sweep():
    return lesson_sweep(SPEC)


@pytest.fixture(scope="module")
def other():
    """The same questions, the same two configs, another sweep (no zero-yield stop: different runs)."""
    return lesson_sweep(SPEC, name="contrasts-other", base={"zero_yield.enabled": False})


def test_named_labelled_and_grouped(sweep):
    names = contrasts.named(sweep, {"one round": ONE, "two rounds": TWO})
    assert set(names) == {"one round", "two rounds"} and len(set(names.values())) == 2
    table = contrasts.labelled_table(sweep, [f"{Q}±", "cost_llm_calls"], names)
    assert list(table.columns) == ["label", Q, f"{Q}_lo", f"{Q}_hi", "cost_llm_calls"]
    assert sorted(table["label"]) == ["one round", "two rounds"]
    with pytest.raises(KeyError, match="no column"):
        contrasts.labelled_table(sweep, ["quality_nonexistent"], names)
    means = contrasts.group_means(sweep, Q, names)
    rows = sweep.rows(names["two rounds"])
    assert means.loc["bridge", "two rounds"] == pytest.approx(rows[rows["type"] == "bridge"][Q].mean())
    several = contrasts.group_means(sweep, [Q, "cost_llm_calls"], names, by={q: q.startswith("w") for q in sweep.qids})
    assert list(several.columns.get_level_values(0).unique()) == [Q, "cost_llm_calls"]
    counts = contrasts.value_counts(sweep, "stop_reason", names)
    assert counts.sum().tolist() == [8, 8]


def test_the_contrast_question_is_where_the_two_differ_most(sweep):
    a = sweep.rows(sweep.reference(TWO)["candidate_id"]).set_index("qid")
    b = sweep.rows(sweep.reference(ONE)["candidate_id"]).set_index("qid")
    gap = (a["cost_llm_calls"] - b["cost_llm_calls"]).abs()
    qid = contrasts.contrast_question(sweep, TWO, ONE, "cost_llm_calls")
    assert gap[qid] == gap.max() and qid == gap.index[gap.to_numpy().argmax()]  # the first of the largest
    differ = contrasts.differing(sweep, TWO, ONE, "cost_llm_calls")
    assert differ == [q for q in a.index if gap[q] > 0] and differ
    weighted = contrasts.contrast_question(sweep, TWO, ONE, {"cost_llm_calls": 0.0, Q: 1.0})
    assert weighted == (differing := contrasts.differing(sweep, TWO, ONE, Q) or [sweep.qids[0]])[0], differing
    with pytest.raises(ValueError, match="at least one metric"):
        contrasts.contrast_question(sweep, TWO, ONE, {})


def test_paired_summary_and_interval_table_match_the_paired_test(sweep):
    summary = contrasts.paired_summary(sweep, [Q, "cost_llm_calls"], TWO, ONE)
    values, ref = sweep.paired_values("cost_llm_calls", TWO, ONE)
    test = paired_test(values, ref)
    row = summary.loc["cost_llm_calls"]
    assert row["Δ [lo, hi]"] == interval_text(test.difference._asdict()) and row["p"] == pytest.approx(test.p)
    assert (row["better"], row["worse"], row["n"]) == (test.n_better, test.n_worse, test.n)
    table = contrasts.interval_table(sweep, [Q, "cost_llm_calls"], reference=ONE)
    assert list(table.index) == ["round_cap.max_rounds=2"]
    assert table.loc["round_cap.max_rounds=2", "cost_llm_calls"].startswith(interval_text(test.difference._asdict()))


def test_a_paired_difference_across_two_sweeps_pairs_by_question(sweep, other):
    across = contrasts.paired_across(sweep, TWO, other, TWO, "cost_llm_calls")
    mine = sweep.rows(sweep.reference(TWO)["candidate_id"]).set_index("qid")["cost_llm_calls"]
    theirs = other.rows(other.reference(TWO)["candidate_id"]).set_index("qid")["cost_llm_calls"].reindex(mine.index)
    assert across.delta == pytest.approx(float((mine - theirs).mean()))
    itself = contrasts.paired_across(sweep, TWO, sweep, ONE, "cost_llm_calls")
    values, ref = sweep.paired_values("cost_llm_calls", TWO, ONE)
    assert itself.delta == pytest.approx(paired_test(values, ref).delta)
    assert list(contrasts.across_summary(sweep, TWO, other, TWO, [Q]).index) == [Q]
    fewer = lesson_sweep(SPEC, name="contrasts-fewer", per_type=2)
    with pytest.raises(ValueError, match="different questions"):
        contrasts.paired_across(sweep, TWO, fewer, TWO, Q)


def test_with_intervention_matches_codes_and_trace_contrast_shows_both(sweep):
    capped = contrasts.with_intervention(sweep, ONE, Intervention.REJECTED_CAP, "controller")
    expected = [q for q in sweep.qids if any(Intervention.REJECTED_CAP in s.codes
                                             for s in sweep.traces(sweep.reference(ONE)["candidate_id"])[q].steps)]
    assert capped == expected
    names = contrasts.named(sweep, {"one": ONE, "two": TWO})
    qid = sweep.qids[0]
    shown = contrasts.trace_contrast(sweep, names, qid)
    assert set(shown.index.get_level_values("config")) == {"one", "two"}
    assert shown.loc[("one", "result"), "decision"] == sweep.result(names["one"], qid).status
    assert len(shown.loc["two"]) == len(sweep.traces(names["two"])[qid].steps) + 1


def test_along_per_question_and_top_question(sweep):
    ids = contrasts.along(sweep, "round_cap.max_rounds")
    assert ids == {1: sweep.reference(ONE)["candidate_id"], 2: sweep.reference(TWO)["candidate_id"]}
    with pytest.raises(KeyError, match="does not set"):
        contrasts.along(sweep, "crag.lower")
    assert contrasts.along(sweep, ["round_cap.max_rounds"]) == {(1,): ids[1], (2,): ids[2]}
    one_at_a_time = lesson_sweep(SPEC, name="contrasts-along", per_type=1,
                                 grid=[{"round_cap.max_rounds": [1, 3]}, {"zero_yield.enabled": [False]}])
    caps = contrasts.along(one_at_a_time, "round_cap.max_rounds")  # the zero-yield candidate leaves the cap unset
    assert sorted(caps) == [1, 3] and len(set(caps.values())) == 2
    rounds = contrasts.per_question(sweep, TWO, "rounds_used")
    assert list(rounds.index) == sweep.qids
    assert rounds.tolist() == [sweep.result(ids[2], q).rounds_used for q in sweep.qids]
    assert contrasts.per_question(sweep, TWO, lambda r: r.rounds_used).equals(rounds)
    with pytest.raises(KeyError, match="no field"):
        contrasts.per_question(sweep, TWO, "nonexistent")
    steps = lessons.crag_thresholds.per_trace(sweep, TWO, lambda t: len(t.steps))
    assert steps[sweep.qids[0]] == len(sweep.traces(ids[2])[sweep.qids[0]].steps)
    values = pd.Series([1.0, 3.0, 3.0, 2.0], index=["a", "b", "c", "d"])
    assert lessons.citation_guard.top_question(values) == "b"                      # the first of the largest
    assert lessons.citation_guard.top_question(values, among=["a", "d"]) == "d"
    assert lessons.citation_guard.top_question(values, among=[]) == "b"            # nothing to choose among: all
    with pytest.raises(ValueError, match="at least one"):
        lessons.citation_guard.top_question(pd.Series(dtype=float))
    types = lessons.crag_thresholds.question_types(sweep)
    assert sorted(types.unique()) == ["bridge", "comparison"] and list(types.index) == sweep.qids
    described = lessons.crag_thresholds.by_type(sweep, rounds)
    assert described.loc["bridge", "count"] == 4
    assert described.loc["bridge", "max"] == rounds[types == "bridge"].max()


def test_crag_scores_are_read_from_the_finalize_step():
    graded = Trace(qid="q", question="?", steps=[TraceStep(kind="finalize", detail={"crag_scores": {"a#0": 0.4, "b#0": 0.7}})])
    assert crag_scores(graded) == {"a#0": 0.4, "b#0": 0.7} and best_crag_score(graded) == 0.7
    ungraded = Trace(qid="q", question="?", steps=[TraceStep(kind="finalize")])
    assert crag_scores(ungraded) == {} and best_crag_score(ungraded) != best_crag_score(ungraded)  # NaN


def test_trace_facts_against_gold():
    steps = [TraceStep(kind="retrieve", round=1, retrieved=["a#0", "b#1"], latency_s=0.002),
             TraceStep(kind="retrieve", round=2, retrieved=["c#0"], latency_s=0.003),
             TraceStep(kind="finalize", retrieved=["c#0", "b#1"])]
    trace = Trace(qid="q", question="?", steps=steps)
    assert round_chunks(trace) == ["a#0", "b#1"] and round_chunks(trace, 3) == []
    assert mark_gold(round_chunks(trace), ["a", "x"]) == "a#0 (gold), b#1"
    assert gold_found(trace, ["a", "c", "x"]) == {"round 1": 1, "any round": 2, "final context": 1}
    split = time_split(trace)
    assert split["retrieval wall ms"] == pytest.approx(5.0) and split["modelled LLM ms"] == 0.0


def test_gold_found_on_a_real_trace(sweep, world):
    qid = sweep.qids[0]
    trace = sweep.traces(sweep.reference(TWO)["candidate_id"])[qid]
    gold = world.evalset[qid].gold_doc_ids
    found = gold_found(trace, gold)
    assert 0 <= found["round 1"] <= found["any round"] <= len(gold)
    final = {c.doc_id for c in sweep.result(sweep.reference(TWO)["candidate_id"], qid).context}
    assert found["final context"] == len(set(gold) & final)


def test_setup_notebook_shows_a_policy(capsys):
    fields = setup_notebook(RoundCap)
    assert "Hard cap on retrieval rounds" in capsys.readouterr().out
    assert fields.loc["max_rounds", "default"] == 2 and fields.loc["max_rounds", "bounds"] == ">= 1, <= 10"
    assert pd.get_option("display.max_colwidth") == 90 and setup_notebook() is None


def test_small_tables_agree_with_the_sweep(sweep):
    names = contrasts.named(sweep, {"one": ONE, "two": TWO})
    rows = sweep.rows(names["one"])
    share = contrasts.group_share(sweep, ONE, "route", "COMPLEX")
    assert share["bridge"] == pytest.approx((rows[rows["type"] == "bridge"]["route"] == "COMPLEX").mean())
    means = contrasts.means(sweep, names, [Q, "cost_llm_calls"])
    assert means.loc["two", "cost_llm_calls"] == pytest.approx(
        sweep.table.set_index("candidate_id").loc[names["two"], "cost_llm_calls"])
    calls = lessons.hyde.calls_table(sweep, names)
    assert calls["two"].sum() == sum(len(t.llm_calls()) for t in sweep.traces(names["two"]).values())
    blocks = contrasts.paired_blocks(sweep, [Q], {"2 vs 1": (TWO, ONE)})
    assert blocks.loc[("2 vs 1", Q), "Δ [lo, hi]"] == contrasts.paired_summary(sweep, [Q], TWO, ONE).loc[Q, "Δ [lo, hi]"]
    knobs = lessons.budget_disclosure.knob_table(sweep, names, ["synonym_spinning"])
    assert set(knobs["knob"]) <= {"synonym_spinning"}
    outcomes = lessons.controller_validation.call_outcomes(sweep, TWO)
    assert outcomes.to_numpy().sum() == sum(1 for t in sweep.traces(names["two"]).values() for c in t.llm_calls()
                                            if c.role in ("route", "controller"))
    stacked = contrasts.stacked_tables({"a": sweep, "b": sweep}, [Q], key="which")
    assert list(stacked.columns) == ["which", "label", Q] and len(stacked) == 2 * len(sweep.table)
    texts = contrasts.intervention_texts(sweep, ONE, Intervention.REJECTED_CAP)
    assert list(texts) == contrasts.with_intervention(sweep, ONE, Intervention.REJECTED_CAP)
    assert all("past the cap" in t for ts in texts.values() for t in ts)
    side = lessons.real_model.answers_table({"one": (sweep, ONE), "two": (sweep, TWO)}, [Q])
    assert side.loc[sweep.qids[0], "two: answer"] == sweep.result(names["two"], sweep.qids[0]).answer[:160]


def test_gold_stages_and_findings_table(sweep, world):
    names = contrasts.named(sweep, {"one": ONE, "two": TWO})
    stages = lessons.query_rewrite.gold_stages(sweep, names, world.evalset)
    q = sweep.qids[1]
    assert stages.loc[q, "two"].to_dict() == gold_found(sweep.traces(names["two"])[q], world.evalset[q].gold_doc_ids)
    finding = paired_finding(
        sweep, "cost_llm_calls", candidate=TWO, reference=ONE, direction="above")
    table = lessons.real_model.findings_table(finding)
    assert table.loc[0, "holds"] == finding.holds and table.loc[0, "measured"] == finding.measured


SMALL = {"dataset": "world", "split": "test", "types": ["alias", "comparison"], "per_type": 3,
         "backend": {"kind": "sim", "profile": "typical"}}


def test_source_audit_counts_by_code(world):
    base = {"sources.simple": ["wiki"], "sources.complex": ["wiki"]}
    result = lesson_sweep({**SMALL, "name": "contrasts-sources", "base": base, "types": ["unanswerable", "mismatch"],
                           "grid": {"sources.mode": ["fail_closed", "fail_open"]}})  # types where the filter empties rounds
    source_of = {d: world.corpus[d].metadata["source"] for d in world.corpus.doc_ids}
    names = contrasts.named(result, {"closed": {"sources.mode": "fail_closed"}, "open": {"sources.mode": "fail_open"}})
    audit = lessons.source_contract.source_audit(result, names, source_of, ["wiki"])
    assert audit.loc["answers citing a source outside the contract", "closed"] == 0
    assert audit.loc["fail-open fallbacks", "closed"] == 0
    opened = [s for t in result.traces(names["open"]).values() for s in t.steps if s.detail.get("off_contract")]
    assert audit.loc["fail-open fallbacks", "open"] == len(opened) > 0
    assert audit.loc["rounds the filter left empty", "open"] == len(opened)  # each fallback is an emptied round
    assert audit.loc["rounds the filter left empty", "closed"] > 0
    assert audit.loc["answers citing a source outside the contract", "open"] > 0
    leaks = lessons.source_contract.off_contract_answers(result, {"sources.mode": "fail_open"}, source_of, ["wiki"], Q)
    assert len(leaks) == audit.loc["answers citing a source outside the contract", "open"]


def test_refusals_by_baseline_and_the_fusion_table():
    result = lesson_sweep({**SMALL, "name": "contrasts-judge", "grid": [
        {"judge.enabled": [False]}, {"judge.enabled": [True], "judge.mode": ["draft_only"]}]})
    judged = contrasts.named(result, {"draft": {"judge.enabled": True, "judge.mode": "draft_only"}})
    table = lessons.judge_input.refusals_by_baseline(result, judged, {"judge.enabled": False}, Intervention.JUDGE_REFUSED, Q,
                                           calls="cost_calls_judge")
    refused = contrasts.with_intervention(result, judged["draft"], Intervention.JUDGE_REFUSED, "judge")
    assert table.loc["refused", "draft"] == len(refused)
    assert table.loc["cost_calls_judge", "draft"] == sum(
        1 for t in result.traces(judged["draft"]).values() for c in t.llm_calls() if c.role == "judge")
    kinds = ["… correct answers", "… wrong answers", "… answers to unanswerable questions"]
    assert table.loc[kinds, "draft"].sum() <= len(refused)
    rewrite = lesson_sweep({**SMALL, "name": "contrasts-rewrite", "grid": {"rewrite.enabled": [True]}})
    _, resources = shared_data("world")
    cid, qid = rewrite.table["candidate_id"].iloc[0], rewrite.qids[0]
    config = PipelineConfig().with_params({"rewrite.enabled": True})
    fused = fusion_table(resources, rewrite.traces(cid)[qid], config)
    assert fused["in round 1"].sum() == len(round_chunks(rewrite.traces(cid)[qid]))
    with pytest.raises(ValueError, match="differs from round 1"):
        fusion_table(resources, rewrite.traces(cid)[qid], config.with_params({"retrieval.top_k": 1}))


def test_validation_table():
    fallback = ControllerDecision(action="insufficient", reason="fallback")
    table = validation_table({"valid": '{"action": "answer", "queries": []}', "prose": "just words"},
                             ControllerDecision, fallback)
    assert table.loc["valid", "outcome"] == "valid" and table.loc["valid", "decision"] == "answer"
    assert table.loc["prose", "outcome"] == "fallback" and table.loc["prose", "decision"] == "insufficient"
    assert table.loc["prose", "without a fallback"] == "invalid"


def test_fallback_decisions_are_found_by_their_code():
    knobs = {"invalid_json": 0.3, "hallucinated_action": 0.3}
    spec = {**SMALL, "name": "contrasts-fallback", "backend": {"kind": "sim", "profile": "ideal", "knobs": knobs},
            "grid": {"validation.on_invalid": ["fallback"]}}
    broken, clean = lesson_sweep(spec), lesson_sweep(spec, name="contrasts-clean", backend={"kind": "sim", "profile": "ideal"})
    pick = {"validation.on_invalid": "fallback"}
    meant = lessons.controller_validation.fallback_vs_meant(broken, pick, clean, pick)
    cid = broken.reference(pick)["candidate_id"]
    replaced = sum(1 for t in broken.traces(cid).values() for s in t.steps
                   if s.kind == "controller" and s.llm is not None and s.llm.outcome == "fallback")
    assert len(meant) == replaced > 0
    assert set(meant["fallback decided"]) <= {"answer", "insufficient"}
