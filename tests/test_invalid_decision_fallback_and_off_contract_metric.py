"""Two measurement hooks of the course (notebooks 11 and 12): ``validation.on_invalid`` (the deterministic
fallback for an invalid controller decision, or a refusal as in a pipeline without one) and the metric
``quality_off_contract_citation`` (an answer cites a chunk that a fail-open source contract let through)."""

from __future__ import annotations

import pytest

from rag_lab.evaluation import question_metrics
from rag_lab.evaluation.catalog import label
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.pipeline import ControllerValidation, Pipeline, PipelineConfig, StopReason
from rag_lab.pipeline.interventions import Intervention
from rag_lab.records import Corpus, Document, Question
from rag_lab.testing import ScriptedResources, corpus_of

Q = "What is the falcon passphrase?"
FILLERS = {f"f{i}": f"Falcon launch notes, item {i}: the rocket launch was rescheduled." for i in range(4)}
QUESTION = Question(qid="q1", text=Q, answer="rescheduled", gold_doc_ids=("f0",))


def run(resources, be, **params):
    config = PipelineConfig().with_params({"crag.enabled": False, "citations.refusal_threshold": -1.0, **params})
    return Pipeline(config, resources, be).run(Q, qid="q1")


def controller_backend(raw: str) -> ScriptedBackend:
    return ScriptedBackend({"route": ['{"route": "COMPLEX"}'], "controller": [raw], "answer": ["rescheduled [1]"]})


# --- validation.on_invalid -----------------------------------------------------------------------------------

def test_the_fallback_is_the_default_and_validated():
    assert PipelineConfig().validation == ControllerValidation(on_invalid="fallback")
    assert PipelineConfig().get("validation.on_invalid") == "fallback"
    with pytest.raises(Exception, match="on_invalid"):
        PipelineConfig().with_params({"validation.on_invalid": "guess"})


@pytest.mark.parametrize("raw", ['{"action": "search_web"}', "not json", '{"action": ["answer"]}'])
def test_refuse_ends_an_invalid_decision_in_a_refusal_where_the_fallback_answers(raw):
    res = ScriptedResources(corpus_of(FILLERS), {Q: ["f0"]})
    answered, _ = run(res, controller_backend(raw))
    refused, trace = run(res, controller_backend(raw), **{"validation.on_invalid": "refuse"})
    assert answered.status == "answered"
    assert refused.status == "refused" and refused.stop_reason == StopReason.INSUFFICIENT
    step = next(s for s in trace.steps if s.kind == "controller")
    assert step.llm.outcome == "fallback" and step.decision["action"] == "insufficient"
    assert step.codes == [Intervention.INVALID_REFUSED] and "validation.on_invalid=refuse" in step.interventions[0]


def test_a_valid_decision_is_the_same_under_both_settings():
    res = ScriptedResources(corpus_of(FILLERS), {Q: ["f0"]})
    a, _ = run(res, controller_backend('{"action": "answer"}'))
    b, _ = run(res, controller_backend('{"action": "answer"}'), **{"validation.on_invalid": "refuse"})
    assert a.status == b.status == "answered" and a.answer == b.answer


# --- quality_off_contract_citation ---------------------------------------------------------------------------

def simple_backend() -> ScriptedBackend:
    return ScriptedBackend({"route": ['{"route": "SIMPLE"}'], "answer": ["rescheduled [1]"]})


def off_contract(resources, **params) -> float:
    result, trace = run(resources, simple_backend(), **params)
    return question_metrics(QUESTION, result, trace)["quality_off_contract_citation"]


def test_fail_open_with_nothing_allowed_left_is_an_off_contract_citation():
    res = ScriptedResources(corpus_of(FILLERS, source="meeting_notes"), {Q: ["f0", "f1"]})
    assert off_contract(res, **{"sources.simple": ("wiki",), "sources.mode": "fail_open"}) == 1.0
    result, trace = run(res, simple_backend(), **{"sources.simple": ("wiki",), "sources.mode": "fail_open"})
    step = next(s for s in trace.steps if s.kind == "retrieve")
    assert step.detail["off_contract"] == ["f0#0", "f1#0"]
    assert off_contract(res, **{"sources.simple": ("wiki",), "sources.mode": "fail_closed"}) == 0.0  # refused
    assert off_contract(res) == 0.0  # no contract: nothing is off it


def test_fail_open_that_kept_an_allowed_chunk_cites_nothing_off_contract():
    docs = [Document(doc_id="f0", title="f0", text=FILLERS["f0"], metadata={"source": "wiki"}),
            Document(doc_id="f1", title="f1", text=FILLERS["f1"], metadata={"source": "meeting_notes"})]
    res = ScriptedResources(Corpus(docs), {Q: ["f1", "f0"]})
    result, trace = run(res, simple_backend(), **{"sources.simple": ("wiki",), "sources.mode": "fail_open"})
    assert [c.doc_id for c in result.context] == ["f0"] and not any(s.detail.get("off_contract") for s in trace.steps)
    assert question_metrics(QUESTION, result, trace)["quality_off_contract_citation"] == 0.0


def test_the_metric_has_a_label():
    assert label("quality_off_contract_citation") == "answers citing a source outside the contract"
