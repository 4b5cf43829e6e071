"""scripts/disable_policy.py: a notebook whose finding depends on a policy fails with that policy switched
off (exit 0, "made to fail"); switching off an unrelated policy leaves it passing (exit 1); a definitional
finding failing proves nothing (exit 3); with every simulator knob at 0 a measured finding still holds
(exit 0) and one that only the knob produced fails (exit 1: it rests on a knob)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from timing import scaled

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = '''
import tempfile
from rag_lab.experiments import paired_finding, run_sweep
spec = {"name": "t", "dataset": "world", "split": "test", "types": ["bridge"], "per_type": 12,
        "backend": {"kind": "sim"}, "grid": {"round_cap.max_rounds": [1, 3]}}
result = run_sweep(spec, tempfile.mkdtemp(), progress="quiet")
finding = paired_finding(result, "cost_rounds", candidate={"round_cap.max_rounds": 3},
                         reference={"round_cap.max_rounds": 1}, direction="above", claim="more rounds", kind=KIND)
display(finding)
assert finding.holds, finding.message
'''


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_switching_off_the_policy_makes_the_finding_fail(tmp_path):
    script = tmp_path / "99_probe.py"
    script.write_text('KIND = "measured"\n' + NOTEBOOK)
    definitional = tmp_path / "98_probe.py"
    definitional.write_text('KIND = "definitional"\n' + NOTEBOOK)

    def run(*args, notebook=script):
        return subprocess.run([sys.executable, str(REPO / "scripts" / "disable_policy.py"), *args, str(notebook)],
                              capture_output=True, text=True, timeout=scaled(280))

    off = run("round_cap")
    assert off.returncode == 0, off.stdout + off.stderr
    assert "MADE TO FAIL: Finding does NOT hold (measured): more rounds" in off.stdout and "Δ = +0.000" in off.stdout
    assert "FAILS  [measured]  more rounds" in off.stdout
    unrelated = run("hyde")
    assert unrelated.returncode == 1, unrelated.stdout + unrelated.stderr
    assert "Finding holds (measured): more rounds" in unrelated.stdout
    tautology = run("round_cap", notebook=definitional)   # the same contrast declared definitional
    assert tautology.returncode == 3 and "proves nothing" in tautology.stdout, tautology.stdout
    knobs_off = run("--knobs-off")                         # the round cap's effect rests on no knob
    assert knobs_off.returncode == 0 and "none rests on a simulator knob" in knobs_off.stdout, knobs_off.stdout
    pinned = run("round_cap", "--pin", "max_rounds=1")  # both candidates at one round
    assert pinned.returncode == 0 and "(1.000 vs 1.000)" in pinned.stdout, pinned.stdout
    assert run("no_such_policy").returncode != 0


KNOB_NOTEBOOK = '''
import tempfile
display = print
from rag_lab.experiments import paired_finding, run_sweep
spec = {"name": "k", "dataset": "world", "split": "test", "types": ["comparison"], "per_type": 20,
        "base": {"round_cap.max_rounds": 4, "router.enabled": False},
        "backend": {"kind": "sim", "knobs": {"budget_anchoring": 1.0, "budget_thrift": 0.0}},
        "grid": {"disclosure.disclosed": [False, True]}}
result = run_sweep(spec, tempfile.mkdtemp(), progress="quiet")
finding = paired_finding(result, "cost_llm_calls", candidate={"disclosure.disclosed": True}, direction="above",
                         kind="measured", claim="disclosure raises LLM calls")
display(finding)
assert finding.holds, finding.message
'''


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_knobs_off_unmasks_a_finding_that_only_a_knob_produces(tmp_path):
    """Declared measured, but produced by budget_anchoring=1.0: with every knob at 0 it fails (exit 1)."""
    script = tmp_path / "97_probe.py"
    script.write_text(KNOB_NOTEBOOK)
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=scaled(280), cwd=REPO,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert plain.returncode == 0, plain.stdout + plain.stderr      # with the knob at 1.0 it holds
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "disable_policy.py"), "--knobs-off", str(script)],
                          capture_output=True, text=True, timeout=scaled(280))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "rests on a knob" in done.stdout and "FAILS  [measured]  disclosure raises LLM calls" in done.stdout
