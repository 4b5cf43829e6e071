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
    cal.add_argument("--name", default="calibrated", help="the calibrated profile's name")
    cal.add_argument("--min-opportunities", type=int, default=5,
                     help="fewer opportunities than this leave a knob at the base value")
    cal.add_argument("--json", action="store_true")
    add_verify_parser(sub)


def calibrate_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.experiments.calibrate import calibrate, read_run

    calibration = calibrate(read_run(args.source), base=args.base, name=args.name,
                            min_opportunities=args.min_opportunities)
    path = calibration.write(args.out)
    out = {"profile_file": str(path), **calibration.to_dict()}
    return out, calibration.table_text() + f"\nwrote {path} (use it with --profile {path})"


def add_verify_parser(sub: argparse._SubParsersAction) -> None:
    ver = sub.add_parser("verify", help="re-run a simulated sweep's best candidates on a real backend (same questions) "
                                        "and compare: per-metric gaps, rank agreement, the winner on the real front")
    ver.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a finished simulated sweep's run directory")
    ver.add_argument("--backend", choices=["local", "openai", "sim"], required=True,
                     help="the backend that stands for the real model (sim: another simulator profile)")
    ver.add_argument("--model", default=None,
                     help="--backend openai: the model name; --backend local: a GGUF file or a packaged model name")
    ver.add_argument("--base-url", default=None, help="server URL for --backend openai (else OPENAI_BASE_URL)")
    ver.add_argument("--profile", default="typical", help="--backend sim: the profile (a name or a profile file)")
    ver.add_argument("--sim", action="append", default=[], metavar="KNOB=RATE", dest="sim_knobs",
                     help="--backend sim: override one knob of the profile (repeatable)")
    ver.add_argument("--top", type=int, default=None,
                     help="candidates to verify (default 4): the simulated Pareto front of LLM calls vs strict "
                          "containment, best first, padded with the best of the rest")
    ver.add_argument("--by", default=None, metavar="METRIC",
                     help="instead of the front, the best --top candidates by this metric (e.g. quality_f1)")
    ver.add_argument("--questions", type=int, default=None, help="the first N questions of the sweep (default: all)")
    ver.add_argument("--max-tokens", type=int, default=None, metavar="N",
                     help="cap every LLM call's completion tokens (as rag-lab eval --max-tokens)")
    ver.add_argument("--workers", type=int, default=1, help="questions in flight at once (threads; for --backend openai)")
    ver.add_argument("--no-cache", action="store_true", help="do not use the LLM response cache")
    ver.add_argument("--quiet", action="store_true", help="no progress bar")
    ver.add_argument("--json", action="store_true")


def verify_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    import time

    from rag_lab.cli_pipeline import parse_settings
    from rag_lab.experiments.sweep import BackendSpec
    from rag_lab.experiments.verify import DEFAULT_TOP, run_verify

    if args.backend != "sim" and (args.sim_knobs or args.profile != "typical"):
        raise ValueError("--profile and --sim are settings of --backend sim")
    backend = BackendSpec.model_validate({
        "kind": args.backend, "model": args.model, "base_url": args.base_url, "cache": not args.no_cache,
        "max_tokens": args.max_tokens,
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
