#!/usr/bin/env python
"""PyTorch's intra-op threads for the packaged MiniLM on two cores: encoding throughput with
``torch.set_num_threads`` 1 and 2, on an idle machine and next to CPU-bound neighbours.

llama.cpp's threads were measured to collapse next to busy neighbours (``bench_local_threads.py``:
1 thread 6.6-8.5x faster than 2). PyTorch's OpenMP pool also waits for its slowest thread at every
operator, so the same question applies to embedding: is the thread count that is fastest on an idle
machine much slower on a busy one? Each (condition, threads) cell runs in a fresh child process
(the thread count is fixed before torch does any work) on the same 256 world chunks, cache bypassed:

    source scripts/env.sh
    python benchmarks/bench_embedding_threads.py [--busy 2] [--texts 256] [--repeats 3]

Reports chunks/s (median over repeats, after one warm-up batch) and the ratio 1 thread / 2 threads in
each condition.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository's benchmarks package
from benchmarks import busy_neighbours  # noqa: E402

CHILD = r"""
import json, statistics, sys, time
import torch
torch.set_num_threads(int(sys.argv[1]))
from rag_lab.embedding import SentenceTransformerEmbedder
texts = json.loads(sys.stdin.read())
model = SentenceTransformerEmbedder()
model.embed(texts[:32])  # warm-up: load and first-batch costs out of the timing
rates = []
for _ in range(int(sys.argv[2])):
    started = time.perf_counter()
    model.embed(texts)
    rates.append(len(texts) / (time.perf_counter() - started))
print(json.dumps({"threads": torch.get_num_threads(), "rate": statistics.median(rates)}))
"""


def sample_texts(n: int) -> list[str]:
    from rag_lab.chunking import chunk_corpus
    from rag_lab.loaders.world import load_world

    world = Path(__file__).resolve().parents[1] / "data" / "world"
    chunks = chunk_corpus(load_world(world).corpus)
    return [c.text for c in chunks[:n]]


def measure(threads: int, texts: list[str], repeats: int) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, str(threads), str(repeats)], input=json.dumps(texts),
                         capture_output=True, text=True, check=True)
    row = json.loads(out.stdout.strip().splitlines()[-1])
    assert row["threads"] == threads, row
    return row["rate"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--busy", type=int, default=2, help="busy-loop processes for the busy condition")
    parser.add_argument("--texts", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    texts = sample_texts(args.texts)
    for condition in ("idle", "busy"):
        with busy_neighbours(args.busy if condition == "busy" else 0) as busy:
            rates = {t: measure(t, texts, args.repeats) for t in (1, 2)}
        print(f"{condition:5s} ({busy} busy neighbours, {len(texts)} chunks): "
              f"1 thread {rates[1]:6.1f} chunks/s, 2 threads {rates[2]:6.1f} chunks/s, "
              f"1 thread / 2 threads = {rates[1] / rates[2]:.2f}x", flush=True)


if __name__ == "__main__":
    main()
