#!/usr/bin/env python
"""Real local models through ``--backend local`` (the ``local`` extra), two measurements:

``calls``  seconds per call: 4 controller decisions and 4 answers on distinct questions.
``hotpot`` the full pipeline on N real HotpotQA questions whose context is only their gold
           paragraphs (a HotpotQA file written to ``--out``; every question's gold paragraphs
           together form the corpus), per model: strict vs lenient answer containment, token F1,
           echo rate (drafts the echo guard rejected), refusals, the raw answer drafts, and seconds.

    source scripts/env.sh
    nice -n 10 python benchmarks/bench_local_model.py calls --model gemma3-270m
    nice -n 10 python benchmarks/bench_local_model.py hotpot --data ../shared/data/hotpotqa/tune.json \\
        --n 12 --models smollm2-135m gemma3-270m --out /tmp/bench_local

Answers are cached (the LLM response cache), so re-running after a change to the guard or the
metrics costs seconds; the printed seconds are those of the run (a cached run is fast — use
``--no-cache`` to time the model).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from rag_lab.llm.base import Completion, LLMBackend, LLMRequest, SamplingParams
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
COLUMNS = (("strict", "quality_answer_containment_strict"), ("lenient", "quality_answer_containment"),
           ("f1", "quality_f1"), ("echo", "quality_echo"), ("refused", "quality_refused"))


def calls(model: str) -> None:
    from rag_lab.llm.local.backend import LocalModelServer

    start = time.perf_counter()
    with LocalModelServer(model) as server:
        print(f"startup {time.perf_counter() - start:.2f} s ({server.model_path.name}, {server.chat.why})")
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
                      f"tokens {r.usage.prompt_tokens}+{r.usage.completion_tokens} {r.text[:70]!r}")
    for role, ts in seconds.items():
        print(f"{role}: mean {statistics.mean(ts):.2f} s/call (min {min(ts):.2f}, max {max(ts):.2f}, n={len(ts)})")


def write_gold_only(source: Path, n: int, out: Path) -> Path:
    """The first ``n`` examples of a HotpotQA file with each context cut to its supporting paragraphs."""
    examples = json.loads(source.read_text(encoding="utf-8"))[:n]
    for ex in examples:
        gold = {title for title, _ in ex["supporting_facts"]}
        ex["context"] = [c for c in ex["context"] if c[0] in gold]
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"hotpot_gold_only_{n}.json"
    path.write_text(json.dumps(examples), encoding="utf-8")
    return path


class TokenCap(LLMBackend):
    """``inner`` with every call's ``max_tokens`` capped at ``cap`` (the pipeline asks up to 512 for an
    answer; on a loaded two-core machine a 512-token ramble takes many minutes). Cached under the
    capped request, so capped and uncapped answers never mix."""

    def __init__(self, inner: LLMBackend, cap: int) -> None:
        super().__init__(inner.model)
        self.inner, self.cap, self.name = inner, cap, inner.name

    def cache_identity(self) -> tuple[str, str]:
        return self.inner.cache_identity()

    def _generate(self, request: LLMRequest) -> Completion:
        params = request.params.model_copy(update={"max_tokens": min(request.params.max_tokens, self.cap)})
        return self.inner._generate(request.model_copy(update={"params": params}))


def _progress(model: str, start: float):
    return lambda done, total: print(f"[{model}] {done}/{total} {time.perf_counter() - start:.0f} s", flush=True)


def hotpot(data: Path, n: int, models: list[str], out: Path, cache: bool, timeout_s: float, max_tokens: int,
           threads: int, limit: int | None = None) -> None:
    from rag_lab.evaluation import evaluate_pipeline, summarize
    from rag_lab.llm.cache import CachedBackend, ResponseCache
    from rag_lab.llm.local.backend import LocalModelServer
    from rag_lab.loaders import load_dataset
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

    dataset = load_dataset(write_gold_only(data, n, out))
    resources = CorpusResources(dataset.corpus)
    evalset = dataset.evalset.select(limit=limit)  # the corpus stays that of all n questions
    print(f"{dataset.name}: {len(evalset)} of {len(dataset.evalset)} questions, {len(dataset.corpus)} gold paragraphs")
    print(f"completion tokens per call capped at {max_tokens}" if max_tokens < 512 else "pipeline token limits")
    lines = [f"{'model':14s} " + " ".join(f"{name:>8s}" for name, _ in COLUMNS) + "  answered  seconds  stop reasons"]
    for model in models:
        start = time.perf_counter()
        # what open_backend("local", model=...) builds, with a per-call timeout for a loaded machine
        with LocalModelServer(model, n_threads=threads) as server:
            backend = server.backend(timeout_s=timeout_s)
            backend = CachedBackend(backend, ResponseCache()) if cache else backend
            backend = TokenCap(backend, max_tokens) if max_tokens < 512 else backend
            print(f"[{model}] {server.model_path.name}: {server.chat.why}", flush=True)
            run = evaluate_pipeline(Pipeline(PipelineConfig(), resources, backend), evalset,
                                    progress=_progress(model, start))
        seconds = time.perf_counter() - start
        summary = summarize(run.rows)["overall"]
        with (out / f"{model}.jsonl").open("w", encoding="utf-8") as fh:
            for row in run.rows:
                result = run.results[row["qid"]]
                fh.write(json.dumps({**row, "draft": result.draft, "answer": result.answer}) + "\n")
        for row in run.rows:
            result = run.results[row["qid"]]
            print(f"[{model}] {row['qid'][:8]} {row['status']:8s} strict={row['quality_answer_containment_strict']} "
                  f"lenient={row['quality_answer_containment']} gold={dataset.evalset[row['qid']].answer!r} "
                  f"draft={' '.join(result.draft.split())[:160]!r}")
        stops = ", ".join(f"{k}={v}" for k, v in summarize(run.rows)["stop_reasons"].items())
        answered = sum(r["status"] == "answered" for r in run.rows)
        lines.append(f"{model:14s} " + " ".join(f"{summary[c]:8.3f}" for _, c in COLUMNS)
                     + f"  {answered:8d}  {seconds:7.1f}  {stops}")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    c = sub.add_parser("calls")
    c.add_argument("--model", default=None, help="a GGUF path or packaged model name (default smollm2-135m)")
    h = sub.add_parser("hotpot")
    h.add_argument("--data", type=Path, required=True, help="a HotpotQA distractor file (JSON array)")
    h.add_argument("--n", type=int, default=12)
    h.add_argument("--limit", type=int, default=None, help="run only the first LIMIT of the n questions (same corpus)")
    h.add_argument("--models", nargs="+", default=["smollm2-135m", "gemma3-270m"])
    h.add_argument("--out", type=Path, required=True)
    h.add_argument("--no-cache", action="store_true")
    h.add_argument("--timeout", type=float, default=1800.0, help="seconds per call before it is retried")
    h.add_argument("--max-tokens", type=int, default=512,
                   help="cap every call's completion tokens (default 512: the pipeline's own limits)")
    h.add_argument("--threads", type=int, default=2,
                   help="llama.cpp threads (1 is far faster when other jobs compete for the cores)")
    args = parser.parse_args()
    if args.what == "calls":
        calls(args.model)
    else:
        hotpot(args.data, args.n, args.models, args.out, cache=not args.no_cache, timeout_s=args.timeout,
               max_tokens=args.max_tokens, threads=args.threads, limit=args.limit)


if __name__ == "__main__":
    main()
