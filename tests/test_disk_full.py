"""A full disk (issue 49, item 6): under ``--out`` it is one line naming the full path and saying the run resumes, with
no traceback and no row lost, and the resume gives the table of a run alone; under ``RAG_LAB_CACHE`` the sweep goes on
uncached after one warning, to the same table. Real full disks: a 2 MiB tmpfs, mounted for the test (skipped where
mounting is not allowed); sqlite's own limit (``PRAGMA max_page_count``) makes the same error without one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml

from rag_lab.errors import StorageFull
from rag_lab.experiments import load_sweep, run_sweep
from rag_lab.experiments.engine.resolved_sweep import ResolvedSweep
from rag_lab.experiments.engine.store import RunStore
from rag_lab.experiments.engine.sweep import SweepSpec
from rag_lab.experiments.engine.worker import QuestionOutcome
from rag_lab.llm.cache import ResponseCache
from rag_lab.llm.types import Completion, Usage
from rag_lab.loaders import load_dataset
from rag_lab.paths import CacheFullWarning

REPO = Path(__file__).resolve().parent.parent
#: 36 (candidate, question) pairs: about 250 KB of store, more than the room the full disk leaves.
SWEEP = {"name": "rounds", "dataset": "world", "split": "test", "types": ["single", "bridge", "comparison"],
         "per_type": 4, "grid": {"round_cap.max_rounds": [1, 2, 3]}}


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Callable[[str, int], Path]]:
    """``small_disk(name, room)``: a new 2 MiB filesystem at ``tmp_path/name`` with ``room`` bytes left free (the
    rest taken by a file ``filler``); unmounted at the end."""
    mounted: list[Path] = []

    def make(name: str, room: int) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)], capture_output=True,
                              text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a small filesystem here ({done.stderr.strip()})")
        mounted.append(folder)
        stat = os.statvfs(folder)
        (folder / "filler").write_bytes(bytes(stat.f_bavail * stat.f_frsize - room))
        return folder

    yield make
    for folder in mounted:
        if subprocess.run(["umount", str(folder)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(folder)], check=True)


def sweep(sweep_file: Path, out: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rag_lab.cli", "sweep", str(sweep_file), "--out", str(out), "--quiet",
                           "--json"], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


def deterministic(table: pd.DataFrame) -> pd.DataFrame:
    cols = ["candidate_id", "seed", *[c for c in table.columns if c.startswith(("param_", "quality_", "cost_"))]]
    return table[cols].reset_index(drop=True)


@pytest.fixture(scope="module")
def alone(tmp_path_factory) -> pd.DataFrame:
    """The table of the sweep run alone, on a disk with room."""
    return deterministic(run_sweep(SWEEP, tmp_path_factory.mktemp("alone"), progress="quiet").table)


@pytest.mark.slow
def test_a_full_out_disk_is_one_line_naming_the_path_and_the_run_resumes_to_the_same_table(
        tmp_path, small_disk, alone) -> None:
    disk = small_disk("out", 400 << 10)
    sweep_file = tmp_path / "rounds.yaml"
    sweep_file.write_text(yaml.safe_dump(SWEEP), encoding="utf-8")
    run_dir = disk / "run"
    first = sweep(sweep_file, run_dir)
    assert first.returncode == 2 and "Traceback" not in first.stderr, first.stderr[-2000:]
    assert first.stderr.strip().splitlines() == [
        f"rag-lab: error: the disk holding {run_dir / 'run.sqlite'} is full (sqlite: database or disk is full); every "
        "finished question is kept: free some space, then run the same command again and it resumes where it stopped"]
    kept = RunStore.read(run_dir).count_rows()
    n_pairs = len(alone) * 12
    assert 0 < kept < n_pairs, kept
    (disk / "filler").unlink()   # space freed
    resumed = sweep(sweep_file, run_dir)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    said = json.loads(resumed.stdout)
    assert (said["reused"], said["computed"]) == (kept, n_pairs - kept)   # nothing lost, nothing computed twice
    pd.testing.assert_frame_equal(deterministic(load_sweep(run_dir).table), alone)


@pytest.mark.slow
def test_a_full_cache_disk_degrades_to_uncached_with_one_warning(tmp_path, small_disk, alone) -> None:
    disk = small_disk("cache", 100 << 10)
    sweep_file = tmp_path / "rounds.yaml"
    sweep_file.write_text(yaml.safe_dump(SWEEP), encoding="utf-8")
    done = sweep(sweep_file, tmp_path / "run", env={"RAG_LAB_CACHE": str(disk)})
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"rag-lab: CacheFullWarning: the disk holding the cache folder "
                                                   f"{disk} is full"), done.stderr[-2000:]
    assert json.loads(done.stdout)["complete"]
    pd.testing.assert_frame_equal(deterministic(load_sweep(tmp_path / "run").table), alone)


def generation(i: int) -> Completion:
    return Completion(text=f"answer {i} " + "x" * 2000, usage=Usage(prompt_tokens=10, completion_tokens=400))


def test_the_response_cache_stops_storing_at_sqlite_full_and_keeps_answering_what_it_holds(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "llm.sqlite")
    cache.put("k0", "b", "m", generation(0))
    pages = cache._conn.execute("PRAGMA page_count").fetchone()[0]
    cache._conn.execute(f"PRAGMA max_page_count = {pages + 2}")   # sqlite's own "database or disk is full"
    with pytest.warns(CacheFullWarning) as warned:
        for i in range(1, 30):
            cache.put(f"k{i}", "b", "m", generation(i))
    assert len(warned) <= 1 and cache.full   # one warning (none if another test already warned for this folder)
    assert cache.get("k0").text.startswith("answer 0") and cache.get("k29") is None


@pytest.mark.slow
def test_a_full_run_store_is_a_storage_full_naming_the_file_and_keeps_its_rows(tmp_path) -> None:
    spec = SweepSpec.from_dict(SWEEP)
    resolved = ResolvedSweep.build(spec, load_dataset("world").evalset)
    with RunStore.create(tmp_path / "run", resolved) as store:
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count = {pages + 3}")
        written = 0
        with pytest.raises(StorageFull, match=f"the disk holding {tmp_path / 'run' / 'run.sqlite'} is full"):
            for qid in resolved.qids:
                outcome = QuestionOutcome(resolved.runs[0].candidate_id, qid, {"q": qid}, os.urandom(3000), b"")
                written += store.write(outcome)
        assert 0 < written < len(resolved.qids)
    assert RunStore.read(tmp_path / "run").count_rows() == written   # the committed rows stay, whole
