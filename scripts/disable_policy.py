"""Run a course notebook with one policy's code switched off, to show that its asserted finding fails.

    python scripts/disable_policy.py round_cap notebooks/01_round_cap.py
    python scripts/disable_policy.py truncation notebooks/06_truncation.py --pin strategy=rank_then_truncate

"Switched off" means: every pipeline the notebook builds (sweeps, widgets, single runs) ignores the
configuration of POLICY and runs with that policy at its defaults (or at the values given with
``--pin``) — so configurations that differ only in that policy behave identically, and a finding about
the policy's measured effect must see Δ = 0 and fail. The notebook runs as a script (its Jupytext
percent-format ``.py`` pair) in the notebooks folder, like nbmake runs it.

Exit status: 0 when the notebook failed with an AssertionError (the finding depends on the policy: the
expected outcome), 1 when it ran to the end (the finding does not depend on the policy), 2 on any
other error. The assertion message — expected vs measured — is printed.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from pathlib import Path


def _pin(policy: str, pins: list[str]):
    from rag_lab.pipeline import Pipeline, PipelineConfig
    from rag_lab.widgets.controls import parse_value

    if policy not in PipelineConfig.model_fields:
        raise SystemExit(f"unknown policy {policy!r}; policies: {', '.join(PipelineConfig.model_fields)}")
    values = {}
    for pin in pins:
        key, _, raw = pin.partition("=")
        values[f"{policy}.{key}"] = raw
    default = PipelineConfig.model_fields[policy].default
    original = Pipeline.__init__

    def __init__(self, config, resources, backend):  # noqa: N807 (the patched constructor)
        fixed = config.model_copy(update={policy: default})
        if values:
            fixed = fixed.set({k: parse_value(k, v) for k, v in values.items()})
        original(self, fixed, resources, backend)

    Pipeline.__init__ = __init__
    return default, values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", help="the policy's config name (round_cap, truncation, zero_yield, echo, ...)")
    parser.add_argument("notebook", type=Path, help="the notebook's percent-format .py pair")
    parser.add_argument("--pin", action="append", default=[], metavar="FIELD=VALUE",
                        help="run with this value of the policy's field instead of its default (repeatable)")
    args = parser.parse_args(argv)
    script = args.notebook.resolve()
    if script.suffix != ".py" or not script.exists():
        parser.error(f"{args.notebook}: give the notebook's .py pair")
    default, values = _pin(args.policy, args.pin)
    print(f"running {script.name} with {args.policy} pinned to {default!r} {values or ''} in every pipeline", flush=True)
    os.chdir(script.parent)
    sys.path.insert(0, str(script.parent))
    try:
        runpy.run_path(str(script), init_globals={"display": print}, run_name="__main__")
    except AssertionError as exc:
        print(f"\nMADE TO FAIL: {exc}")
        return 0
    except Exception:  # noqa: BLE001 (any other failure is reported as such)
        traceback.print_exc()
        return 2
    print(f"\nthe notebook ran to the end with {args.policy} switched off: its findings do not depend on it")
    return 1


if __name__ == "__main__":
    sys.exit(main())
