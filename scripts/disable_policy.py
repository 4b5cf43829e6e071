"""Run a course notebook with one policy's code switched off, or with every simulator knob at 0, and say
what that shows about each of its findings *given the kind it declares*.

    python scripts/disable_policy.py round_cap notebooks/01_round_cap.py
    python scripts/disable_policy.py truncation notebooks/06_truncation.py --pin strategy=rank_then_truncate
    python scripts/disable_policy.py --knobs-off notebooks/02_budget_disclosure.py

**Policy off** (``POLICY``): every pipeline the notebook builds (sweeps, widgets, single runs) ignores the
configuration of POLICY and runs with that policy at its defaults (or at the values given with ``--pin``).
Both arms of a contrast about the policy then behave alike, so *any* two-arm finding about it fails —
a definitional one (HyDE's extra call) as surely as a measured one. So a failure says the finding
depends on the policy's code, not that it is measured: a failing definitional finding proves nothing,
and the script says so.

**Knobs off** (``--knobs-off``): every simulated LLM the notebook builds has each behaviour-rate knob
(``synonym_spinning``, ``budget_anchoring``, the format failures, ...) at 0, policies untouched. This
is what tells the kinds apart: a by-construction finding must fail (its effect was the knob's), a
measured one must still hold (it does not rest on a knob).

Every finding the notebook makes is recorded (with ``paired_finding``'s declared ``kind``) and listed
with whether it holds. The notebook runs as a script (its Jupytext percent-format ``.py`` pair) in the
notebooks folder, like nbmake runs it; it stops at its first failing assert.

Exit status, policy off: 0 when a measured or by-construction finding failed (it depends on the policy),
3 when only a definitional one did (that proves nothing), 1 when the notebook ran to the end. Knobs off:
0 when the outcome matches the kinds (the first failure is a by-construction finding, or everything held
and nothing is by construction), 1 when it does not (a measured finding failed: it rests on a knob; or a
by-construction finding held: its knob is not what makes it). 2 on any other error.
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

    def __init__(self, config, resources, backend, *args, **kwargs):  # noqa: N807 (the patched constructor)
        fixed = config.model_copy(update={policy: default})
        if values:
            fixed = fixed.with_params({k: parse_value(k, v) for k, v in values.items()})
        original(self, fixed, resources, backend, *args, **kwargs)

    Pipeline.__init__ = __init__
    return default, values


def rate_knobs() -> list[str]:
    """The simulator's behaviour-rate knobs: the float fields of a profile bounded to [0, 1]."""
    from rag_lab.llm.sim.profile import SimulatorProfile

    out = []
    for name, info in SimulatorProfile.model_fields.items():
        bounds = {type(m).__name__: m for m in info.metadata}
        if info.annotation is float and "Ge" in bounds and "Le" in bounds and bounds["Le"].le == 1.0:
            out.append(name)
    return out


def _knobs_off() -> list[str]:
    from rag_lab.llm.simulator import SimulatedBackend

    knobs = rate_knobs()
    original = SimulatedBackend.__init__

    def __init__(self, *args, **kwargs):  # noqa: N807 (the patched constructor)
        original(self, *args, **kwargs)
        self.profile = self.profile.model_copy(update={k: 0.0 for k in knobs})

    SimulatedBackend.__init__ = __init__
    return knobs


def _record() -> list:
    """Wrap ``paired_finding`` (where the notebooks import it from) so that every finding is kept."""
    import rag_lab.experiments as experiments
    from rag_lab.experiments.engine import findings

    made: list = []
    original = findings.paired_finding

    def paired_finding(*args, **kwargs):
        finding = original(*args, **kwargs)
        made.append(finding)
        return finding

    experiments.paired_finding = findings.paired_finding = paired_finding
    return made


def _summary(made: list) -> str:
    lines = [f"  {'holds' if f.holds else 'FAILS'}  [{f.kind}]  {f.claim} (Δ = {f.delta:+.3f})" for f in made]
    return "\n".join(["findings made:", *lines]) if lines else "no finding was made"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", nargs="?", help="the policy's config name (round_cap, truncation, zero_yield, ...)")
    parser.add_argument("notebook", type=Path, help="the notebook's percent-format .py pair")
    parser.add_argument("--pin", action="append", default=[], metavar="FIELD=VALUE",
                        help="run with this value of the policy's field instead of its default (repeatable)")
    parser.add_argument("--knobs-off", action="store_true",
                        help="set every simulator behaviour knob to 0 instead of switching a policy off")
    args = parser.parse_intermixed_args(argv)
    if bool(args.policy) == args.knobs_off:
        parser.error("give a POLICY to switch off, or --knobs-off (not both)")
    script = args.notebook.resolve()
    if script.suffix != ".py" or not script.exists():
        parser.error(f"{args.notebook}: give the notebook's .py pair")
    if args.knobs_off:
        knobs = _knobs_off()
        print(f"running {script.name} with every simulator knob at 0 ({', '.join(knobs)})", flush=True)
    else:
        default, values = _pin(args.policy, args.pin)
        print(f"running {script.name} with {args.policy} pinned to {default!r} {values or ''} in every pipeline",
              flush=True)
    made = _record()
    os.chdir(script.parent)
    sys.path.insert(0, str(script.parent))
    try:
        runpy.run_path(str(script), init_globals={"display": print}, run_name="__main__")
    except AssertionError as exc:
        print(f"\nMADE TO FAIL: {exc}\n\n{_summary(made)}")
        failed = next((f for f in made if not f.holds), None)
        kind = failed.kind if failed is not None else "measured"
        if args.knobs_off:
            if kind == "by_construction":
                print("\nas its kind says: a by-construction finding vanishes with the knobs at 0")
                return 0
            print(f"\na {kind} finding fails with every knob at 0: it rests on a knob — declare it by_construction, "
                  "with its control")
            return 1
        if kind == "definitional":
            print("\nonly a definitional finding failed: with the policy off both arms are alike, so a finding true "
                  "by definition fails too — this proves nothing about a measured effect")
            return 3
        return 0
    except Exception:  # noqa: BLE001 (any other failure is reported as such)
        traceback.print_exc()
        return 2
    print(f"\n{_summary(made)}")
    if args.knobs_off:
        built = [f for f in made if f.kind == "by_construction" and f.holds]
        if built:
            print("\na by-construction finding holds with every knob at 0: its knob is not what makes it")
            return 1
        print("\nevery finding holds with the knobs at 0: none rests on a simulator knob")
        return 0
    print(f"\nthe notebook ran to the end with {args.policy} switched off: its findings do not depend on it")
    return 1


if __name__ == "__main__":
    sys.exit(main())
