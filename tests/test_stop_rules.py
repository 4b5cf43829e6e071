"""The stop table (rag_lab/pipeline/stop_rules.py): the loop's stops are rows asked in order, and a row registered
from outside — with its own stop reason and intervention code — is honoured by the loop with no edit to
pipeline.py, trace.py or the enumerations; removed, it leaves no trace."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_pipeline import AGAIN, ANSWER, FILLERS, Q, backend, run

from rag_lab.errors import ConfigError
from rag_lab.pipeline import POLICIES, StopReason, Trace
from rag_lab.pipeline.interventions import INTERVENTION_CODES
from rag_lab.pipeline.stop_rules import STOP_RULES, StopRule
from rag_lab.pipeline.trace import STOP_REASONS
from rag_lab.testing import ScriptedResources, corpus_of

ROOT = Path(__file__).resolve().parents[1]


def test_the_loops_stops_are_the_tables_rows_in_order():
    assert [(name, rule.phase, str(rule.reason)) for name, rule in STOP_RULES.items()] == [
        ("insufficient", "decision", "insufficient"), ("no_evidence", "decision", "policy_rejected"),
        ("answered", "decision", "answered"), ("round_cap", "decision", "cap_reached"),
        ("token_budget", "decision", "budget_tokens"), ("time_budget", "decision", "budget_time"),
        ("zero_yield", "round", "empty_round"), ("repeated_query", "decision", "repeated_query")]
    for name, rule in STOP_RULES.items():   # each row's reason, code and policy are known to the trace and config
        assert rule.reason in STOP_REASONS and (rule.code is None or rule.code in INTERVENTION_CODES), name
        assert rule.policy is None or rule.policy in POLICIES, name


def test_the_loop_has_no_stop_of_its_own():
    """pipeline.py names no stop reason the table holds: every stop of the controller loop is asked from the table."""
    tree = ast.parse((ROOT / "rag_lab" / "pipeline" / "pipeline.py").read_text())
    named = {node.attr for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "StopReason"}
    in_table = {StopReason(rule.reason).name for rule in STOP_RULES.values()
                if rule.reason in {r.value for r in StopReason}} - {"ANSWERED"}  # a SIMPLE route answers
    assert not named & in_table, f"pipeline.py stops inline with {sorted(named & in_table)}: make it a row of STOP_RULES"


def _asks_the_last_query_again(policy, check) -> bool:
    """A toy stop: the controller asked for the very query it ran last round."""
    return check.asks_round and bool(check.state.searches) and check.queries[:1] == check.state.searches[-1:]


@pytest.fixture
def toy_rule():
    rule = StopRule("decision", "toy_repeat", _asks_the_last_query_again, policy="zero_yield", code="toy_repeated",
                    says=lambda _, c: f"toy stop: {c.queries[0]!r} again")
    STOP_RULES.add("toy_repeat", rule, before="round_cap")
    yield rule
    STOP_RULES.remove("toy_repeat")


def test_a_row_registered_in_a_test_is_honoured_by_the_loop(toy_rule):
    res = ScriptedResources(corpus_of(FILLERS), {Q: ["f0"], "q2": ["f1"], "q3": ["f2"]})
    # round 2 runs q2; the controller then asks for q2 again: the toy row stops before the cap is asked
    result, trace = run(res, backend([AGAIN.format(q="q2"), AGAIN.format(q="q2"), ANSWER]),
                        **{"round_cap.max_rounds": 2})
    assert (result.stop_reason, trace.stop_reason, trace.rounds_used) == ("toy_repeat", "toy_repeat", 2)
    assert trace.has("toy_repeated", kind="controller") and trace.intervention_texts("toy_repeated") == [
        "toy stop: 'q2' again"]
    assert Trace.model_validate_json(trace.model_dump_json()) == trace   # the new reason and code round-trip
    # a different query is not a repeat: the cap, asked after the toy row, stops as before
    result, trace = run(res, backend([AGAIN.format(q="q2"), AGAIN.format(q="q3"), ANSWER]),
                        **{"round_cap.max_rounds": 2})
    assert result.stop_reason == StopReason.CAP_REACHED and not trace.has("toy_repeated")


def test_a_removed_row_leaves_no_reason_nor_code_behind(toy_rule):
    assert "toy_repeat" in STOP_REASONS and "toy_repeated" in INTERVENTION_CODES
    STOP_RULES.remove("toy_repeat")
    try:
        assert "toy_repeat" not in STOP_REASONS and "toy_repeated" not in INTERVENTION_CODES
        with pytest.raises(ValueError, match="unknown stop reason 'toy_repeat'"):
            Trace(qid="q", question="?", stop_reason="toy_repeat")
    finally:
        STOP_RULES.add("toy_repeat", toy_rule)   # for the fixture's own removal


def test_a_row_names_a_registered_policy_and_both_its_code_and_text():
    with pytest.raises(ConfigError, match="unknown policy 'nope'"):
        STOP_RULES.add("bad", StopRule("round", "x", _asks_the_last_query_again, policy="nope"))
    with pytest.raises(ConfigError, match="needs both its code and its text"):
        StopRule("round", "x", _asks_the_last_query_again, code="x_code")
    assert "bad" not in STOP_RULES
