#!/usr/bin/env python
"""llama-cpp-python's server threads on two cores: generation speed with ``n_threads`` 1 and 2, on an
idle machine and next to CPU-bound neighbours (a notebook kernel, a sweep, another engineer's tests).

llama.cpp's worker threads spin while they wait for each other; when other processes hold the cores,
a spinning thread that has been descheduled stalls the whole token. So the thread count that is
fastest on an idle machine can be several times slower on a busy one. This measures both, side by
side in one run, for the packaged SmolLM2-135M (the ``local`` extra):

    source scripts/env.sh
    python benchmarks/bench_local_threads.py [--busy 2] [--tokens 64] [--repeats 3]

``--busy N`` starts N busy-loop processes (one per core is a fully loaded machine) for the "busy"
condition. Reports tokens/s (median over repeats, temperature 0, fixed prompt, cache bypassed: the
server is called directly) and the ratio of 1 thread to 2 threads in each condition.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import urllib.request
from pathlib import Path

from rag_lab.llm.local.backend import LocalModelServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository's benchmarks package
from benchmarks import busy_neighbours  # noqa: E402

PROMPT = "Write three sentences about the history of Paris."


def _tokens_per_second(server: LocalModelServer, tokens: int) -> float:
    body = json.dumps({"model": server.alias, "messages": [{"role": "user", "content": PROMPT}],
                       "max_tokens": tokens, "temperature": 0}).encode()
    request = urllib.request.Request(server.base_url + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=900) as response:
        out = json.load(response)
    return out["usage"]["completion_tokens"] / (time.perf_counter() - started)


def measure(threads: int, tokens: int, repeats: int) -> float:
    with LocalModelServer(n_threads=threads) as server:
        _tokens_per_second(server, 8)  # warm-up: load and first-token costs out of the timing
        return statistics.median(_tokens_per_second(server, tokens) for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--busy", type=int, default=2, help="busy-loop processes for the busy condition")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = {}
    for condition in ("idle", "busy"):
        with busy_neighbours(args.busy if condition == "busy" else 0) as busy:
            rows[condition] = {t: measure(t, args.tokens, args.repeats) for t in (1, 2)}
        one, two = rows[condition][1], rows[condition][2]
        print(f"{condition:5s} ({busy} busy neighbours): n_threads=1 {one:6.1f} tok/s, n_threads=2 {two:6.1f} tok/s, "
              f"1 thread / 2 threads = {one / two:.2f}x", flush=True)


if __name__ == "__main__":
    main()
