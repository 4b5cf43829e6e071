"""Run the benchmark sections and write ``bench.json`` and ``bench.md`` (a table of ratios measured
side by side in this one run, with the machine's cores and load in the header).

    python -m benchmarks                          # every section, full size
    python -m benchmarks --quick                  # every section, small sizes (a minute or two)
    python -m benchmarks --sections embedding concurrency --out /tmp/bench
    python -m benchmarks --list

Sections are discovered: every ``benchmarks/bench_<name>.py`` that defines ``run(quick, work)``.
Run it from the repository root with the venv's python (``source scripts/env.sh``); long sections
deserve ``nice -n 10`` and ``nohup`` on a shared machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import subprocess
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType

from benchmarks import Section, machine

HERE = Path(__file__).resolve().parent
#: Sections run in this order when present; others follow alphabetically.
ORDER = ("embedding", "concurrency", "scale")


def discover() -> tuple[dict[str, ModuleType], list[str]]:
    """(sections by name, names of script-only modules) among ``benchmarks/bench_*.py``."""
    sections: dict[str, ModuleType] = {}
    scripts: list[str] = []
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem.removeprefix("bench_")
        try:
            module = importlib.import_module(f"benchmarks.{path.stem}")
        except ImportError as exc:  # an optional extra is missing: list it, run the rest
            scripts.append(f"{name} (cannot import: {exc})")
            continue
        if callable(getattr(module, "run", None)):
            sections[name] = module
        else:
            scripts.append(name)
    ordered = [n for n in ORDER if n in sections] + sorted(n for n in sections if n not in ORDER)
    return {n: sections[n] for n in ordered}, scripts


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _fmt(value: float) -> str:
    if value != value:  # NaN
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.4f}"


def _met(met: bool | None) -> str:
    return "" if met is None else ("yes" if met else "**no**")


def markdown(report: dict) -> str:
    m = report["machine"]
    lines = [
        f"# rag_lab benchmarks ({'quick' if report['quick'] else 'full'})",
        "",
        f"`{report['command']}` — {report['started']} UTC, commit {report['commit']}, "
        f"{report['seconds']:.0f} s",
        "",
        f"Machine: **{m['cores']} cores**, load average at start {m['load_avg_1_5_15']} "
        f"(shared with other users), Python {m['python']}, torch {m['torch']}, onnxruntime {m['onnxruntime']}, "
        f"hnswlib {m['hnswlib']}.",
        "",
        "| section | measured side by side | baseline | candidate | ratio | target | met |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in report["sections"]:
        for r in s["ratios"]:
            lines.append(
                f"| {s['name']} | {r['name']} | {r['baseline']}: {_fmt(r['baseline_value'])} {r['unit']} "
                f"| {r['candidate']}: {_fmt(r['candidate_value'])} {r['unit']} | **{r['ratio']:.2f}×** "
                f"| {'≥ ' + format(r['target'], 'g') + '×' if r['target'] is not None else ''} | {_met(r['met'])} |")
    lines += ["", "| section | measure | value | target | met |", "|---|---|---|---|---|"]
    for s in report["sections"]:
        for x in s["measures"]:
            target = (f"≤ {x['at_most']:g}" if x["at_most"] is not None
                      else f"≥ {x['at_least']:g}" if x["at_least"] is not None else "")
            note = f" ({x['note']})" if x["note"] else ""
            lines.append(f"| {s['name']} | {x['name']}{note} | {_fmt(x['value'])} {x['unit']} | {target} "
                         f"| {_met(x['met'])} |")
    for s in report["sections"]:
        if s["notes"] or s.get("error"):
            lines += ["", f"**{s['name']}** ({s['seconds']:.0f} s):"]
            lines += [f"- {n}" for n in s["notes"]]
            if s.get("error"):
                lines.append(f"- FAILED: {s['error']}")
    if report["script_only"]:
        lines += ["", "Script-only benchmarks (run by hand): " + ", ".join(report["script_only"])]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run of every section")
    parser.add_argument("--sections", nargs="+", metavar="NAME", help="run only these sections")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for bench.json and bench.md (default benchmarks/results[/quick])")
    parser.add_argument("--work", type=Path, default=None,
                        help="folder for cached inputs (big worlds, embeddings); default $RAG_LAB_CACHE/bench")
    parser.add_argument("--list", action="store_true", help="list the sections and exit")
    args = parser.parse_args(argv)

    sections, scripts = discover()
    if args.list:
        for name, module in sections.items():
            print(f"{name:12s} {(module.__doc__ or '').strip().splitlines()[0]}")
        for name in scripts:
            print(f"{name:12s} (script only)")
        return 0
    chosen = args.sections or list(sections)
    unknown = [n for n in chosen if n not in sections]
    if unknown:
        parser.error(f"unknown section(s) {unknown}; choose from {list(sections)}")
    from rag_lab.paths import cache_dir

    work = args.work or cache_dir() / "bench"
    work.mkdir(parents=True, exist_ok=True)
    out = args.out or HERE / "results" / ("quick" if args.quick else "")
    out.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    report = {"command": "python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:]),
              "started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M"), "commit": _commit(),
              "quick": args.quick, "machine": machine(), "sections": [], "script_only": scripts}
    failed = 0
    for name in chosen:
        print(f"== {name}", flush=True)
        start = time.perf_counter()
        try:
            section: Section = sections[name].run(args.quick, work)
            entry = section.to_dict()
        except Exception as exc:  # report the failure, keep the other sections
            traceback.print_exc()
            failed += 1
            entry = Section(name).to_dict() | {"error": f"{type(exc).__name__}: {exc}"}
        entry["seconds"] = time.perf_counter() - start
        report["sections"].append(entry)
        report["seconds"] = time.perf_counter() - started
        (out / "bench.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        (out / "bench.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    print(f"wrote {out / 'bench.json'} and {out / 'bench.md'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
