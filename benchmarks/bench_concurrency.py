"""Concurrency: a sweep against a remote-API stand-in, 1 thread worker vs 8, same questions.

    python -m benchmarks --sections concurrency [--quick]

The stand-in is the lab server in its own process (``rag-lab serve --latency 0.5 --max-concurrency 8``,
the simulator behind an OpenAI-compatible endpoint that takes 0.5 s per call and answers 429 past 8
calls at once). The sweep goes through the real ``openai`` client with the response cache off, once
with ``--workers 1`` and once with ``--workers 8 --executor threads``; throughput is question runs per
second of wall time, and the two ``param_*``/``quality_*``/``cost_*`` tables must be identical.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pandas as pd

from benchmarks import Measure, Ratio, Section
from rag_lab.experiments import run_sweep

LATENCY = "0.5"
LIMIT = 8


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(latency: str, limit: int, log: Path) -> tuple[subprocess.Popen, str, str]:
    """``rag-lab serve`` in a child process, its output in ``log``; (process, base URL, model name) once it answers."""
    port = _free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "rag_lab.cli", "serve", "--port", str(port), "--latency",
                                 latency, "--max-concurrency", str(limit)], stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ})
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"rag-lab serve exited with {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as resp:
                return proc, url, json.load(resp)["data"][0]["id"]
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("rag-lab serve did not answer within 120 s")


def deterministic(table: pd.DataFrame) -> pd.DataFrame:
    cols = ["candidate_id", "seed", *[c for c in table.columns if c.startswith(("param_", "quality_", "cost_"))]]
    return table[cols].reset_index(drop=True)


def run(quick: bool, work: Path) -> Section:
    section = Section("concurrency")
    log = work / "concurrency_server.log"
    proc, url, model = start_server(LATENCY, LIMIT, log)
    spec = {"name": "bench-concurrency", "dataset": "world", "split": "test",
            "types": ["single", "bridge", "comparison", "unanswerable"], "per_type": 1 if quick else 4,
            "grid": {"round_cap.max_rounds": [1, 2]},
            "backend": {"kind": "openai", "model": model, "base_url": url, "cache": False}}
    try:
        seconds, tables, pairs = {}, {}, 0
        for workers in (1, 8):
            with tempfile.TemporaryDirectory(dir=work) as tmp:
                start = time.perf_counter()
                result = run_sweep(spec, tmp, workers=workers, executor="threads", progress="quiet")
                seconds[workers] = time.perf_counter() - start
                if proc.poll() is not None:
                    raise RuntimeError(f"rag-lab serve died during the sweep: {log.read_text(errors='replace')[-2000:]}")
                tables[workers] = deterministic(result.table)
                pairs = result.computed
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    same = tables[1].equals(tables[8])
    section.ratios.append(Ratio(f"sweep throughput, 8 vs 1 thread workers ({pairs} question runs)", "1 worker",
                                "8 workers", pairs / seconds[1], pairs / seconds[8], "runs/s", target=6.0,
                                note=f"lab server: latency {LATENCY} s, max concurrency {LIMIT}"))
    section.measures.append(Measure("param_/quality_/cost_ tables identical, 1 vs 8 workers", float(same), "bool",
                                    at_least=1.0))
    section.notes.append(f"lab server in its own process, latency {LATENCY} s per call, --max-concurrency {LIMIT}; "
                         f"wall: 1 worker {seconds[1]:.1f} s, 8 workers {seconds[8]:.1f} s for {pairs} question runs")
    return section
