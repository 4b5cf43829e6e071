"""scripts/disable_policy.py: a notebook whose finding depends on a policy fails with that policy switched
off (exit 0, "made to fail"); switching off an unrelated policy leaves it passing (exit 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = '''
import tempfile
from rag_lab.experiments import paired_finding, run_sweep
spec = {"name": "t", "dataset": "world", "split": "test", "types": ["bridge"], "per_type": 6,
        "backend": {"kind": "sim"}, "grid": {"round_cap.max_rounds": [1, 3]}}
result = run_sweep(spec, tempfile.mkdtemp(), progress="quiet")
finding = paired_finding(result, "cost_rounds", candidate={"round_cap.max_rounds": 3},
                         reference={"round_cap.max_rounds": 1}, direction="above", claim="more rounds")
display(finding)
assert finding.holds, finding.message
'''


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_switching_off_the_policy_makes_the_finding_fail(tmp_path):
    script = tmp_path / "99_probe.py"
    script.write_text(NOTEBOOK)

    def run(*args):
        return subprocess.run([sys.executable, str(REPO / "scripts" / "disable_policy.py"), *args, str(script)],
                              capture_output=True, text=True, timeout=280)

    off = run("round_cap")
    assert off.returncode == 0, off.stdout + off.stderr
    assert "MADE TO FAIL: Finding does NOT hold: more rounds" in off.stdout and "Δ = +0.000" in off.stdout
    unrelated = run("hyde")
    assert unrelated.returncode == 1, unrelated.stdout + unrelated.stderr
    assert "Finding holds: more rounds" in unrelated.stdout
    pinned = run("round_cap", "--pin", "max_rounds=1")  # both candidates at one round
    assert pinned.returncode == 0 and "(1.000 vs 1.000)" in pinned.stdout, pinned.stdout
    assert run("no_such_policy").returncode != 0
