"""The helpers the notebooks call instead of defining their own: named configurations, labelled tables,
group means, the contrast-question picker, a paired difference across two sweeps, the trace facts against
gold (first round, gold found per stage, time split) and the lesson setup."""

from __future__ import annotations

import pandas as pd
import pytest

from rag_lab.evaluation.trace_facts import gold_found, mark_gold, round_chunks, time_split
from rag_lab.experiments import contrasts, paired_test
from rag_lab.loaders import load_dataset
from rag_lab.pipeline import Intervention
from rag_lab.pipeline.policies import RoundCap
from rag_lab.pipeline.trace import Trace, TraceStep
from rag_lab.stats.paired import interval_text
from rag_lab.widgets import lesson_sweep, setup_notebook

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


def test_gold_found_on_a_real_trace(sweep):
    world = load_dataset("world")
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

