"""``rag-lab plan``: how many questions a declared family of claims needs, planned from a pilot sweep
(:mod:`rag_lab.experiments.planning`)."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from rag_lab.cli.options import command


def register(sub: argparse._SubParsersAction) -> None:
    plan = command(sub, "plan", plan_command,
                   "plan a study's size from a pilot: the power the pilot had, the questions each declared claim "
                   "needs for 80%% power, and the effect each size would detect")
    plan.add_argument("pilot", type=Path, metavar="PILOT",
                      help="the pilot: a sweep's run directory, or a sweep file whose cassette is replayed (offline)")
    plan.add_argument("--findings", type=Path, default=None, metavar="SWEEP_FILE",
                      help="the study's sweep file, whose findings: are planned on the pilot's configurations "
                           "(default: the pilot's own findings)")
    plan.add_argument("--n", type=int, nargs="+", default=[], metavar="N",
                      help="study sizes to state the detectable effect at (e.g. --n 100 200)")
    plan.add_argument("--delta", nargs="+", default=[], metavar="I=DELTA",
                      help="the target effect of finding I (1-based), instead of the pilot's own |delta|")
    plan.add_argument("--alpha", type=float, default=0.05, help="the family's level (default 0.05)")
    plan.add_argument("--holm", action="store_true",
                      help="plan for Holm over the family (alpha / number of claims) instead of fixed sequence")
    plan.add_argument("--record-pilot", type=Path, default=None, metavar="SWEEP_FILE",
                      help="write the pilot's question ids into this sweep file as its pilot: (the questions every "
                           "declared claim's test then leaves out); refused when the file already names a pilot")


def plan_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.errors import ConfigError
    from rag_lab.experiments.engine.sweep_file import load_sweep_spec
    from rag_lab.experiments.planning import plan_study
    from rag_lab.experiments.sweep_runner import load_sweep, run_sweep

    if args.pilot.is_file():
        work = Path(tempfile.mkdtemp(prefix="rag_lab_plan_"))
        pilot = run_sweep(load_sweep_spec(args.pilot), work / "pilot", progress="quiet", replay=True)
    else:
        pilot = load_sweep(args.pilot)
    spec = load_sweep_spec(args.findings).model_dump() if args.findings is not None else (pilot.spec or {})
    claims = list(spec.get("findings") or [])
    if not claims:
        raise ConfigError(f"{args.findings or args.pilot} declares no findings: nothing to plan (give --findings)")
    targets = {}
    for item in args.delta:
        index, _, value = item.partition("=")
        try:
            targets[int(index) - 1] = float(value)
        except ValueError:
            raise ConfigError(f"--delta takes I=DELTA (finding number = target effect), got {item!r}") from None
    plans = plan_study(pilot, claims, alpha=args.alpha, correction="holm" if args.holm else "fixed-sequence",
                       sizes=args.n, targets=targets)
    if args.record_pilot is not None:
        record_pilot(args.record_pilot, pilot.qids)
    head = (f"planned on the pilot {args.pilot} ({len(pilot.qids)} questions); "
            f"{'Holm' if args.holm else 'fixed-sequence'} family of {len(plans)} at α={args.alpha:g}:")
    lines = [head, *(f"  {i}. {p.line()}" for i, p in enumerate(plans, start=1))]
    return {"pilot": str(args.pilot), "plans": [p.as_dict() for p in plans]}, "\n".join(lines)


def record_pilot(sweep_file: Path, qids: list[str]) -> None:
    """Append ``pilot:`` (the pilot's question ids, one a line) to ``sweep_file``, keeping the rest of the file as
    written; a file that already names a pilot is refused (a pilot is declared once, before the study's calls)."""
    from rag_lab.config_files import read_mapping
    from rag_lab.errors import ConfigError

    if read_mapping(sweep_file, "sweep").get("pilot"):
        raise ConfigError(f"{sweep_file} already names its pilot: a pilot is declared once")
    text = sweep_file.read_text(encoding="utf-8")
    lines = [f"pilot:   # the {len(qids)} questions of the pilot the claims were planned on (rag-lab plan --record-pilot)",
             *(f"  - {qid!r}" for qid in qids)]
    sweep_file.write_text(text.rstrip("\n") + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
