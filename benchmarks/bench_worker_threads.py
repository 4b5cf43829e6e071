#!/usr/bin/env python
"""The quickstart sweep on empty caches, by executor: serial, and two worker processes with their native
thread pools shared out (one thread each on two cores, what ``--executor processes`` does now) or left as
they were before (nothing set: each worker's MKL starts one thread per core), and with only MKL's pool left
at two threads per worker (the pool found to matter), and with only OpenMP's left at two.

Each cell is a fresh ``rag-lab sweep`` process with its own empty cache directory, so every question's query
embedding is computed (the quickstart's 1,320 question runs), one after the other in one run:

    source scripts/env.sh
    python benchmarks/bench_worker_threads.py [--repeats 1] [--out benchmarks/results/bench_worker_threads.md]

Reports wall seconds and CPU seconds (user + system of the sweep and its workers) per cell, the tables'
equality, and the ratios to the serial run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import filecmp
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rag_lab.experiments.engine.worker import THREAD_POOL_VARIABLES

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ROOT / "sweeps" / "quickstart.yaml"

PROCESSES = ["--executor", "processes", "--workers", "2"]
CORES = str(os.cpu_count() or 1)
#: cell name -> (sweep arguments, environment changes, whether the workers' pools are sized)
CELLS = {
    "serial": ([], {}, True),
    "2 processes, pools shared out": (PROCESSES, {}, True),
    "2 processes, pools as before (nothing set)": (PROCESSES, {}, False),
    "2 processes, shared out but MKL_NUM_THREADS = cores": (PROCESSES, {"MKL_NUM_THREADS": CORES}, True),
    "2 processes, shared out but OMP_NUM_THREADS = cores": (PROCESSES, {"OMP_NUM_THREADS": CORES}, True),
}

#: The sweep with the workers' pools left unsized (the executor as it was before it shared the cores out).
UNSIZED = ("import sys; import rag_lab.experiments.engine.executors as e; "
           "e.threads_per_worker = lambda workers: None; from rag_lab.cli import main; sys.exit(main(sys.argv[1:]))")


def run_cell(args: list[str], env: dict[str, str], sized: bool, work: Path) -> tuple[float, float, Path]:
    """One sweep on an empty cache: (wall s, CPU s of it and its children, its table)."""
    table = work / "table.csv"
    environ = {**os.environ, **env, "RAG_LAB_CACHE": str(work / "cache")}
    for name in THREAD_POOL_VARIABLES:
        if name not in env:
            environ.pop(name, None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, "-m", "rag_lab.cli"] if sized else [sys.executable, "-c", UNSIZED]
    subprocess.run([*command, "sweep", str(SWEEP), "--out", str(work / "run"), "--quiet",
                    "--table", str(table), *args], env=environ, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "bench_worker_threads.md")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    rows, tables = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            for name, (sweep_args, env, sized) in CELLS.items():
                work = Path(tmp) / f"{repeat}-{len(rows)}"
                wall, cpu, table = run_cell(sweep_args, env, sized, work)
                rows.append((repeat, name, wall, cpu))
                tables.append(table)
                print(f"repeat {repeat}: {name}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
        same = all(filecmp.cmp(tables[0], t, shallow=False) for t in tables[1:])
    serial = {r: w for r, n, w, _ in rows if n == "serial"}
    lines = ["# The quickstart sweep on empty caches, by executor (`python benchmarks/bench_worker_threads.py`)", "",
             f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC · {platform.platform()} · {os.cpu_count()} cores · "
             f"load average before: {load_before:.2f}", "",
             "| repeat | executor | wall s | CPU s | wall / serial |", "|---:|---|---:|---:|---:|"]
    lines += [f"| {r} | {n} | {w:.1f} | {c:.1f} | {w / serial[r]:.2f}× |" for r, n, w, c in rows]
    lines += ["", f"Every cell's table identical to the first: {'yes' if same else 'NO'}."]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if not same:
        raise SystemExit("the executors' tables differ")


if __name__ == "__main__":
    main()
