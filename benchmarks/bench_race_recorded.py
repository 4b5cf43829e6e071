"""Racing on a real model, from its recordings (issue 39): how many of the recorded question runs would a raced
search have needed?

Each recorded part of the real-model study (``sweeps/real_qwen_*_v3*.yaml``, ``real_qwen_musique_disclosure.yaml``,
Qwen2.5-Coder-1.5B through llama.cpp) is run again as ``search: {sampler: grid, race: ...}`` over the same
candidates and questions, replayed offline from its cassette (``backend.replay``: a call the cassette does not
hold is an error, so the race asks the model nothing new). The objectives are the study's: LLM calls (fewer) and
strict answers (more). The ratio is the race's question runs over the recorded sweep's (what the recording cost,
20–200 s of one core per question run)::

    python benchmarks/bench_race_recorded.py --work /tmp/race_recorded

writes ``benchmarks/results/bench_race_recorded.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
PARTS = ("real_qwen_hotpotqa_v3", "real_qwen_hotpotqa_v3_answer", "real_qwen_musique_v3", "real_qwen_musique_disclosure")
OBJECTIVES = ["cost_llm_calls", "quality_answer_containment_strict"]
BATCHES = [20, 40]
MARGINS = (0.02, 0.05)


def race_spec(part: str, margin: float, seed: int) -> dict[str, Any]:
    """The part's sweep file (paths resolved, replayed from its cassette) as a raced grid search."""
    from rag_lab.experiments.engine.sweep_file import load_sweep_spec, replay_spec

    spec = replay_spec(load_sweep_spec(REPO / "sweeps" / f"{part}.yaml")).model_dump(mode="json")
    spec.update(name=f"{part}-race", findings=[],
                search={"sampler": "grid", "seed": seed, "objectives": OBJECTIVES,
                        "race": {"batches": BATCHES, "margin": margin}})
    return spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/race_recorded"))
    parser.add_argument("--seeds", default="0,1,2")
    args = parser.parse_args()
    from rag_lab.experiments import run_sweep

    rows = []
    for part in PARTS:
        for margin in MARGINS:
            for seed in [int(s) for s in args.seeds.split(",")]:
                spec = race_spec(part, margin, seed)
                race = run_sweep(spec, args.work / f"{part}-{margin}-{seed}", progress="quiet")
                n_q, n_c = len(race.qids), len(race.table)
                labels = race.labels()
                dropped = race.table[race.table["status"] == "dropped"]
                rows.append({"part": part, "margin": margin, "seed": seed, "questions": n_q, "candidates": n_c,
                             "recorded_runs": n_q * n_c, "race_runs": race.question_runs(),
                             "ratio": race.question_runs() / (n_q * n_c),
                             "dropped": [{"candidate": labels[r["candidate_id"]], "after": int(r["dropped_after"]),
                                          "reason": r["drop_reason"]} for _, r in dropped.iterrows()]})
                print(rows[-1])
    out = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "platform": platform.platform(),
           "batches": BATCHES, "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_race_recorded.json").write_text(json.dumps(out, indent=2, default=str) + "\n")
    (RESULTS / "bench_race_recorded.md").write_text(markdown(out))
    print(markdown(out))


def markdown(out: dict[str, Any]) -> str:
    lines = ["# Racing on the recorded real model (benchmarks/bench_race_recorded.py)", "",
             f"{out['date']} · {out['platform']} · `python benchmarks/bench_race_recorded.py`", "",
             f"Each recorded part of the Qwen2.5-Coder-1.5B study, raced over its own candidates and questions "
             f"(stages {', '.join(map(str, out['batches']))}, then all; objectives: LLM calls, strict answers), "
             "replayed offline from its cassette. The share of the recorded question runs the race needed:", "",
             "| part | candidates × questions | margin δ | seed 0 | seed 1 | seed 2 | drops |",
             "|---|---|---:|---:|---:|---:|---|"]
    keys = dict.fromkeys((r["part"], r["margin"]) for r in out["rows"])
    for part, margin in keys:
        cells = {r["seed"]: r for r in out["rows"] if (r["part"], r["margin"]) == (part, margin)}
        first = next(iter(cells.values()))
        drops = "; ".join(f"seed {s}: {d['candidate']} after {d['after']}" for s, r in cells.items() for d in r["dropped"])
        lines.append(f"| {part} | {first['candidates']} × {first['questions']} | {margin:g} | "
                     + " | ".join(f"{cells[s]['ratio']:.1%}" if s in cells else "–" for s in (0, 1, 2))
                     + f" | {drops or 'none'} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
