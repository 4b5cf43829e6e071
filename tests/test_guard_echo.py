"""The echo guard in a pipeline run (scripted LLM, scripted retrieval): a draft that reproduces the
instructions, copies the evidence block or repeats the question is not an answer — status ``echo``,
the refusal text, the guard step says why and keeps the measurements — while a short extractive
answer quoting one evidence sentence passes. The metrics count an echo as not answered."""

from __future__ import annotations

import pytest

from rag_lab.evaluation import evaluate_pipeline
from rag_lab.llm.prompts import answer_prompt
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.pipeline import REFUSAL, Pipeline, PipelineConfig, StopReason
from rag_lab.pipeline.echo_guard import check_echo
from rag_lab.pipeline.interventions import Intervention
from rag_lab.pipeline.policies import EchoGuard
from rag_lab.records import EvalSet, Question
from rag_lab.testing import ScriptedResources, corpus_of

Q = "In which city was Ada Lovelace born?"
DOCS = {
    "ada": "Augusta Ada King, Countess of Lovelace, was an English mathematician and writer. She was born in London "
           "on 10 December 1815, the only legitimate child of the poet Lord Byron and his wife Anne Isabella Milbanke.",
    "engine": "The Analytical Engine was a proposed digital mechanical general-purpose computer designed by the English "
              "mathematician and computer pioneer Charles Babbage, first described in 1837 as the successor to his "
              "Difference Engine.",
    "babbage": "Charles Babbage was an English polymath, born in London, who originated the concept of a digital "
               "programmable computer; Lovelace wrote the first published algorithm for his engine in 1843.",
}
QUESTION = Question(qid="q1", text=Q, type="single", answer="London", gold_doc_ids=("ada",), min_hops=1)


def echo_of_prompt(request) -> str:
    """What a parrot answers: its whole prompt, system instructions first."""
    return "\n".join(m.content for m in request.messages)


def copy_of_evidence(request) -> str:
    """The evidence block, item by item, as the prompt shows it."""
    user = request.messages[-1].content
    return user.split("<<<EVIDENCE>>>\n", 1)[1].split("\n<<<END EVIDENCE>>>", 1)[0]


def instructions_only(request) -> str:
    return request.messages[0].content.split("] ", 1)[1] + " London [1]"


DRAFTS = {
    "echoed prompt": echo_of_prompt,
    "copied evidence": copy_of_evidence,
    "echoed instructions": instructions_only,
    "repeated question": lambda _: f"{Q} [1]",
}


def run(draft, **params):
    res = ScriptedResources(corpus_of(DOCS), {Q: ["ada", "engine", "babbage"]})
    backend = ScriptedBackend({"route": ['{"route": "SIMPLE"}'], "answer": [draft] if isinstance(draft, str) else draft})
    config = PipelineConfig().with_params({"crag.enabled": False, "citations.refusal_threshold": -1.0, **params})
    return evaluate_pipeline(Pipeline(config, res, backend), EvalSet([QUESTION]))


@pytest.mark.parametrize("name", list(DRAFTS))
def test_parroting_drafts_are_not_answers(name: str) -> None:
    out = run(DRAFTS[name])
    result, trace, row = out.results["q1"], out.traces["q1"], out.rows[0]
    assert result.status == "echo" and result.answer == REFUSAL and result.citations == []
    assert result.stop_reason == StopReason.INSUFFICIENT
    guard = next(s for s in trace.steps if s.kind == "guard")
    assert guard.detail["echo"]["flagged"] and guard.detail["echo"]["reasons"]
    assert guard.has(Intervention.ECHO) and guard.interventions[guard.codes.index(Intervention.ECHO)].startswith(
        "not an answer (echo): ")
    assert row["status"] == "echo" and row["quality_echo"] == 1.0 and row["quality_refused"] == 1.0
    assert row["quality_answer_containment"] == 0.0 and row["quality_answer_containment_strict"] == 0.0


@pytest.mark.parametrize("name", ["echoed prompt", "copied evidence"])
def test_without_the_guard_a_parrot_scores_leniently_but_not_strictly(name: str) -> None:
    row = run(DRAFTS[name], **{"echo.enabled": False}).rows[0]
    assert row["status"] == "answered" and row["quality_echo"] == 0.0
    assert row["quality_answer_containment"] == 1.0 and row["quality_answer_containment_strict"] == 0.0


@pytest.mark.parametrize("draft", ["London [1]", "She was born in London on 10 December 1815, the only legitimate child "
                                                "of the poet Lord Byron and his wife Anne Isabella Milbanke [1]."])
def test_a_short_extractive_answer_passes(draft: str) -> None:
    out = run(draft)
    result, row = out.results["q1"], out.rows[0]
    assert result.status == "answered" and result.citations == [1]
    guard = next(s for s in out.traces["q1"].steps if s.kind == "guard")
    assert guard.detail["echo"]["flagged"] is False
    assert row["quality_answer_containment"] == 1.0 and row["quality_answer_containment_strict"] == 1.0
    assert row["quality_echo"] == 0.0


def test_measurements_by_hand() -> None:
    system, user = answer_prompt(Q, [], "correct")
    policy = EchoGuard()
    evidence = ["one two three four five six seven eight nine ten", "eleven twelve thirteen fourteen"]
    copied = check_echo("one two three four five six seven eight and then some", system.content, evidence, Q, policy)
    assert copied.evidence_copied == pytest.approx(8 / 14) and not copied.flagged  # short: quoting is fine
    long_copy = " ".join(["one two three four five six seven eight nine ten"] * 6)
    assert check_echo(long_copy, system.content, evidence, Q, policy).flagged
    seven = "Answer the question using only the evidence. Cite every"  # 7 tokens of the instructions ("the" is dropped)
    assert check_echo(seven, system.content, [], Q, policy).instruction_run == 7
    assert not check_echo(seven, system.content, [], Q, policy).flagged
    assert check_echo(seven + " claim", system.content, [], Q, policy).flagged
    assert check_echo("see <<<EVIDENCE>>>", system.content, [], Q, policy).markers == ("<<<EVIDENCE>>>",)
    smol = check_echo("<<<Question>>\nWhat is the answer?\nThe answer is: London", system.content, [], Q, policy)
    assert smol.markers == ("<<<Question>>",) and smol.flagged  # a real SmolLM2-135M draft
    assert not check_echo("London <<< not a marker", system.content, [], Q, policy).flagged
    assert user.content.startswith("<<<QUESTION>>>")
