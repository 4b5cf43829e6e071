"""A real local model (llama-cpp-python's server with the packaged GGUF) through the
OpenAI-compatible backend: four calls, so a few seconds to a minute on two cores. Whatever the tiny
model says, the call must end in a visible outcome — valid, repaired, or the caller's fallback
with its reason — never in a silent None."""

from __future__ import annotations

import time

import pytest

from rag_lab.llm.base import LLMRequest, SamplingParams
from rag_lab.llm.ledger import usage
from rag_lab.llm.local import LocalModelServer, llama_cpp_available
from rag_lab.llm.prompts import EvidenceItem, answer_prompt, controller_prompt
from rag_lab.llm.schemas import ControllerDecision

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(not llama_cpp_available(),
                       reason="llama-cpp-python[server] is not installed (install the extra: pip install -e '.[local]')"),
]

FALLBACK = ControllerDecision(action="insufficient", reason="fallback: the model's decision was unusable")
EVIDENCE = [
    EvidenceItem(1, "Ada Lovelace", "Ada Lovelace was born in London in 1815 and worked with Charles Babbage."),
    EvidenceItem(2, "Analytical Engine", "The Analytical Engine was a mechanical computer designed by Babbage."),
]
QUESTION = "In which city was Ada Lovelace born?"


@pytest.fixture(scope="module")
def server():
    with LocalModelServer() as running:
        yield running
    assert running.port is None  # stopped cleanly


def controller(max_tokens: int) -> LLMRequest:
    messages = controller_prompt(QUESTION, EVIDENCE, [QUESTION], max_rounds=3, disclose_budget=False)
    return LLMRequest(role="controller", messages=messages, response_schema=ControllerDecision,
                      params=SamplingParams(max_tokens=max_tokens))


def test_local_model_decisions_and_answers(server: LocalModelServer) -> None:
    llm = server.backend()
    requests = [
        controller(max_tokens=96),
        controller(max_tokens=4),  # cut off mid-object: a real invalid output
        LLMRequest(role="answer", messages=answer_prompt(QUESTION, EVIDENCE, "correct"), params=SamplingParams(max_tokens=48)),
        LLMRequest(role="answer", messages=answer_prompt("Who designed the Analytical Engine?", EVIDENCE, "correct"),
                   params=SamplingParams(max_tokens=48)),
    ]
    with usage() as ledger:
        timed = []
        for request in requests:
            start = time.perf_counter()
            timed.append((llm.complete(request, fallback=FALLBACK if request.response_schema else None),
                          time.perf_counter() - start))
    for response, seconds in timed:
        print(f"{response.role}: {seconds:.2f} s, outcome={response.outcome}, reason={response.reason!r}, "
              f"usage={response.usage.prompt_tokens}+{response.usage.completion_tokens}, text={response.text[:80]!r}")
        assert response.backend == "openai" and response.model == server.alias
        assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    decisions = [r for r, _ in timed if r.role == "controller"]
    for d in decisions:
        assert d.outcome in {"valid", "repaired", "fallback"}
        assert isinstance(d.parsed, ControllerDecision)
        if d.outcome == "fallback":
            assert d.parsed == FALLBACK and d.reason
    truncated = decisions[1]
    assert (truncated.outcome, truncated.parsed) == ("fallback", FALLBACK)
    assert truncated.reason.startswith("invalid JSON"), truncated.reason
    assert all(r.outcome == "text" for r, _ in timed if r.role == "answer")
    assert [(rec.role, rec.outcome) for rec in ledger.records] == [(r.role, r.outcome) for r, _ in timed]
    assert llm.stats_dict()["errors"] == 0
