"""Calls per second of the simulated LLM on one core, over a realistic mix of prompts.

For every question of a dataset (the shipped world by default) it builds, with BM25 evidence, the
prompts one pipeline run sends: route, controller (round 1), answer, judge (with evidence) and three
grades. Prompts are built before the clock starts; each call goes through ``complete()``
(generation, token counting, validation, ledger). Three passes:

* ``cold``  — a fresh backend with an empty embedding cache on disk (every sentence embedded);
* ``disk``  — a fresh backend (empty in-process LRU) reading the now-warm on-disk cache, which is
  what a new process sees on a second run;
* ``warm``  — the same backend again (every vector in its LRU): the steady state of a sweep.

Run on one core::

    source scripts/env.sh
    taskset -c 0 python benchmarks/bench_simulator.py            # add --profile sloppy etc.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import torch

from rag_lab.chunking import chunk_corpus
from rag_lab.embedding import CachedEmbedder, EmbeddingCache, SentenceTransformerEmbedder
from rag_lab.index import make_index
from rag_lab.llm import prompts
from rag_lab.llm.base import LLMRequest
from rag_lab.llm.schemas import ControllerDecision, JudgeVerdict, RelevanceGrade, RouteDecision
from rag_lab.llm.sim.similarity import Similarity
from rag_lab.llm.sim.tokens import TokenCounter
from rag_lab.llm.simulator import SimulatedBackend
from rag_lab.loaders import load_dataset


def build_requests(dataset_name: str, limit: int | None) -> list[LLMRequest]:
    """The requests of one pass, built from the dataset's questions and BM25 evidence."""
    dataset = load_dataset(dataset_name)
    chunks = chunk_corpus(dataset.corpus)
    by_id = {c.chunk_id: c for c in chunks}
    index = make_index("bm25")
    index.build(chunks)
    questions = list(dataset.evalset)[:limit]
    hits = index.search([q.text for q in questions], 8)
    requests = []
    for q, found in zip(questions, hits, strict=True):
        ev = [prompts.EvidenceItem(i, by_id[c].title, by_id[c].text) for i, (c, _) in enumerate(found, start=1)]
        requests.append(LLMRequest(role="route", messages=prompts.route_prompt(q.text), response_schema=RouteDecision))
        requests.append(LLMRequest(role="controller", response_schema=ControllerDecision,
                                   messages=prompts.controller_prompt(q.text, ev, [q.text], 3, True)))
        requests.append(LLMRequest(role="answer", messages=prompts.answer_prompt(q.text, ev[:5], "correct")))
        requests.append(LLMRequest(role="judge", response_schema=JudgeVerdict,
                                   messages=prompts.judge_prompt(q.text, "a draft answer [1]", ev[:5])))
        for item in ev[:3]:
            requests.append(LLMRequest(role="grade", response_schema=RelevanceGrade,
                                       messages=prompts.grade_prompt(q.text, prompts.EvidenceItem(1, item.title,
                                                                                                   item.text))))
    return requests


def timed(backend: SimulatedBackend, requests: list[LLMRequest]) -> float:
    start = time.perf_counter()
    for r in requests:
        backend.complete(r)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="world", help="shipped dataset name or path (default world)")
    parser.add_argument("--profile", default="typical", help="simulator profile (default typical)")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N questions")
    args = parser.parse_args()

    torch.set_num_threads(1)
    requests = build_requests(args.dataset, args.limit)
    model = SentenceTransformerEmbedder()
    model.embed(["warm up"])  # load the model outside the timings
    tokens = TokenCounter()
    tokens.count("warm up")
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(Path(tmp) / "embeddings.sqlite")
        cold_backend = SimulatedBackend(args.profile, similarity=Similarity(CachedEmbedder(model, cache)),
                                        tokens=tokens)
        cold = timed(cold_backend, requests)
        fresh = SimulatedBackend(args.profile, similarity=Similarity(CachedEmbedder(model, cache)), tokens=tokens)
        disk = timed(fresh, requests)
        warm = timed(fresh, requests)
        embedded = cold_backend.similarity.embedded

    n = len(requests)
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else "?"
    print(f"{n} calls ({args.dataset}, profile {args.profile}), torch threads 1, CPU affinity {sorted(cpus)}")
    print(f"cold (empty embedding cache, {embedded} texts embedded): {cold:7.2f} s  {n / cold:8.0f} calls/s")
    print(f"disk (fresh process, warm on-disk cache):          {disk:7.2f} s  {n / disk:8.0f} calls/s")
    print(f"warm (in-process LRU):                             {warm:7.2f} s  {n / warm:8.0f} calls/s")


if __name__ == "__main__":
    main()
