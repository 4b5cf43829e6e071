"""How few question runs can *any* valid racing design use on bench_search.py's grid? (issue 39)

A race drops a candidate ``c`` only when a test shows a rival ``r`` dominating it: better on one objective and
not worse (within a margin δ) on the other. For a 0/1 metric on which ``r`` and ``c`` tie on most questions, no
level-α′ test can show "not worse by δ" before ``(1 − δ)^n ≤ α′``: under the null "``r`` loses a share δ of the
questions and wins none", all ``n`` questions tie with probability ``(1 − δ)^n``. So every design has a floor,
set by the smallest level α′ it may spend on one comparison at one look.

This script runs the benchmark's grid once (16 candidates × 240 world questions, simulator ``typical``, the
same sweep as ``benchmarks/bench_search.py --per-type 30``), then, for each race order (seeds 0–2) and stage
schedule, drops every candidate at the first look at which its **best** dominance hypothesis (the rival and
objective with the smallest p — chosen by an oracle, which no valid design can do for free) clears the level,
with the racing module's own test (:func:`rag_lab.experiments.tuning.racing.dominance_test`):

* α at every look — no correction at all: the floor of every design that tests at level α;
* the look's share of α (:func:`rag_lab.experiments.tuning.racing.look_alphas`, in proportion to its
  questions) — only the looks paid for, no correction across candidates;
* Holm over the candidates at the look's share — the floor of a design that keeps "one of four identical
  candidates dropped ≤ α" with Holm across candidates and the looks paid for, given its rivals for free;

and four real designs: the shipped rule (:func:`rag_lab.experiments.tuning.racing.stage_drops`: Bonferroni over
each candidate's rivals, Holm over the candidates), a pilot designation (:func:`pilot_race`: the first stage
picks each candidate's rival, later looks test only that one on the questions after it), and two other tests of
"no rival dominates c" in the shipped rule (:func:`combined_race`): Bonferroni weighted towards the rivals
nearest in the grid (:func:`distance_weighted`) and Simes' test (:func:`simes`).

A candidate never dropped runs all 240 questions. The ratio is the question runs over the grid's 3,840::

    nice -n 5 python benchmarks/bench_racing_bound.py --work /tmp/racing_bound

writes ``benchmarks/results/bench_racing_bound.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
ALPHA = 0.05
SCHEDULES = ([20, 40, 80], [20, 30, 40, 60, 120])
MARGINS = (0.02, 0.05)
SHIPPED = "shipped rule (Bonferroni over each candidate's rivals, Holm over the candidates)"
PILOT = "pilot designation (a valid design: the first stage picks each rival)"
DISTANCE = "distance-weighted Bonferroni (valid: nearer rivals in the grid get more of α)"
SIMES = "Simes over each candidate's rivals (valid only under positive dependence)"


def _stage(values: dict[str, dict[str, np.ndarray]], rows: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
    return {cid: {m: v[rows] for m, v in by.items()} for cid, by in values.items()}


def pilot_race(values: dict[str, dict[str, np.ndarray]], order_index: np.ndarray, stages: list[int],
               objectives: list[Any], alpha: float, margin: float) -> dict[str, int]:
    """A valid design without the oracle: the first stage (the pilot) designates each candidate's rival (the
    smallest dominance p there); every later look tests that one rival on the questions after the pilot only,
    Holm over the candidates at the look's share of ``alpha`` (in proportion to its questions after the pilot)."""
    from rag_lab.experiments.tuning.racing import dominance_test, look_alphas
    from rag_lab.stats.significance import holm

    pilot = stages[0]
    stage = _stage(values, order_index[:pilot])
    designated = {c: min((t for r in values if r != c
                          if (t := dominance_test(stage, c, r, objectives, "noninferior", margin))),
                         key=lambda t: (t["p"], t["rival"]))["rival"] for c in values}
    racing, dropped = list(values), {}
    after = [n - pilot for n in stages[1:]]
    for n, level in zip(stages[1:-1], look_alphas(after, alpha), strict=True):
        stage = _stage(values, order_index[pilot:n])
        ps = [dominance_test(stage, c, designated[c], objectives, "noninferior", margin)["p"] for c in racing]
        dropped.update({c: n for c, p in zip(racing, holm(ps), strict=True) if p <= level})
        racing = [c for c in racing if c not in dropped]
    return dropped


def combined_race(values: dict[str, dict[str, np.ndarray]], order_index: np.ndarray, stages: list[int],
                  objectives: list[Any], alpha: float | list[float], margin: float, combine: Any,
                  holm_across: bool = True) -> dict[str, int]:
    """When each candidate is dropped (question count; absent: never) by the shipped rule with another test of
    "no rival dominates c": ``combine(c, [(p, rival), ...])`` turns the dominance p of every rival that entered
    into the candidate's p, tested at the look's share of ``alpha`` (or at ``alpha[i]`` at look ``i`` when a
    list), with Holm over the candidates still racing (``holm_across``). With :func:`bonferroni` it is the
    shipped rule (a cross-check); with :func:`oracle`, the floors."""
    from rag_lab.experiments.tuning.racing import dominance_test, look_alphas
    from rag_lab.stats.significance import holm

    levels = alpha if isinstance(alpha, list) else look_alphas(stages, alpha)
    racing, dropped = list(values), {}
    for n, level in zip(stages[:-1], levels, strict=True):
        stage = _stage(values, order_index[:n])
        ps = [min(1.0, combine(c, [(t["p"], r) for r in values if r != c
                                   if (t := dominance_test(stage, c, r, objectives, "noninferior", margin))]))
              for c in racing]
        adjusted = holm(ps) if holm_across else ps
        dropped.update({c: n for c, p in zip(racing, adjusted, strict=True) if p <= level})
        racing = [c for c in racing if c not in dropped]
    return dropped


def oracle(c: str, tests: list[tuple[float, str]]) -> float:
    """The **best** rival's p alone, as if an oracle had named that rival: no valid design gets it for free."""
    return min((p for p, _ in tests), default=1.0)


def bonferroni(c: str, tests: list[tuple[float, str]]) -> float:
    """The smallest p times the number of rivals (the shipped rule)."""
    return min(p for p, _ in tests) * len(tests)


def simes(c: str, tests: list[tuple[float, str]]) -> float:
    """Simes' test over the rivals: ``min_i p_(i) · m / i``. Valid only under positive dependence of the
    rivals' tests (they share ``c``'s answers, but PRDS is not shown for intersection-union p's)."""
    ps = sorted(p for p, _ in tests)
    return min(p * len(ps) / (i + 1) for i, p in enumerate(ps))


def distance_weighted(params: dict[str, tuple[Any, ...]]) -> Any:
    """Weighted Bonferroni over the rivals, fixed before any data: a rival ``d`` settings away from ``c`` gets
    α's share ``2^-(d-1)`` (normalised over the distances present), split evenly within its distance."""
    def combine(c: str, tests: list[tuple[float, str]]) -> float:
        dist = {r: sum(a != b for a, b in zip(params[c], params[r], strict=True)) for _, r in tests}
        counts = Counter(dist.values())
        total = sum(2.0 ** -(d - 1) for d in counts)
        return min(p / (2.0 ** -(dist[r] - 1) / total / counts[dist[r]]) for p, r in tests)
    return combine


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
    from rag_lab.experiments.tuning.racing import look_alphas, race_order, run_race

    grid = run_sweep(sweep_spec(30, None, 0), args.work / "grid", progress="quiet")
    objectives = [Objective.parse(COST), Objective.parse(f"max:{QUALITY}")]
    ids = list(grid.table["candidate_id"])
    labels = grid.labels()
    qids = list(grid.qids)
    values = {cid: {m: grid.rows(cid).set_index("qid").loc[qids, m].to_numpy(float) for m in (COST, QUALITY)}
              for cid in ids}
    columns = [c for c in grid.table.columns if c.startswith("param_")]
    params = {cid: tuple(row) for cid, row in grid.table.set_index("candidate_id")[columns].iterrows()}
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
                shares = look_alphas(stages, ALPHA)
                designs = {"no correction (α at every look)": ([ALPHA] * looks, False),
                           "looks only (the look's share of α)": (shares, False),
                           "Holm over the candidates (the look's share of α)": (shares, True)}
                for design, (levels, holm_across) in designs.items():
                    dropped = combined_race(values, order_index, stages, objectives, levels, margin, oracle,
                                            holm_across)
                    rows.append(_row(seed, batches, margin, design, levels[-1], dropped, ids, len(qids)))
                dropped = pilot_race(values, order_index, stages, objectives, ALPHA, margin)
                rows.append(_row(seed, batches, margin, PILOT, math.nan, dropped, ids, len(qids)))
                for design, combine in ((DISTANCE, distance_weighted(params)), (SIMES, simes)):
                    dropped = combined_race(values, order_index, stages, objectives, ALPHA, margin, combine)
                    rows.append(_row(seed, batches, margin, design, shares[-1], dropped, ids, len(qids)))

                def metric_values(cid: str, q: list[str], metric: str) -> np.ndarray:
                    return values[cid][metric][[qids.index(x) for x in q]]

                spec = RaceSpec(batches=batches, margin=margin)
                out = run_race(ids, [], order, spec, objectives, [], lambda a, b: None, metric_values)
                dropped = {c: o.n_questions for c, o in out.items() if o.status == "dropped"}
                rows.append(_row(seed, batches, margin, SHIPPED, shares[-1], dropped, ids, len(qids)))
    out = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "platform": platform.platform(),
           "candidates": len(ids), "questions": len(qids), "grid_runs": total,
           "front": [labels[c] for c in front], "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_racing_bound.json").write_text(json.dumps(out, indent=2) + "\n")
    (RESULTS / "bench_racing_bound.md").write_text(markdown(out))
    print(markdown(out))


def _row(seed: int, batches: list[int], margin: float, design: str, level: float, dropped: dict[str, int],
         ids: list[str], questions: int) -> dict[str, Any]:
    runs = sum(dropped.get(c, questions) for c in ids)
    return {"seed": seed, "stages": batches, "margin": margin, "design": design, "alpha_look": level, "runs": runs,
            "ratio": runs / (len(ids) * questions), "dropped": len(dropped)}


def markdown(out: dict[str, Any]) -> str:
    lines = ["# How close a valid racing design can get on bench_search.py's grid (benchmarks/bench_racing_bound.py)", "",
             f"{out['date']} · {out['platform']} · `python benchmarks/bench_racing_bound.py`", "",
             f"{out['candidates']} candidates × {out['questions']} world questions = {out['grid_runs']} question runs; "
             f"grid front: {', '.join(out['front'])}. Each cell: the share of the grid's question runs a race uses (and "
             "the candidates it drops). The first three rows drop every candidate at the first look where its best "
             "dominance hypothesis (oracle-chosen rival and objective) clears the level — floors, not designs; the "
             "rest are designs a race can run. Goal: ≤ 35%.", "",
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
