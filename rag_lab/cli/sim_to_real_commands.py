"""The commands that tie the simulator to a real model: ``calibrate`` (fit a simulator profile to a real
run's traces) and ``verify`` (re-run a simulated sweep's best candidates on a real backend and compare)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from rag_lab.cli.options import add_backend_options, command, parse_settings, reject_sim_settings
from rag_lab.errors import ConfigError


def register(sub: argparse._SubParsersAction) -> None:
    cal = command(sub, "calibrate", calibrate_command,
                  "estimate the simulator's knob rates from a real run's traces and write a profile file")
    cal.add_argument("--from", dest="source", required=True, type=Path, metavar="RUN_DIR_OR_EVAL_OUT",
                     help="a sweep run directory (run.sqlite) or an eval output folder (rag-lab eval --out: "
                          "traces.jsonl)")
    cal.add_argument("--out", required=True, type=Path, metavar="PROFILE_YAML", help="the profile file to write")
    cal.add_argument("--base", default="typical",
                     help="the profile whose values the knobs the traces cannot identify keep (a name or a file)")
    cal.add_argument("--name", default="calibrated", help="the calibrated profile's name")
    cal.add_argument("--min-opportunities", type=int, default=5,
                     help="fewer opportunities than this leave a knob at the base value")

    ver = command(sub, "verify", verify_command,
                  "re-run a simulated sweep's best candidates on a real backend (same questions) and compare: "
                  "per-metric gaps, rank agreement, the winner on the real front")
    ver.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a finished simulated sweep's run directory")
    add_backend_options(ver, required=True)  # sim: another simulator profile stands for the real model
    ver.add_argument("--top", type=int, default=None,
                     help="candidates to verify (default 4): the simulated Pareto front of LLM calls vs strict "
                          "containment, best first, padded with the best of the rest")
    ver.add_argument("--by", default=None, metavar="METRIC",
                     help="instead of the front, the best --top candidates by this metric (e.g. quality_f1)")
    ver.add_argument("--questions", type=int, default=None, help="the first N questions of the sweep (default: all)")
    ver.add_argument("--workers", type=int, default=1, help="questions in flight at once (threads; for --backend openai)")
    ver.add_argument("--quiet", action="store_true", help="no progress bar")


def calibrate_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.experiments.calibration.calibrate import calibrate, read_run

    calibration = calibrate(read_run(args.source), base=args.base, name=args.name,
                            min_opportunities=args.min_opportunities)
    path = calibration.write(args.out)
    out = {"profile_file": str(path), **calibration.to_dict()}
    return out, calibration.table_text() + f"\nwrote {path} (use it with --profile {path})"


def verify_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.experiments.calibration.verify import DEFAULT_TOP, run_verify
    from rag_lab.experiments.engine.sweep import BackendSpec

    reject_sim_settings(args)
    if args.seed != 0 or args.chat_format is not None:
        raise ConfigError("verify runs the sweep's own seeds; --seed and --chat-format are not settings of verify")
    backend = BackendSpec.model_validate({
        "kind": args.backend, "model": args.model, "base_url": args.base_url, "cache": not args.no_cache,
        "max_tokens": args.max_tokens, "cassette": args.record,
        **({"profile": args.profile, "knobs": parse_settings(args.sim_knobs, option="--sim")}
           if args.backend == "sim" else {}),
    })
    start = time.perf_counter()
    verification = run_verify(args.run_dir, backend, top=args.top or DEFAULT_TOP, by=args.by, questions=args.questions,
                              workers=args.workers, progress="quiet" if args.quiet else "auto")
    seconds = time.perf_counter() - start
    return ({**verification.to_dict(), "wall_seconds": seconds},
            verification.text() + f"\n({seconds:.1f}s; report: rag-lab report {args.run_dir} --out "
                                  f"{args.run_dir / 'report.html'})")
