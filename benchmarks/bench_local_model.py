#!/usr/bin/env python
"""Seconds per call of the local model (the ``local`` extra): 4 controller decisions and 4 answers
on distinct questions, through LocalModelServer and the OpenAI-compatible backend.

    source scripts/env.sh && python benchmarks/bench_local_model.py
"""

import statistics
import time

from rag_lab.llm.base import LLMRequest, SamplingParams
from rag_lab.llm.local import LocalModelServer
from rag_lab.llm.prompts import EvidenceItem, answer_prompt, controller_prompt
from rag_lab.llm.schemas import ControllerDecision

FALLBACK = ControllerDecision(action="insufficient", reason="fallback")
EVIDENCE = [
    EvidenceItem(1, "Ada Lovelace", "Ada Lovelace was born in London in 1815 and worked with Charles Babbage."),
    EvidenceItem(2, "Analytical Engine", "The Analytical Engine was a mechanical computer designed by Babbage."),
]
QUESTIONS = [
    "In which city was Ada Lovelace born?",
    "Who designed the Analytical Engine?",
    "What year did Babbage die?",
    "Which city was the designer of the Analytical Engine born in?",
]


def main() -> None:
    start = time.perf_counter()
    with LocalModelServer() as server:
        print(f"startup {time.perf_counter() - start:.2f} s ({server.model_path.name})")
        llm = server.backend()
        seconds: dict[str, list[float]] = {"controller": [], "answer": []}
        for q in QUESTIONS:
            decide = LLMRequest(role="controller", messages=controller_prompt(q, EVIDENCE, [q], 3, False),
                                response_schema=ControllerDecision, params=SamplingParams(max_tokens=96))
            answer = LLMRequest(role="answer", messages=answer_prompt(q, EVIDENCE, "correct"),
                                params=SamplingParams(max_tokens=64))
            for request in (decide, answer):
                r = llm.complete(request, fallback=FALLBACK if request.response_schema else None)
                seconds[r.role].append(r.latency_s)
                print(f"{r.role:10s} {r.latency_s:5.2f} s {r.outcome:8s} "
                      f"tokens {r.usage.prompt_tokens}+{r.usage.completion_tokens} {r.reason[:60]}")
    for role, ts in seconds.items():
        print(f"{role}: mean {statistics.mean(ts):.2f} s/call (min {min(ts):.2f}, max {max(ts):.2f}, n={len(ts)})")


if __name__ == "__main__":
    main()
