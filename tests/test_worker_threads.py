"""A process pool's workers share the cores out: each sizes its native thread pools (MKL, OpenMP, OpenBLAS) to
its share unless the user has set them, and the processes executor hands them that share."""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor

import pytest

import rag_lab.experiments.engine.executors as executors
from rag_lab.experiments.engine.worker import (
    THREAD_POOL_VARIABLES,
    WorkUnit,
    init_worker,
    limit_threads,
    threads_per_worker,
)


def test_each_worker_gets_its_share_of_the_cores() -> None:
    assert threads_per_worker(2, cpus=2) == 1
    assert threads_per_worker(1, cpus=2) == 2
    assert threads_per_worker(4, cpus=2) == 1       # never none
    assert threads_per_worker(2, cpus=8) == 4


def test_limit_threads_sets_what_the_user_left_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # this test process's own pool is not touched
    for name in THREAD_POOL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    limit_threads(1)
    assert {name: os.environ[name] for name in THREAD_POOL_VARIABLES} == {
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "3", "OPENBLAS_NUM_THREADS": "1"}


def test_the_processes_executor_sizes_its_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict = {}

    class Recording(ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            seen.update(kwargs)
            raise RuntimeError("recorded")

    monkeypatch.setattr(executors, "ProcessPoolExecutor", Recording)
    unit = WorkUnit(candidate_id="c", config=None, seed=0, qids=("q",))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="recorded"):
        list(executors.execute([unit], context=None, local_state=None, executor="processes", workers=2))  # type: ignore[arg-type]
    assert seen["initializer"] is init_worker
    assert seen["initargs"][1] == threads_per_worker(2)
