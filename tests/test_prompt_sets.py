"""Prompt sets (policy ``prompts.version``): v1 stays byte for byte what the recorded v1 runs asked; v2 asks the
router and the controller for their reason first — in the JSON schema's order, which is the order a
grammar-constrained model writes — and the simulator reads both sets the same way (only tokens differ)."""

from __future__ import annotations

import json

import pytest

from rag_lab.errors import ConfigError
from rag_lab.evaluation.eval_run import evaluate_pipeline
from rag_lab.llm import prompts
from rag_lab.llm.role_table import LLM_ROLES
from rag_lab.llm.schemas import ControllerDecision, ReasonedControllerDecision
from rag_lab.llm.simulator import SimulatedBackend
from rag_lab.pipeline import Pipeline, PipelineConfig
from rag_lab.widgets.session import shared_data

Q = "Which city hosted the first show of the band that released Tinted Windows?"
EVIDENCE = [prompts.EvidenceItem(1, "Tinted Windows", "Tinted Windows is the debut album of a band.")]


def test_v1_is_the_default_and_its_wording_is_unchanged():
    """The v1 system messages are what the shipped v1 cassette holds (a changed word would make every
    recorded call a miss): pinned here by their version tags and opening words."""
    assert PipelineConfig().prompts.version == "v1"
    assert prompts.route_prompt(Q) == prompts.route_prompt(Q, "v1")
    route = prompts.route_prompt(Q)[0].content
    ctl = prompts.controller_prompt(Q, EVIDENCE, [Q], 3, False)[0].content
    ans = prompts.answer_prompt(Q, EVIDENCE, "correct")[0].content
    assert route.startswith("[route-v1] Classify the question for a retrieval system. SIMPLE: one fact")
    assert ctl.startswith("[controller-v2] You control a retrieval loop. Read the evidence")
    assert ans.startswith("[answer-v1] Answer the question using only the evidence.")


def test_v2_changes_three_roles_and_keeps_the_sections():
    route = prompts.route_prompt(Q, "v2")
    ctl = prompts.controller_prompt(Q, EVIDENCE, [Q], 3, True, prompt_set="v2")
    ans = prompts.answer_prompt(Q, EVIDENCE, "ambiguous", "v2")
    assert [m[0].content.split("]")[0] for m in (route, ctl, ans)] == ["[route-v2", "[controller-v3", "[answer-v2"]
    # the user message (the data the simulator reads) is the same in both sets
    assert ctl[1] == prompts.controller_prompt(Q, EVIDENCE, [Q], 3, True)[1]
    assert ans[1] == prompts.answer_prompt(Q, EVIDENCE, "ambiguous")[1]
    # the budget sentence (read by the simulator's anchoring knob) and the template markers survive
    assert "You may run at most 3 rounds of searches in total" in ctl[0].content
    assert "confidence is low" in ans[0].content
    assert prompts.template_name("grade", "v2") == "grade-v1"
    with pytest.raises(ValueError, match="unknown prompt set 'v9'"):
        prompts.route_prompt(Q, "v9")
    with pytest.raises(ConfigError, match="prompts.version"):
        PipelineConfig().with_params({"prompts.version": "v9"})


def _grammar_field_order(schema: type) -> list[str]:
    """The property order of the grammar llama-cpp-python builds from the schema (as the local server does)."""
    grammar = pytest.importorskip("llama_cpp.llama_grammar")
    gbnf = grammar.json_schema_to_gbnf(json.dumps(schema.model_json_schema()))
    root = next(line for line in gbnf.splitlines() if line.startswith("root ::="))
    fields = [name for name in schema.model_fields if f'"\\"{name}\\""' in gbnf]
    return sorted(fields, key=lambda name: root.find(f"{name}-kv") if f"{name}-kv" in root else gbnf.find(f'\\"{name}\\"'))


def test_v2_schemas_put_the_reason_first_and_require_it():
    for role in ("route", "controller"):
        schema = LLM_ROLES[role].schema("v2").model_json_schema()
        assert list(schema["properties"])[0] == "reason"
        assert schema["required"][0] == "reason"
    # v1's controller schema requires only the action: a grammar writes required fields first, so the
    # model decided before it reasoned
    assert ControllerDecision.model_json_schema()["required"] == ["action"]
    assert _grammar_field_order(ReasonedControllerDecision)[0] == "reason"
    assert _grammar_field_order(ControllerDecision)[0] == "action"
    # the same validation: retrieve_again needs a query
    with pytest.raises(ValueError, match="retrieve_again needs"):
        ReasonedControllerDecision(reason="r", action="retrieve_again", queries=[" "])


def test_the_simulator_reads_both_sets_alike():
    """Same answers, routes, rounds and stops under v1 and v2 on the world (the simulator reads sections,
    not instructions); only the token counts differ."""
    dataset, resources = shared_data("world")
    questions = dataset.evalset.select(split="test", types=["bridge", "comparison"], per_type=6)
    runs = {}
    for version in ("v1", "v2"):
        config = PipelineConfig().with_params({"prompts.version": version, "round_cap.max_rounds": 3})
        runs[version] = evaluate_pipeline(Pipeline(config, resources, SimulatedBackend("typical")), questions)
    same = ("status", "stop_reason", "route", "cost_rounds", "cost_llm_calls", "quality_answer_containment_strict")
    for a, b in zip(runs["v1"].rows, runs["v2"].rows, strict=True):
        assert {k: a[k] for k in same} == {k: b[k] for k in same}
    assert sum(r["cost_prompt_tokens"] for r in runs["v2"].rows) != sum(r["cost_prompt_tokens"] for r in runs["v1"].rows)
    assert {r["route"] for r in runs["v1"].rows} >= {"COMPLEX"}


def test_v4s_budget_arms_differ_by_the_cap_alone_and_the_simulator_reads_both():
    """Set v4 (issue 50): without a stated budget the controller is told only the rounds run, not v3's "use as few
    rounds of searches as possible"; removing the cap clause from the disclosed arm leaves the hidden arm's facts."""
    from rag_lab.llm.sim.prompt import rounds_run, stated_budget

    disclosed = prompts.controller_prompt(Q, EVIDENCE, [Q, "first show"], 4, True, 2, "v4")[0].content
    hidden = prompts.controller_prompt(Q, EVIDENCE, [Q, "first show"], 4, False, 2, "v4")[0].content
    assert disclosed.startswith("[controller-v4]") and "as few rounds" not in hidden + disclosed
    assert disclosed.replace("You may run at most 4 rounds of searches in total; 2 have been run.",
                             "2 rounds of searches have been run.") == hidden
    assert (stated_budget(disclosed), stated_budget(hidden)) == (4, None)
    assert rounds_run(disclosed, []) == rounds_run(hidden, []) == 2
    one = prompts.controller_prompt(Q, EVIDENCE, [Q], 4, False, 1, "v4")[0].content
    assert "1 round of searches has been run." in one and rounds_run(one, ["a", "b"]) == 1
    # v3's arms are unchanged: the thrift instruction is still in its hidden arm
    assert "Use as few rounds of searches as possible; 2 have been run." in prompts.controller_prompt(
        Q, EVIDENCE, [Q, "first show"], 4, False, 2, "v3")[0].content
