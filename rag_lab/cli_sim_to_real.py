"""The commands that tie the simulator to a real model: ``calibrate`` (fit a simulator profile to a real
run's traces) and ``verify`` (re-run a simulated sweep's best candidates on a real backend and compare)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_sim_to_real_parsers(sub: argparse._SubParsersAction) -> None:
    cal = sub.add_parser("calibrate", help="estimate the simulator's knob rates from a real run's traces and write "
                                           "a profile file")
    cal.add_argument("--from", dest="source", required=True, type=Path, metavar="RUN_DIR_OR_EVAL_OUT",
                     help="a sweep run directory (run.sqlite) or an eval output folder (rag-lab eval --out: "
                          "traces.jsonl)")
    cal.add_argument("--out", required=True, type=Path, metavar="PROFILE_YAML", help="the profile file to write")
    cal.add_argument("--base", default="typical",
                     help="the profile whose values the knobs the traces cannot identify keep (a name or a file)")
    cal.add_argument("--reader", choices=["generic", "world"], default=None,
                     help="the simulator reader that judges each prompt (what the evidence suffices for); default: "
                          "the base profile's; the calibrated profile keeps it")
    cal.add_argument("--name", default="calibrated", help="the calibrated profile's name")
    cal.add_argument("--min-opportunities", type=int, default=5,
                     help="fewer opportunities than this leave a knob at the base value")
    cal.add_argument("--json", action="store_true")


def calibrate_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.experiments.calibrate import calibrate, read_run

    calibration = calibrate(read_run(args.source), base=args.base, reader=args.reader, name=args.name,
                            min_opportunities=args.min_opportunities)
    path = calibration.write(args.out)
    out = {"profile_file": str(path), **calibration.to_dict()}
    return out, calibration.table_text() + f"\nwrote {path} (use it with --profile {path})"
