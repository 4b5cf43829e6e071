"""Simulate, then verify, once for real (issue 12): on a local GGUF model, for the world and the HotpotQA
sample,

1. a real ``rag-lab eval`` on a few questions (``--max-tokens`` caps the tiny model's rambling answers);
2. ``rag-lab calibrate`` a simulator profile from its traces (base ``typical``);
3. ``rag-lab sweep`` the six headline policies (the quickstart grid) on the calibrated simulator, same questions;
4. ``rag-lab verify`` the sweep's best candidates on the local model, same questions;

and writes a markdown table (``benchmarks/results/bench_verify.md``) and the raw numbers (``.json``) with the
wall time of every step. Runs the ``rag-lab`` commands in this process, exactly as a user would type them
(each command is printed in the report). Tiny models on two shared cores are slow: run it with ``nice``::

    nice -n 5 python benchmarks/bench_verify.py --questions 12 --top 4 --max-tokens 96

Whatever the rank agreement comes out as is reported as measured.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"

#: The datasets of the demonstration and their question selection (one simulated reader reads both).
DATASETS = {
    "world": {"split": "test", "types": ["single", "bridge", "comparison", "alias"]},
    "hotpotqa_sample": {"split": None, "types": ["bridge", "comparison"]},
}
#: The quickstart sweep's grid: the six headline policies, one factor at a time around round cap 3.
QUICKSTART = REPO / "sweeps" / "quickstart.yaml"


def rag_lab(args: list[str], log: list[dict[str, Any]]) -> tuple[dict[str, Any], float]:
    """Run one ``rag-lab`` command in this process with ``--json``; its output and wall seconds."""
    from rag_lab.cli import main

    command = ["rag-lab", *args]
    print("$ " + shlex.join(command), flush=True)
    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = main([*args, "--json"])
    seconds = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"{shlex.join(command)} failed with exit code {code}")
    log.append({"command": shlex.join(command), "seconds": round(seconds, 1)})
    print(f"  done in {seconds:.0f} s", flush=True)
    return json.loads(out.getvalue()), seconds


def run_dataset(name: str, work: Path, questions: int, top: int, real: list[str], settings: list[str],
                log: list[dict[str, Any]]) -> dict[str, Any]:
    spec = DATASETS[name]
    per_type = max(1, questions // len(spec["types"]))
    folder = work / name
    folder.mkdir(parents=True, exist_ok=True)
    select = (["--split", spec["split"]] if spec["split"] else []) + ["--types", *spec["types"], "--per-type", str(per_type)]
    times: dict[str, float] = {}

    sets = [a for item in ["round_cap.max_rounds=3", *settings] for a in ("--set", item)]
    evaluated, times["eval (real)"] = rag_lab(["eval", "--dataset", name, *select, *sets, *real,
                                               "--out", str(folder / "real_eval")], log)
    profile = folder / "calibrated.yaml"
    calibrated, times["calibrate"] = rag_lab(["calibrate", "--from", str(folder / "real_eval"), "--out", str(profile),
                                              "--base", "typical",
                                              "--name", f"{name}-calibrated"], log)
    sweep = yaml.safe_load(QUICKSTART.read_text())
    from rag_lab.cli.pipeline_commands import parse_settings

    sweep.update({"name": f"verify_{name}", "dataset": name, "split": spec["split"], "types": spec["types"],
                  "per_type": per_type, "base": {**sweep["base"], **parse_settings(settings)},
                  "backend": {"kind": "sim", "profile": str(profile)}})
    sweep_file = folder / "sweep.yaml"
    sweep_file.write_text(yaml.safe_dump(sweep, sort_keys=False))
    swept, times["sweep (calibrated sim)"] = rag_lab(["sweep", str(sweep_file), "--out", str(folder / "sim"),
                                                      "--quiet", "--force"], log)
    verified, times["verify (real)"] = rag_lab(["verify", str(folder / "sim"), *real, "--top", str(top), "--quiet"], log)
    rag_lab(["report", str(folder / "sim"), "--out", str(folder / "sim" / "report.html")], log)
    return {"dataset": name, "questions": evaluated["questions"],
            "eval": {"overall": evaluated["overall"], "wall_seconds": evaluated["wall_seconds"]},
            "calibration": {"knobs": calibrated["knobs"], "unidentified": calibrated["unidentified"],
                            "notes": calibrated["notes"]},
            "sweep": {"runs": swept["runs"], "wall_seconds": swept["wall_seconds"]},
            "verify": verified, "times": times}


def _f(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def markdown(results: list[dict[str, Any]], meta: dict[str, Any], log: list[dict[str, Any]]) -> str:
    from rag_lab.evaluation.catalog import label

    lines = ["# Simulate, then verify: a calibrated simulator against the local model", "",
             f"`{meta['command']}` — {meta['date']}, commit {meta['commit']}, {meta['total_s'] / 60:.1f} min wall",
             "", f"Machine: {meta['cores']} cores, load average at start {meta['load']} (shared), Python "
             f"{meta['python']}. Model: {meta['model']} (llama.cpp, one thread), completions capped at "
             f"{meta['max_tokens']} tokens." + (" DRY RUN: the simulator's sloppy profile stood in for the model; "
                                                 "these numbers mean nothing." if meta["dry_run"] else "")
             + (f" Pipeline settings beyond the quickstart base: {', '.join(meta['settings'])}." if meta["settings"]
                else ""), ""]
    for r in results:
        v = r["verify"]
        labels = {c["config_id"]: c["label"] for c in v["candidates"]}
        lines += [f"## {r['dataset']}: {r['questions']} questions", "",
                  "Wall time: " + ", ".join(f"{k} {s:.0f} s" for k, s in r["times"].items())
                  + f"; the real eval made {r['eval']['overall']['spent_llm_calls']:.2f} of its "
                  f"{r['eval']['overall']['cost_llm_calls']:.2f} LLM calls per question (the rest came from the "
                  "response cache).", "",
                  "Calibrated profile (base `typical`; * kept at the base value, unidentified):", "",
                  "| knob | profile | estimate [95%] | fired / opportunities |", "|---|---|---|---|"]
        for k in r["calibration"]["knobs"]:
            est = "–" if k["rate"] is None or k["status"] != "estimated" and k["opportunities"] == 0 else (
                f"{k['rate']:.3f} [{k['lo']:.3f}, {k['hi']:.3f}]" if k["lo"] is not None else f"{k['rate']:.3f}")
            star = "" if k["status"] == "estimated" else " *"
            lines.append(f"| {k['knob']} | {k['value']:.3f}{star} | {est} | {k['fired']} / {k['opportunities']} |")
        lines += ["", *(f"- {n}" for n in r["calibration"]["notes"]), "",
                  f"Verified: {len(v['candidates'])} candidates of the calibrated-simulator sweep "
                  f"({r['sweep']['runs']} runs) on the local model, {v['questions']} questions. Mean over the "
                  "candidates, real − simulated with its paired 95% interval:", "",
                  "| metric | simulated | real | real − simulated |", "|---|---|---|---|"]
        for g in v["gaps"]:
            if g["candidate"] == "all":
                d = "–" if g["delta"] is None else f"{g['delta']:+.3f} [{g['lo']:+.3f}, {g['hi']:+.3f}]"
                lines.append(f"| {label(g['metric'])} | {_f(g['sim'])} | {_f(g['real'])} | {d} |")
        lines += ["", "Per candidate (★ the simulated winner):", "",
                  "| candidate | strict sim | strict real | LLM calls sim | LLM calls real |", "|---|---|---|---|---|"]
        by = {(g["metric"], g["candidate"]): g for g in v["gaps"]}
        for c in v["candidates"]:
            q = by[("quality_answer_containment_strict", c["config_id"])]
            k = by[("cost_llm_calls", c["config_id"])]
            star = " ★" if c["config_id"] == v["winner"] else ""
            lines.append(f"| {c['label']}{star} | {_f(q['sim'])} | {_f(q['real'])} | {_f(k['sim'], 2)} | {_f(k['real'], 2)} |")
        lines.append("")
        for rank in v["ranks"]:
            tau = "undefined (a side ties on every candidate)" if rank["tau"] is None else f"{rank['tau']:+.3f}"
            ci = "" if rank["lo"] is None else f" [{rank['lo']:+.3f}, {rank['hi']:+.3f}]"
            lines.append(f"- Kendall τ on {label(rank['metric'])}: {tau}{ci} (τ defined in {rank['defined']:.0%} of "
                         "bootstrap resamples)")
        fate = "is" if v["winner_on_real_front"] else "is **not**"
        lines += [f"- the simulated winner ({labels[v['winner']]}) {fate} on the real Pareto front "
                  f"({', '.join(labels[c] for c in v['real_front'])})", *(f"- {n}" for n in v["notes"]), ""]
    lines += ["## Commands", "", "```bash", *(f"{e['command']}   # {e['seconds']:.0f} s" for e in log), "```", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--questions", type=int, default=12, help="questions per dataset (split evenly over its types)")
    parser.add_argument("--top", type=int, default=4, help="candidates verified on the real model")
    parser.add_argument("--model", default="smollm2-135m", help="a packaged model name or a GGUF path")
    parser.add_argument("--max-tokens", type=int, default=96, help="completion cap of every real call")
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_verify"), help="run directories")
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_verify.md")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
                        help="a pipeline setting for the real eval and the sweep's base (e.g. router.enabled=false)")
    parser.add_argument("--dry-run", action="store_true",
                        help="the simulator's sloppy profile stands in for the local model (checks the plumbing in "
                             "seconds; its numbers mean nothing)")
    args = parser.parse_args()
    real = (["--backend", "sim", "--profile", "sloppy"] if args.dry_run
            else ["--backend", "local", "--model", args.model]) + ["--max-tokens", str(args.max_tokens)]
    os.chdir(REPO)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    meta = {"command": "python " + shlex.join(["benchmarks/bench_verify.py", *sys.argv[1:]]),
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "commit": commit, "cores": os.cpu_count(),
            "load": [round(x, 2) for x in os.getloadavg()], "python": platform.python_version(), "model": args.model,
            "max_tokens": args.max_tokens, "dry_run": args.dry_run, "settings": args.settings}
    log: list[dict[str, Any]] = []
    start = time.perf_counter()
    results = [run_dataset(d, args.work, args.questions, args.top, real, args.settings, log) for d in args.datasets]
    meta["total_s"] = time.perf_counter() - start
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown(results, meta, log), encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps({"meta": meta, "results": results, "log": log}, indent=1,
                                                        default=str) + "\n", encoding="utf-8")
    print(f"wrote {args.out} and {args.out.with_suffix('.json')} ({meta['total_s'] / 60:.1f} min)")


if __name__ == "__main__":
    main()
