"""The answer path (issue 37): the plain reader (``generation.reader=plain``), the uncited-answer rule
(``citations.require_citation``), who refused (``Result.refused_by``: the model or the pipeline), 'no' answers to
open questions, and prompt set v3 (v2's controller word for word, answer-v3 without the leaked format)."""

from __future__ import annotations

import pytest

from rag_lab.evaluation.metric_table import question_metrics
from rag_lab.llm import prompts
from rag_lab.llm.base import LLMRequest
from rag_lab.llm.role_table import LLM_ROLES, PROMPT_SETS, template_name
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.pipeline import REFUSAL, Pipeline, PipelineConfig
from rag_lab.pipeline.interventions import Intervention
from rag_lab.records import Question
from rag_lab.testing import ScriptedResources, corpus_of

Q = "Where was the falcon launch moved to?"
DOCS = {"f0": "Falcon launch notes: the rocket launch was moved to Kourou.", "f1": "Other notes about rockets."}
ANSWER = '{"action": "answer"}'


def run(answer_script: dict, controller: str = ANSWER, **params):
    be = ScriptedBackend({"route": ['{"route": "COMPLEX"}'], "controller": [controller], **answer_script})
    config = PipelineConfig().with_params({"crag.enabled": False, "citations.refusal_threshold": -1.0, **params})
    result, trace = Pipeline(config, ScriptedResources(corpus_of(DOCS), {Q: ["f0", "f1"]}), be).run(Q, qid="q1")
    return result, trace, be


def test_the_plain_reader_answers_from_the_same_context_with_no_pipeline_rule():
    guarded, _, be_guarded = run({"answer": ["Kourou"]})          # uncited: the guard refuses it
    plain, trace, be_plain = run({"reader": ["Kourou"]}, **{"generation.reader": "plain"})
    assert guarded.status == "refused" and guarded.refused_by == "pipeline"
    assert plain.status == "answered" and plain.answer == "Kourou" and plain.refused_by is None
    assert not be_plain.requests_for("answer") and len(be_plain.requests_for("reader")) == 1
    reader = be_plain.requests_for("reader")[0].messages
    answer = be_guarded.requests_for("answer")[0].messages
    assert reader[0].content.startswith("[reader-v1]") and "INSUFFICIENT" not in reader[0].content
    assert reader[1].content == answer[1].content                 # the same question and final context
    assert trace.has(Intervention.PLAIN_READER, kind="guard")
    said_so, _, _ = run({"reader": ["INSUFFICIENT"]}, **{"generation.reader": "plain"})
    assert said_so.status == "refused" and said_so.refused_by == "model"


def test_require_citation_false_keeps_an_uncited_answer_and_changes_no_request():
    kept, trace, be = run({"answer": ["Kourou"]}, **{"citations.require_citation": False})
    refused, _, be_refused = run({"answer": ["Kourou"]})
    assert kept.status == "answered" and kept.answer == "Kourou" and kept.citations == []
    assert trace.has(Intervention.KEPT_UNCITED, kind="guard")
    assert refused.answer == REFUSAL
    assert [r.messages for r in be.requests] == [r.messages for r in be_refused.requests]
    # an invalid citation is still removed; the rest of the answer stays
    cited_wrong, _, _ = run({"answer": ["Kourou [7]"]}, **{"citations.require_citation": False})
    assert cited_wrong.answer == "Kourou" and cited_wrong.invalid_citations == 1


def test_refusals_say_who_refused():
    model, _, _ = run({"answer": ["INSUFFICIENT"]})
    controller, _, _ = run({}, controller='{"action": "insufficient"}')
    fallback, _, _ = run({}, controller="not json", **{"validation.on_invalid": "refuse"})
    guard, _, _ = run({"answer": ["Kourou [9]"]})
    assert (model.refused_by, controller.refused_by, fallback.refused_by, guard.refused_by) == (
        "model", "model", "pipeline", "pipeline")
    question = Question(qid="q1", text=Q, answer="Kourou", type="bridge")
    rows = [question_metrics(question, r, t) for r, t, _ in (run({"answer": ["INSUFFICIENT"]}),
                                                              run({"answer": ["Kourou [9]"]}))]
    assert [(r["quality_refused"], r["quality_refused_model"], r["quality_refused_pipeline"]) for r in rows] == [
        (1.0, 1.0, 0.0), (1.0, 0.0, 1.0)]


@pytest.mark.parametrize(("answer", "gold", "expected"), [
    ("No [1]", "Kourou", 1.0), ("No, it was not moved [1]", "Kourou", 1.0), ("Kourou [1]", "Kourou", 0.0),
    ("No [1]", "no", None), ("Nobody [1]", "Kourou", 0.0),
])
def test_no_to_an_open_question_is_counted_only_on_open_questions(answer, gold, expected):
    result, trace, _ = run({"answer": [answer]})
    row = question_metrics(Question(qid="q1", text=Q, answer=gold, type="bridge"), result, trace)
    assert row["quality_no_to_open"] == expected


def test_prompt_set_v3_asks_the_controller_what_v2_asked_and_answers_without_the_leaked_format():
    assert PROMPT_SETS["v3"].lineage() == ("v2", "v1")
    assert {role: template_name(role, "v3") for role in LLM_ROLES} == {
        **{role: template_name(role, "v2") for role in LLM_ROLES}, "answer": "answer-v3"}
    evidence = [prompts.EvidenceItem(1, "Falcon", DOCS["f0"])]
    v2 = prompts.controller_prompt(Q, evidence, [Q], 3, False, prompt_set="v2")
    v3 = prompts.controller_prompt(Q, evidence, [Q], 3, False, prompt_set="v3")
    key = lambda messages, s: LLMRequest(role="controller", messages=messages,  # noqa: E731
                                         response_schema=LLM_ROLES["controller"].schema(s)).cache_key("b", "m")
    assert key(v2, "v2") == key(v3, "v3")                           # the recorded controller calls answer v3
    answer_v3 = prompts.answer_prompt(Q, evidence, "correct", "v3")[0].content
    assert answer_v3.startswith("[answer-v3]")
    assert "yes or no" not in answer_v3 and "1987" not in answer_v3 and "a name, a place" not in answer_v3
    assert "yes or no" in prompts.answer_prompt(Q, evidence, "correct", "v2")[0].content   # v2 stays, byte for byte
