"""Racing against the full grid (issue 20): does racing candidates over questions find the grid's Pareto front
at a fraction of the question runs?

On the simulator (the shipped world, ``typical`` profile with the world reader, as the quickstart), one
factorial grid of policies that move cost and quality in different ways (router on/off, the evidence judge,
the CRAG evaluator, the snippets kept, the refusal threshold) is run twice:

1. **grid**: every candidate on every question (``rag-lab sweep`` of the grid);
2. **race**: the same candidates as ``search: {sampler: grid, race: {batches: [...]}}``: every candidate
   answers the first batch of a seeded random order of the questions, then the next, then all; a candidate
   is dropped after a stage when a Holm-corrected paired test shows a rival dominating it.

Then the two fronts (cost_llm_calls minimised, strict containment maximised) are compared on the grid's full
rows: a grid-front member is **found** when it is on the race's front, or **within the paired interval** of a
race-front member (the paired 95% bootstrap interval of their difference contains 0 on both objectives);
likewise for race-front members. The ratio is the race's question runs over the grid's. Both runs are
ordinary resumable run directories under ``--work``; the LLM response cache makes the second run cheap in
CPU, but the ratio counts question runs (what a real endpoint would be paid for), not seconds::

    nice -n 5 python benchmarks/bench_search.py --per-type 30 --batches 20,40,80

writes ``benchmarks/results/bench_search.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
COST, QUALITY = "cost_llm_calls", "quality_answer_containment_strict"
GRID = {
    "router.enabled": [True, False],
    "judge.enabled": [False, True],
    "crag.evaluator": ["embedding", "llm"],
    "truncation.max_snippets": [2, 5],
    "citations.refusal_threshold": [0.1, 0.5],
}


def sweep_spec(per_type: int, race: list[int] | None, seed: int) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "bench-search-race" if race else "bench-search-grid", "dataset": "world", "split": "test",
        "per_type": per_type, "base": {"round_cap.max_rounds": 3},
        "backend": {"kind": "sim", "profile": "typical", "knobs": {"reader": "world"}}, "grid": GRID,
    }
    if race:
        spec["search"] = {"sampler": "grid", "seed": seed, "objectives": [COST, QUALITY], "race": {"batches": race}}
    return spec


def _within(grid: Any, a: str, b: str) -> bool:
    """Whether candidates ``a`` and ``b`` of the full grid are within each other's paired interval on both axes."""
    for metric in (COST, QUALITY):
        frame = grid.compare(metric, reference=b, n_boot=2000).set_index("candidate_id")
        if frame.loc[a, "lo"] > 0 or frame.loc[a, "hi"] < 0:
            return False
    return True


def compare_fronts(grid: Any, race: Any) -> dict[str, Any]:
    """Front members of each run by config id, and how each grid-front member was found by the race."""
    by_config = dict(zip(grid.table["config_id"], grid.table["candidate_id"], strict=True))
    g_front = set(grid.table.loc[grid.table["is_pareto"], "config_id"])
    r_front = set(race.table.loc[race.table["is_pareto"], "config_id"])
    labels = grid.labels()
    found, missed = {}, []
    for config in sorted(g_front):
        if config in r_front:
            found[config] = "same member"
            continue
        match = next((r for r in sorted(r_front) if _within(grid, by_config[config], by_config[r])), None)
        if match is None:
            missed.append(config)
        else:
            found[config] = f"within the paired interval of {labels[by_config[match]]}"
    extra = [r for r in sorted(r_front - g_front)
             if not any(_within(grid, by_config[r], by_config[g]) for g in g_front)]
    return {
        "grid_front": [labels[by_config[c]] for c in sorted(g_front)],
        "race_front": [labels[by_config[c]] for c in sorted(r_front)],
        "found": {labels[by_config[c]]: how for c, how in found.items()},
        "missed": [labels[by_config[c]] for c in missed],
        "race_front_outside_grid_front": [labels[by_config[c]] for c in extra],
        "same_front": not missed and not extra,
    }


def main() -> None:
    from rag_lab.experiments import run_sweep

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-type", type=int, default=30, help="test questions per type (8 types)")
    parser.add_argument("--batches", default="20,40,80", help="race stages before all questions")
    parser.add_argument("--seed", type=int, default=0, help="the race's question order")
    parser.add_argument("--work", type=Path, default=REPO / "reports" / "bench_search")
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_search")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",")]

    start = time.perf_counter()
    grid = run_sweep(sweep_spec(args.per_type, None, args.seed), args.work / "grid", progress="quiet")
    grid_s = time.perf_counter() - start
    start = time.perf_counter()
    race = run_sweep(sweep_spec(args.per_type, batches, args.seed), args.work / f"race-{args.seed}", progress="quiet")
    race_s = time.perf_counter() - start
    fronts = compare_fronts(grid, race)
    labels = race.labels()
    grid_runs, race_runs = grid.question_runs(), race.question_runs()
    dropped = race.table[race.table["status"] == "dropped"].sort_values(["dropped_after", "candidate_id"])
    out = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": platform.platform(),
        "candidates": len(grid.table), "questions": len(grid.qids), "batches": batches, "seed": args.seed,
        "grid_question_runs": grid_runs, "race_question_runs": race_runs, "ratio": race_runs / grid_runs,
        "target_ratio": 0.30, "meets_target": race_runs / grid_runs <= 0.30 and fronts["same_front"],
        "wall_seconds": {"grid": grid_s, "race": race_s}, "fronts": fronts,
        "dropped": [{"candidate": labels[r["candidate_id"]], "after": int(r["dropped_after"]),
                     "by": labels.get(r["dropped_by"], "a constraint") if r["dropped_by"] else "a constraint",
                     "reason": r["drop_reason"]} for _, r in dropped.iterrows()],
        "dropped_after_counts": {str(k): int(v) for k, v in dropped["dropped_after"].value_counts().sort_index().items()},
        "command": f"nice -n 5 python benchmarks/bench_search.py --per-type {args.per_type} --batches {args.batches} "
                   f"--seed {args.seed}",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(out), encoding="utf-8")
    print(markdown(out))


def markdown(out: dict[str, Any]) -> str:
    f = out["fronts"]
    lines = [
        "# Racing vs the full grid (benchmarks/bench_search.py)", "",
        f"{out['when']} · {out['machine']} · `{out['command']}`", "",
        f"{out['candidates']} candidates (a 2×2×2×2×2 factorial: router, judge, CRAG evaluator, snippets kept, "
        f"refusal threshold) × {out['questions']} world test questions, simulator `typical` (world reader). "
        f"Race stages: {', '.join(map(str, out['batches']))}, then all {out['questions']} questions "
        f"(question order seed {out['seed']}); a drop needs a Holm-corrected paired test (α = 0.05) showing a "
        "rival dominating (weak Pareto dominance: ties on every question so far count as not worse).", "",
        "| | question runs | wall (s) |", "|---|---:|---:|",
        f"| grid | {out['grid_question_runs']} | {out['wall_seconds']['grid']:.0f} |",
        f"| race | {out['race_question_runs']} | {out['wall_seconds']['race']:.0f} |",
        f"| **ratio race / grid** | **{out['ratio']:.1%}** (target ≤ 30%) | |", "",
        f"Front (cost_llm_calls vs strict containment): grid {len(f['grid_front'])} members, race "
        f"{len(f['race_front'])}. Same front (each member the same or within the paired interval): "
        f"**{'yes' if f['same_front'] else 'no'}**; target met: **{'yes' if out['meets_target'] else 'no'}**.", "",
        "| grid-front member | found by the race |", "|---|---|",
        *(f"| {k} | {v} |" for k, v in f["found"].items()),
        *(f"| {k} | **missed** |" for k in f["missed"]),
        *(f"| (race only) {k} | outside the grid front's intervals |" for k in f["race_front_outside_grid_front"]),
        "", "Dropped after (questions: candidates): "
        + ", ".join(f"{k}: {v}" for k, v in out["dropped_after_counts"].items()), "",
        "| dropped | after | by | why |", "|---|---:|---|---|",
        *(f"| {d['candidate']} | {d['after']} | {d['by']} | {d['reason']} |" for d in out["dropped"]),
        "", "The wall times are not a comparison (the race reuses the grid's LLM response cache); the ratio counts "
        "question runs, what a real endpoint would bill.", "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
