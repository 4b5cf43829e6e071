"""Answer matching and per-question metrics, checked by hand."""

from __future__ import annotations

import pytest

from rag_lab.evaluation import contains, evaluate_pipeline, exact_match, f1, normalize_answer, summarize
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.pipeline import Pipeline, PipelineConfig
from rag_lab.records import EvalSet, Question
from rag_lab.testing import ScriptedResources, corpus_of


def test_normalization_and_matching():
    assert normalize_answer("The  Port, is 8443!") == "port is 8443"
    assert contains("It listens on port 8443 [1].", ["8443"])
    assert not contains("It listens on port 84431.", ["8443"])  # whole tokens only
    assert contains("reach #team-willow", ["#team-willow"])
    assert exact_match("An Apple", ["apple"]) and not exact_match("apple pie", ["apple"])
    assert f1("red apple pie", ["apple pie"]) == pytest.approx(0.8)
    assert f1("nothing", ["apple"]) == 0.0


def test_question_metrics_on_a_scripted_run():
    corpus = corpus_of({"gold": "The falcon passphrase is ZEBRA.", "other": "Falcon launch notes."})
    evalset = EvalSet([
        Question(qid="a", text="What is the falcon passphrase?", type="single", answer="ZEBRA",
                 gold_doc_ids=("gold",), min_hops=1),
        Question(qid="u", text="What is the moon passphrase?", type="unanswerable", min_hops=0),
    ])
    res = ScriptedResources(corpus, {"What is the falcon passphrase?": ["other", "gold"],
                                     "What is the moon passphrase?": ["other"]})
    backend = ScriptedBackend({"route": ['{"route": "SIMPLE"}'] * 2, "answer": ["It is ZEBRA [2] [1] [5]", "INSUFFICIENT"]})
    config = PipelineConfig().with_params({"crag.enabled": False, "citations.refusal_threshold": -1.0,
                                           "truncation.strategy": "append_then_truncate"})
    run = evaluate_pipeline(Pipeline(config, res, backend), evalset)
    a, u = run.rows
    assert a["quality_answer_containment"] == 1.0 and a["quality_has_answer_in_context"] == 1.0
    assert a["quality_evidence_recall"] == 1.0 and a["quality_evidence_precision"] == 0.5
    assert a["quality_citation_precision"] == 0.5  # [2] is gold, [1] is not
    assert a["quality_citation_validity"] == pytest.approx(2 / 3)  # [5] was outside the context
    assert a["quality_abstention_accuracy"] == 1.0 and a["cost_llm_calls"] == 2
    assert u["quality_answer_containment"] is None and u["quality_refused"] == 1.0
    assert u["quality_abstention_accuracy"] == 1.0
    summary = summarize(run.rows)
    assert summary["overall"]["n"] == 2 and summary["overall"]["quality_answer_containment"] == 1.0
    assert set(summary["by_type"]) == {"single", "unanswerable"}
