"""``python -m tools.course robustness`` (it was ``rag-lab robustness``): re-run every headline finding on its
datasets (the world, the HotpotQA and the MuSiQue samples, or their unanswerable twins) with two simulator seeds,
replay the recorded studies' declared contrasts and each finding on the recorded real model, and write the table
as markdown and JSON (the table: :mod:`lessons.robustness`; its run, columns and markdown: the
``robustness_*`` modules beside this one)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``robustness`` sub-command to ``python -m tools.course``."""
    rob = sub.add_parser("robustness", help="re-run the findings notebooks 01-13 assert, and what each refusing "
                         "guard buys on unanswerable questions, on each finding's datasets and every seed: paired delta, "
                         "interval, exact p, Holm p, sign agreement per cell")
    rob.add_argument("--json", action="store_true", help="print the result as JSON")
    rob.add_argument("--findings", nargs="+", default=None, metavar="KEY",
                     help="only these findings (default: every one of lessons.robustness.HEADLINE_FINDINGS)")
    rob.add_argument("--datasets", nargs="+", default=None, metavar="NAME",
                     help="only the cells on these datasets (default: each finding's own: world hotpotqa_sample "
                          "musique_sample, or for a claim on unanswerable questions world hotpotqa_sample_twins "
                          "musique_sample_twins); a finding with none of them is left out")
    rob.add_argument("--seeds", nargs="+", type=int, default=None, metavar="SEED",
                     help="simulator seeds of the cells (default: 0 1)")
    rob.add_argument("--real-limit", type=int, default=None, metavar="N",
                     help="questions of each real sample or its twins, its first ones (default 60)")
    rob.add_argument("--work-dir", type=Path, default=None,
                     help="where each cell's sweep is kept and resumed (default: $RAG_LAB_CACHE/robustness)")
    rob.add_argument("--out", type=Path, default=None, metavar="JSON",
                     help="the machine-readable table (default: the shipped data/robustness.json)")
    rob.add_argument("--markdown", type=Path, default=None, metavar="MD",
                     help="the report's markdown (default: the shipped data/robustness.md)")
    rob.add_argument("--quiet", action="store_true", help="no line per finished cell on stderr")
    rob.add_argument("--grid", action="store_true",
                     help="print where each finding holds, one line of symbols per finding, from the shipped table (or "
                          "--out), and run nothing")
    rob.add_argument("--recorded-only", action="store_true",
                     help="keep the simulator's cells of the shipped table (or --out) and recompute only the real-model "
                          "columns and the studies' rows, replayed from the recorded sweeps' cassettes (minutes)")


def run(args: argparse.Namespace) -> int:
    """Run the command and print its text (or, with ``--json``, its result as JSON)."""
    result, text = robustness_command(args)
    print(json.dumps(result, indent=1, default=str) if args.json else text)
    return 0


def robustness_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The command's result (JSON-able) and its text."""
    from lessons.robustness import REAL_LIMIT, SEEDS, SHIPPED_MARKDOWN, SHIPPED_TABLE, load_table
    from rag_lab.stats.paired import interval_text
    from tools.course.robustness_markdown import markdown, write_table
    from tools.course.robustness_recorded import add_recorded_columns
    from tools.course.robustness_run import run_robustness
    from tools.course.robustness_study import study_rows

    def progress(key: str, cell: dict[str, Any]) -> None:
        if not args.quiet:
            print(f"python -m tools.course robustness: {key} {cell['dataset']} seed {cell['seed']}: {interval_text(cell)} "
                  f"(n={cell['n']})", file=sys.stderr, flush=True)

    if args.grid:
        from rag_lab.figures.where_grid import where_grid_info
        from tools.course.robustness_markdown import where_grid_text

        info = where_grid_info(load_table(args.out or SHIPPED_TABLE))
        return {"grid": {k: [c._asdict() for c in cells] for k, cells in zip(info.keys, info.cells, strict=True)},
                "columns": list(info.columns)}, where_grid_text(info)
    if args.recorded_only:
        table = load_table(args.out or SHIPPED_TABLE)
    else:
        table = run_robustness(args.findings, datasets=args.datasets, seeds=args.seeds or SEEDS,
                               real_limit=args.real_limit if args.real_limit is not None else REAL_LIMIT,
                               work_dir=args.work_dir, on_cell=progress)
    table.studies = study_rows()   # first: a finding's cell measured as a declared contrast takes its verdict
    table = add_recorded_columns(table)
    written = write_table(table, args.out or SHIPPED_TABLE, args.markdown or SHIPPED_MARKDOWN)
    text = markdown(table) + "\nwrote " + " and ".join(str(p) for p in written)
    return {"written": [str(p) for p in written], **table.to_dict()}, text
