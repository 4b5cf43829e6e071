#!/usr/bin/env python
"""What the portable llama.cpp build costs: tokens/s of the installed build (x86-64-v3: AVX2, FMA, F16C,
no AVX-512, no AMX — scripts/install.sh) against a native build (``-DGGML_NATIVE=ON``: everything this
CPU has) of the same llama-cpp-python version, side by side in one run, on the packaged SmolLM2-135M.

    source scripts/env.sh
    python benchmarks/bench_llama_build.py [--repeats 5] [--prompt-tokens 256] [--tokens 64] [--threads 1]

The native build is compiled once (several minutes) into ``$RAG_LAB_CACHE/bench/llama-native-<version>``
with ``pip install --target``, and reused by later runs; it is never installed into the venv, and a
child process loads it through PYTHONPATH. Each repeat runs both builds in turn (portable, native,
portable, native …) in fresh processes, with the same prompt, temperature 0 and ``n_threads``; it reports
prompt processing and generation tokens/s (medians) and the ratio native / portable, with what each
build says it was compiled with (``llama_print_system_info()``) and whether rag_lab.native_build calls
it portable. Results go to ``benchmarks/results/bench_llama_build.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rag_lab.llm.local.backend import packaged_model_path
from rag_lab.paths import cache_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository's benchmarks package
from benchmarks import machine  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
NATIVE_CMAKE_ARGS = "-DGGML_NATIVE=ON -DLLAVA_BUILD=OFF -DGGML_CCACHE=OFF"

#: Runs in the child: one build, one measurement, JSON on stdout.
CHILD = r"""
import json, sys, time
import llama_cpp
from rag_lab import native_build
model, prompt_tokens, tokens, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
llm = llama_cpp.Llama(model_path=model, n_ctx=1024, n_threads=threads, n_threads_batch=threads, verbose=False)
words = "The history of Paris begins with a Celtic tribe on an island in the Seine, and the city grew "
ids = llm.tokenize((words * 40).encode())[:prompt_tokens]
gen = llm.generate(ids, temp=0.0, reset=True)
t0 = time.perf_counter(); next(gen); t1 = time.perf_counter()
for _ in range(tokens - 1):
    next(gen)
t2 = time.perf_counter()
report = native_build.check_llama_cpp()
print(json.dumps({"prompt_tps": len(ids) / (t1 - t0), "gen_tps": (tokens - 1) / (t2 - t1),
                  "system_info": native_build.llama_system_info().strip(), "portable": report.portable,
                  "problems": list(report.problems), "file": llama_cpp.__file__}))
"""


def installed_version() -> str:
    import llama_cpp

    return llama_cpp.__version__


def native_build(version: str) -> Path:
    """The native build's --target folder (compiled on first use)."""
    target = cache_dir() / "bench" / f"llama-native-{version}"
    if (target / "llama_cpp" / "__init__.py").is_file():
        return target
    env = {**os.environ, "CMAKE_ARGS": NATIVE_CMAKE_ARGS, "CFLAGS": "-frecord-gcc-switches",
           "CXXFLAGS": "-frecord-gcc-switches"}
    print(f"bench_llama_build: compiling llama-cpp-python {version} with native flags into {target} "
          "(several minutes)", file=sys.stderr)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-cache-dir", "--target",
                    str(target), f"llama-cpp-python=={version}"], env=env, check=True)
    print(f"bench_llama_build: native build took {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return target


def measure(pythonpath: Path | None, args: argparse.Namespace) -> dict:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run([sys.executable, "-c", CHILD, str(packaged_model_path()), str(args.prompt_tokens),
                           str(args.tokens), str(args.threads)], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--prompt-tokens", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    version = installed_version()
    native = native_build(version)
    runs: dict[str, list[dict]] = {"portable": [], "native": []}
    for _ in range(args.repeats):
        runs["portable"].append(measure(None, args))
        runs["native"].append(measure(native, args))
    summary = {
        name: {"prompt_tps": statistics.median(r["prompt_tps"] for r in rs),
               "gen_tps": statistics.median(r["gen_tps"] for r in rs),
               "system_info": rs[0]["system_info"], "portable": rs[0]["portable"], "problems": rs[0]["problems"]}
        for name, rs in runs.items()
    }
    ratio = {k: summary["native"][k] / summary["portable"][k] for k in ("prompt_tps", "gen_tps")}
    head = machine()
    head["cpu"] = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                        if line.startswith("model name")), "unknown")
    out = {"machine": head, "version": version, "args": vars(args), "summary": summary, "ratio_native_over_portable": ratio,
           "runs": runs}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_llama_build.json").write_text(json.dumps(out, indent=2) + "\n")
    lines = [
        "# llama.cpp: portable build vs native build (benchmarks/bench_llama_build.py)",
        "",
        f"Machine: {head['cpu']}, {head['cores']} cores, load {head['load_avg_1_5_15']} at the end. "
        f"llama-cpp-python {version}, SmolLM2-135M-Instruct Q4_1, {args.threads} thread(s), "
        f"{args.prompt_tokens}-token prompt, {args.tokens} generated tokens, temperature 0; medians of "
        f"{args.repeats} alternating runs, each in a fresh process.",
        "",
        "| build | prompt tokens/s | generated tokens/s | portable (rag_lab.native_build) |",
        "|---|---|---|---|",
    ]
    for name, s in summary.items():
        lines.append(f"| {name} | {s['prompt_tps']:.1f} | {s['gen_tps']:.1f} | {'yes' if s['portable'] else 'no'} |")
    lines += [
        "",
        f"Native / portable: prompt processing **{ratio['prompt_tps']:.2f}×**, generation **{ratio['gen_tps']:.2f}×**.",
        "",
        *(f"- {name}: `{s['system_info']}`" + (f" — {'; '.join(s['problems'])}" if s["problems"] else "")
          for name, s in summary.items()),
        "",
    ]
    (RESULTS / "bench_llama_build.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
