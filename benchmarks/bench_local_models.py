#!/usr/bin/env python
"""The packaged local models side by side on the same real prompts: prompt and generation tokens/s and
seconds per question, by model, llama.cpp threads and the server's prompt cache.

The prompts are the lab's own: for each of the first ``--questions`` HotpotQA sample questions, the
controller prompt and the answer prompt over the question's gold paragraphs (what a question that
answers at round 1 sends). Each prompt is sent straight to the server (no response cache) twice:
``max_tokens=1`` (the time is the prompt's evaluation: prompt tokens/s) and ``max_tokens=--tokens`` at
temperature 0 (the extra tokens over the extra time: generation tokens/s). Seconds per question is the
sum of the second calls. Each call opens with its own nonce, so no call reuses the KV of the one before
(llama.cpp keeps the previous prompt's prefix even without the prompt cache; without the nonce the second
call skips the prompt and the rates mean nothing). The prompt cache (``--cache on``) then saves nothing here:
it is off by default for its memory (rag_lab.llm.local.backend.PROMPT_CACHE_BYTES).

    source scripts/env.sh
    python benchmarks/bench_local_models.py [--models qwen2.5-coder-0.5b qwen2.5-coder-1.5b] [--threads 1 2]
        [--questions 2] [--tokens 48] [--out benchmarks/results/bench_local_models.json]

Run it on an idle machine (llama.cpp's threads spin: a busy neighbour halves what two threads give).
"""

from __future__ import annotations

import argparse
import json
import time
import urllib.request
from pathlib import Path

from rag_lab.llm.local.backend import LocalModelServer, llama_cpp_version
from rag_lab.llm.prompts import EvidenceItem, answer_prompt, controller_prompt
from rag_lab.loaders import load_dataset


def lab_prompts(n_questions: int) -> list[list[list[dict[str, str]]]]:
    """Per question, its controller and answer prompts over the gold paragraphs (chat messages)."""
    dataset = load_dataset("hotpotqa_sample")
    out = []
    for question in dataset.evalset.questions[:n_questions]:
        docs = [dataset.corpus[d] for d in sorted(question.gold_doc_ids)]
        evidence = [EvidenceItem(i, d.title, d.text) for i, d in enumerate(docs, start=1)]
        prompts = [controller_prompt(question.text, evidence, [question.text], 3, False),
                   answer_prompt(question.text, evidence, "correct")]
        out.append([[m.model_dump() for m in messages] for messages in prompts])
    return out


def call(server: LocalModelServer, messages: list[dict[str, str]], max_tokens: int) -> tuple[float, dict[str, int]]:
    body = json.dumps({"model": server.alias, "messages": messages, "max_tokens": max_tokens,
                       "temperature": 0}).encode()
    request = urllib.request.Request(server.base_url + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=1800) as response:
        usage = json.load(response)["usage"]
    return time.perf_counter() - started, usage


def _fresh(messages: list[dict[str, str]], nonce: str) -> list[dict[str, str]]:
    """``messages`` with ``[run <nonce>]`` opening the first one: no prefix shared with the call before."""
    first = {**messages[0], "content": f"[run {nonce}] {messages[0]['content']}"}
    return [first, *messages[1:]]


def measure(model: str, threads: int, prompt_cache: bool, questions: list, tokens: int) -> dict[str, float]:
    prompt_rates, gen_rates, per_question = [], [], []
    with LocalModelServer(model, n_threads=threads, prompt_cache=prompt_cache, n_ctx=4096) as server:
        call(server, [{"role": "user", "content": "Hi"}], 2)  # load and warm up
        for prompts in questions:
            seconds = 0.0
            for messages in prompts:
                # llama.cpp reuses the KV of the prefix a prompt shares with the one before: each call opens with
                # its own nonce so that both evaluate the whole prompt (what a new question's first call costs)
                t1, u1 = call(server, _fresh(messages, "a"), 1)
                tn, un = call(server, _fresh(messages, "b"), tokens)
                seconds += tn
                prompt_rates.append(u1["prompt_tokens"] / t1)
                if un["completion_tokens"] > 1 and tn > t1:
                    gen_rates.append((un["completion_tokens"] - 1) / (tn - t1))
            per_question.append(seconds)
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    return {"model": model, "threads": threads, "prompt_cache": prompt_cache,
            "prompt_tokens_per_s": round(mean(prompt_rates), 2), "generation_tokens_per_s": round(mean(gen_rates), 2),
            "seconds_per_question": round(mean(per_question), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--questions", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--cache", choices=["off", "on", "both"], default="both")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    questions = lab_prompts(args.questions)
    caches = {"off": [False], "on": [True], "both": [False, True]}[args.cache]
    rows = []
    for model in args.models:
        for threads in args.threads:
            for cache in caches:
                row = measure(model, threads, cache, questions, args.tokens)
                rows.append(row)
                print(json.dumps(row), flush=True)
    result = {"llama_cpp": llama_cpp_version(), "questions": args.questions, "tokens": args.tokens, "rows": rows}
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
