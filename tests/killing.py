"""Kill a ``rag-lab sweep`` process in the middle of its run, then resume it: the one loop the sweep, search
and racing tests share."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml
from timing import scaled

from rag_lab.experiments.engine.store import RUN_FILE

REPO = Path(__file__).resolve().parent.parent


def stored_rows(run_dir: Path) -> int:
    """How many metrics rows the run directory's store holds (0 before the store exists)."""
    try:
        with sqlite3.connect(run_dir / RUN_FILE, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM rows").fetchone()[0]
    except sqlite3.Error:  # not created yet
        return 0


@dataclass(frozen=True)
class KilledSweep:
    command: list[str]  #: the sweep's command line, to resume it with
    run_dir: Path
    killed_at: int  #: rows stored when the process was gone
    resumed: dict  #: the resumed run's ``--json`` summary


def kill_mid_sweep_then_resume(sweep: dict, tmp_path: Path, *, rows_at_kill: int, wait_s: float = 180,
                               at_kill: Callable[[Path], None] | None = None) -> KilledSweep:
    """Start ``rag-lab sweep`` on ``sweep`` and SIGKILL it once ``rows_at_kill`` rows are stored; check that it
    died of the signal; call ``at_kill(run_dir)`` to inspect what was left; run the same command again to
    completion and return what it said."""
    sweep_file = tmp_path / "killed.yaml"
    sweep_file.write_text(yaml.safe_dump(sweep))
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "rag_lab.cli", "sweep", str(sweep_file), "--out", str(run_dir), "--quiet"]
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + wait_s
    try:
        while stored_rows(run_dir) < rows_at_kill:
            assert proc.poll() is None, f"the sweep ended before it was killed: {proc.stderr.read().decode()}"
            assert time.monotonic() < deadline, f"fewer than {rows_at_kill} rows after {wait_s:.0f} s"
            time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL, f"the sweep was not killed by the signal: {proc.returncode}"
    killed_at = stored_rows(run_dir)
    assert killed_at >= rows_at_kill
    if at_kill is not None:
        at_kill(run_dir)

    resume = subprocess.run([*command, "--json"], cwd=REPO, capture_output=True, text=True, timeout=scaled(300))
    assert resume.returncode == 0, resume.stderr
    resumed = json.loads(resume.stdout)
    assert resumed["complete"] and resumed["reused"] == killed_at
    return KilledSweep(command, run_dir, killed_at, resumed)
