"""How few question runs can *any* valid racing design use on bench_search.py's grid? (issue 39)

A race drops a candidate ``c`` only when a test shows a rival ``r`` dominating it: better on one objective and
not worse (within a margin δ) on the other. For a 0/1 metric on which ``r`` and ``c`` tie on most questions, no
level-α′ test can show "not worse by δ" before ``(1 − δ)^n ≤ α′``: under the null "``r`` loses a share δ of the
questions and wins none", all ``n`` questions tie with probability ``(1 − δ)^n``. So every design has a floor,
set by the smallest α′ it may spend on one comparison at one look.

This script runs the benchmark's grid once (16 candidates × 240 world questions, simulator ``typical``, the
same sweep as ``benchmarks/bench_search.py --per-type 30``), then, for each race order (seeds 0–2) and stage
schedule, finds for every candidate the first stage at which its **best** dominance hypothesis (the rival and
objective with the smallest p — chosen by an oracle, which no valid design can do for free) reaches α′, with
the racing module's own tests (:func:`rag_lab.experiments.tuning.racing.dominance_hypotheses`):

* ``α′ = α`` — no correction at all: the floor of every design that tests at level α;
* ``α′ = α / looks`` — only the looks paid for (one comparison per candidate, designated for free);
* ``α′ = α / (looks · candidates)`` — one designated comparison per candidate per look, Bonferroni over them;
* and the shipped rule (every ordered pair and objective in each look's Holm family) for comparison.

A candidate that never reaches α′ runs all 240 questions. The ratio is the question runs over the grid's 3,840::

    nice -n 5 python benchmarks/bench_racing_bound.py --work /tmp/racing_bound

writes ``benchmarks/results/bench_racing_bound.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
ALPHA = 0.05
SCHEDULES = ([20, 40, 80], [20, 30, 40, 60, 120])
MARGINS = (0.02, 0.05)


def first_stage(values: dict[str, dict[str, np.ndarray]], order_index: np.ndarray, stages: list[int], c: str,
                objectives: list[Any], level: float, margin: float) -> int | None:
    """The first stage (question count, the last excluded) at which some rival's dominance of ``c`` has p ≤ level."""
    from rag_lab.experiments.tuning.racing import dominance_hypotheses

    for n in stages[:-1]:
        rows = order_index[:n]
        stage = {cid: {m: v[rows] for m, v in by.items()} for cid, by in values.items()}
        best = min((h["p"] for r in values if r != c
                    for h in dominance_hypotheses(stage, c, r, objectives, "noninferior", margin)), default=1.0)
        if best <= level:
            return n
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/racing_bound"))
    parser.add_argument("--seeds", default="0,1,2")
    args = parser.parse_args()

    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_search import COST, QUALITY, sweep_spec

    from rag_lab.experiments import run_sweep
    from rag_lab.experiments.engine.search_space import Objective, RaceSpec
    from rag_lab.experiments.tuning.racing import race_order, run_race

    grid = run_sweep(sweep_spec(30, None, 0), args.work / "grid", progress="quiet")
    objectives = [Objective.parse(COST), Objective.parse(f"max:{QUALITY}")]
    ids = list(grid.table["candidate_id"])
    labels = grid.labels()
    qids = list(grid.qids)
    values = {cid: {m: grid.rows(cid).set_index("qid").loc[qids, m].to_numpy(float) for m in (COST, QUALITY)}
              for cid in ids}
    total = len(ids) * len(qids)
    front = list(grid.table.loc[grid.table["is_pareto"], "candidate_id"])
    rows: list[dict[str, Any]] = []
    for seed in [int(s) for s in args.seeds.split(",")]:
        order = race_order(qids, seed)
        order_index = np.array([qids.index(q) for q in order])
        for batches in SCHEDULES:
            stages = RaceSpec(batches=batches).stages(len(qids))
            looks = len(stages) - 1
            for margin in MARGINS:
                designs = {"no correction (α′ = α)": ALPHA, "looks only (α′ = α / looks)": ALPHA / looks,
                           "one per candidate (α′ = α / (looks · 16))": ALPHA / (looks * len(ids))}
                for design, level in designs.items():
                    runs, dropped = 0, 0
                    for c in ids:
                        n = first_stage(values, order_index, stages, c, objectives, level, margin)
                        runs += n if n is not None else len(qids)
                        dropped += n is not None
                    rows.append({"seed": seed, "stages": batches, "margin": margin, "design": design, "alpha_look": level,
                                 "runs": runs, "ratio": runs / total, "dropped": dropped})

                def metric_values(cid: str, q: list[str], metric: str) -> np.ndarray:
                    return values[cid][metric][[qids.index(x) for x in q]]

                spec = RaceSpec(batches=batches, margin=margin)
                out = run_race(ids, [], order, spec, objectives, [], lambda a, b: None, metric_values)
                runs = sum(o.n_questions for o in out.values())
                rows.append({"seed": seed, "stages": batches, "margin": margin,
                             "design": "shipped rule (Holm over every ordered pair × objective)", "alpha_look": ALPHA / looks,
                             "runs": runs, "ratio": runs / total,
                             "dropped": sum(o.status == "dropped" for o in out.values())})
    out = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "platform": platform.platform(),
           "candidates": len(ids), "questions": len(qids), "grid_runs": total,
           "front": [labels[c] for c in front], "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_racing_bound.json").write_text(json.dumps(out, indent=2) + "\n")
    (RESULTS / "bench_racing_bound.md").write_text(markdown(out))
    print(markdown(out))


def markdown(out: dict[str, Any]) -> str:
    lines = ["# The floor of any valid racing design on bench_search.py's grid (benchmarks/bench_racing_bound.py)", "",
             f"{out['date']} · {out['platform']} · `python benchmarks/bench_racing_bound.py`", "",
             f"{out['candidates']} candidates × {out['questions']} world questions = {out['grid_runs']} question runs; "
             f"grid front: {', '.join(out['front'])}. Each cell: the question runs a race would use if every candidate "
             "were dropped at the first stage where its best dominance hypothesis (oracle-chosen rival and objective) "
             "reaches α′ — a floor, not a design — and the shipped rule's actual runs. Goal: ≤ 35%.", "",
             "| design | margin δ | stages | seed 0 | seed 1 | seed 2 |", "|---|---:|---|---:|---:|---:|"]
    keys = dict.fromkeys((r["design"], r["margin"], tuple(r["stages"])) for r in out["rows"])
    for design, margin, stages in keys:
        cells = {r["seed"]: r for r in out["rows"]
                 if (r["design"], r["margin"], tuple(r["stages"])) == (design, margin, stages)}
        lines.append(f"| {design} | {margin:g} | {', '.join(map(str, stages))} | "
                     + " | ".join(f"{cells[s]['ratio']:.1%} ({cells[s]['dropped']} dropped)" if s in cells else "–"
                                  for s in (0, 1, 2)) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
