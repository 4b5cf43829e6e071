"""Run directories that cannot mix (issue 49, item 2): the process writing a sweep holds its run directory's lock
(rag_lab.experiments.engine.run_lock), takes it before it reads the stored fingerprint, and holds it to the end. Two
different sweeps started together into one new folder: one is refused with a message, the other's table is its run
alone. The same sweep started twice computes each question once. Real ``rag-lab sweep`` processes, the simulator."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from rag_lab.cli import main
from rag_lab.errors import RunDirectoryBusy
from rag_lab.experiments import load_sweep, run_sweep
from rag_lab.experiments.engine.run_lock import LOCK_FILE, RunLock
from rag_lab.experiments.engine.store import RUN_FILE, RunStore

REPO = Path(__file__).resolve().parent.parent

#: Two different small sweeps over the same questions (their grids differ, so do their fingerprints).
SWEEPS = {
    "rounds": {"name": "rounds", "dataset": "world", "split": "test", "types": ["single", "bridge", "comparison"],
               "per_type": 4, "grid": {"round_cap.max_rounds": [1, 2, 3]}},
    "truncation": {"name": "truncation", "dataset": "world", "split": "test",
                   "types": ["single", "bridge", "comparison"], "per_type": 4,
                   "grid": {"truncation.strategy": ["rank_then_truncate", "append_then_truncate"]}},
}
#: Holds a run directory's lock in another process until it is killed.
HOLDER = ("import sys, time; from rag_lab.experiments.engine.run_lock import RunLock; "
          "lock = RunLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(600)")


def sweep_files(tmp_path: Path) -> dict[str, Path]:
    files = {}
    for name, spec in SWEEPS.items():
        files[name] = tmp_path / f"{name}.yaml"
        files[name].write_text(yaml.safe_dump(spec), encoding="utf-8")
    return files


def start_sweep(sweep_file: Path, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rag_lab.cli", "sweep", str(sweep_file), "--out", str(out),
                             "--quiet", "--json", *extra], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def deterministic(table: pd.DataFrame) -> pd.DataFrame:
    cols = ["candidate_id", "seed", *[c for c in table.columns if c.startswith(("param_", "quality_", "cost_"))]]
    return table[cols].reset_index(drop=True)


def hold_lock(run_dir: Path) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], cwd=REPO, stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.slow
def test_two_different_sweeps_started_together_into_one_new_folder_do_not_mix(tmp_path) -> None:
    files = sweep_files(tmp_path)
    out = tmp_path / "shared"
    procs = {name: start_sweep(path, out) for name, path in files.items()}   # at the same moment, one new folder
    results = {name: (proc.wait(timeout=600), *proc.communicate()) for name, proc in procs.items()}
    finished = [name for name, (status, _, _) in results.items() if status == 0]
    refused = [name for name, (status, _, _) in results.items() if status != 0]
    assert len(finished) == 1 and len(refused) == 1, {n: (s, e[-400:]) for n, (s, _, e) in results.items()}
    winner, loser = finished[0], refused[0]
    status, _, err = results[loser]
    assert status == 2 and "Traceback" not in err
    # refused under the lock while the winner wrote ("being written by another sweep (pid N ...)"), or, had the
    # winner finished first, by its fingerprint: either way one line that says why
    assert (f"{out} is being written by another sweep (pid {procs[winner].pid}" in err
            or f"{out} holds another sweep" in err), err
    said = json.loads(results[winner][1])
    alone = run_sweep(SWEEPS[winner], tmp_path / "alone", progress="quiet")
    stored = load_sweep(out)
    assert said["name"] == winner and stored.spec["name"] == winner
    assert said["questions"] == len(alone.qids) and said["runs"] == len(alone.table)
    pd.testing.assert_frame_equal(deterministic(stored.table), deterministic(alone.table))
    store = RunStore.read(out)
    assert {c["candidate_id"] for c in store.candidates()} == set(alone.table["candidate_id"])   # nothing mixed
    assert store.count_rows() == len(alone.table) * len(alone.qids)


@pytest.mark.slow
def test_the_same_sweep_started_twice_with_wait_computes_each_question_once(tmp_path) -> None:
    sweep_file = sweep_files(tmp_path)["rounds"]
    out = tmp_path / "run"
    procs = [start_sweep(sweep_file, out, "--wait") for _ in range(2)]
    said = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr[-800:]
        said.append(json.loads(stdout))
    n_pairs = said[0]["runs"] * said[0]["questions"]
    assert sorted(s["computed"] for s in said) == [0, n_pairs]   # the second waited, then found everything done
    assert RunStore.read(out).count_rows() == n_pairs


@pytest.mark.slow
def test_a_writer_is_refused_naming_the_holders_pid_and_nothing_is_written(tmp_path, capsys) -> None:
    sweep_file = sweep_files(tmp_path)["rounds"]
    out = tmp_path / "run"
    holder = hold_lock(out)
    try:
        status = main(["sweep", str(sweep_file), "--out", str(out), "--quiet"])
        err = capsys.readouterr().err
        assert status == 2 and f"is being written by another sweep (pid {holder.pid}" in err, err
        assert "--wait" in err and len(err.strip().splitlines()) == 1
        assert not (out / RUN_FILE).exists()
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.slow
def test_the_lock_dies_with_its_holder_and_a_waiting_writer_then_runs(tmp_path) -> None:
    sweep_file = sweep_files(tmp_path)["rounds"]
    out = tmp_path / "run"
    holder = hold_lock(out)
    log = tmp_path / "stderr.txt"
    try:
        with log.open("w") as stderr:
            waiting = subprocess.Popen([sys.executable, "-m", "rag_lab.cli", "sweep", str(sweep_file), "--out",
                                        str(out), "--quiet", "--json", "--wait"], cwd=REPO, stdout=subprocess.PIPE,
                                       stderr=stderr, text=True)
        deadline = time.monotonic() + 300
        while "waiting for it to finish" not in log.read_text():   # one warning, naming whom it waits for
            assert waiting.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        assert f"being written by another sweep (pid {holder.pid}" in log.read_text()
        time.sleep(1)
        assert waiting.poll() is None and not (out / RUN_FILE).exists()   # it waits while the holder lives
    finally:
        holder.send_signal(signal.SIGKILL)   # a killed holder leaves no stale lock
        holder.wait()
    stdout, _ = waiting.communicate(timeout=600)
    assert waiting.returncode == 0, log.read_text()[-800:]
    assert json.loads(stdout)["complete"]


def test_the_lock_in_one_process_refuses_a_second_opening_and_is_released_on_close(tmp_path) -> None:
    first = RunLock(tmp_path / "run").acquire()
    with pytest.raises(RunDirectoryBusy, match=r"pid \d+"):
        RunLock(tmp_path / "run").acquire()
    first.release()
    assert (tmp_path / "run" / LOCK_FILE).read_text() == ""   # the holder's record is cleared
    with RunLock(tmp_path / "run"):
        pass


def test_a_locks_record_names_the_command_without_a_urls_secrets(tmp_path, monkeypatch):
    import json
    import sys

    from rag_lab.experiments.engine.run_lock import LOCK_FILE, RunLock

    monkeypatch.setattr(sys, "argv", ["rag-lab", "sweep", "s.yaml", "--base-url",
                                      "https://me:sk-SECRET1@host:8080/v1?api_key=sk-SECRET2", "--out", "d"])
    with RunLock(tmp_path / "run"):
        record = json.loads((tmp_path / "run" / LOCK_FILE).read_text(encoding="utf-8"))
    assert "SECRET" not in record["command"] and "https://host:8080/v1" in record["command"]
