"""Where sweep units run: in this process (``serial``), in a bounded thread pool (``threads``, for
network backends whose calls wait on I/O), in a spawned process pool (``processes``), or on a Dask
distributed cluster (``dask``). Each executor yields every unit's outcomes as the unit finishes, in
completion order; the caller writes them to the store, so only the parent process ever writes.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.worker import (
    QuestionOutcome,
    WorkContext,
    WorkerState,
    WorkUnit,
    init_worker,
    run_unit,
    threads_per_worker,
)


@dataclass(frozen=True)
class Executor:
    """One executor's properties: ``in_process`` — its units run in this process, on this process's
    :class:`~rag_lab.experiments.engine.worker.WorkerState` (serial, threads); the others' workers build their own."""

    name: str
    in_process: bool


#: The executors by name, with their properties (what callers ask instead of listing names).
EXECUTORS = {e.name: e for e in (Executor("serial", True), Executor("threads", True), Executor("processes", False),
                                 Executor("dask", False))}


def in_process(executor: str) -> bool:
    """Whether ``executor``'s units run in this process (see :class:`Executor`)."""
    return EXECUTORS[executor].in_process


def check_executor(executor: str, workers: int, dask_address: Any = None) -> None:
    """Clear errors for an unknown executor, a bad worker count or an address without Dask."""
    if executor not in EXECUTORS:
        raise ConfigError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"workers must be a positive integer, got {workers!r}")
    if dask_address is not None and executor != "dask":
        raise ConfigError(f"a Dask address needs executor='dask', not {executor!r}")


def execute(
    units: Sequence[WorkUnit],
    context: WorkContext,
    local_state: WorkerState | None,
    executor: str = "serial",
    workers: int = 1,
    dask_address: Any = None,
) -> Iterator[list[QuestionOutcome]]:
    """Run ``units``; yield each unit's outcomes as it finishes. ``local_state`` serves the serial
    and thread executors (built in this process); process and Dask workers build their own."""
    check_executor(executor, workers, dask_address)
    if not units:
        return
    if in_process(executor) and local_state is None:
        raise ConfigError(f"the {executor} executor needs this process's WorkerState")
    if executor == "serial":
        for unit in units:
            yield local_state.run(unit)  # type: ignore[union-attr]
    elif executor == "threads":
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rag-lab-sweep") as pool:
            yield from _as_completed(pool, [pool.submit(local_state.run, u) for u in units])  # type: ignore[union-attr]
    elif executor == "processes":
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=init_worker, initargs=(context, threads_per_worker(workers)))
        with pool:
            yield from _as_completed(pool, [pool.submit(run_unit, context, u) for u in units])
    else:
        yield from _dask(units, context, workers, dask_address)


def _as_completed(pool: ThreadPoolExecutor | ProcessPoolExecutor, futures: list[Future]) -> Iterator[list[QuestionOutcome]]:
    """Yield results as futures finish; on an error or an abandoned generator, cancel what has not started."""
    pending = set(futures)
    try:
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
    finally:
        if pending:
            pool.shutdown(wait=True, cancel_futures=True)


def _dask(units: Sequence[WorkUnit], context: WorkContext, workers: int, address: Any) -> Iterator[list[QuestionOutcome]]:
    """Run on Dask distributed: ``address`` is a scheduler address, a ``distributed.Client``, or None
    for a new loopback ``LocalCluster`` of ``workers`` single-threaded processes. Each Dask worker
    builds its :class:`WorkerState` once (cached per process by :func:`run_unit`)."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ConfigError("executor 'dask' needs the 'distributed' package (pip install distributed)") from None
    owned: list[Any] = []
    if isinstance(address, Client):
        client = address
    elif address is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None)
        client = Client(cluster)
        owned += [client, cluster]
    else:
        client = Client(address)
        owned.append(client)
    futures = []
    try:
        shared = client.scatter(context, broadcast=True)
        futures = [client.submit(run_unit, shared, unit, pure=False) for unit in units]
        for future in as_completed(futures):
            yield future.result()
    finally:
        if futures:
            client.cancel(futures)
        for thing in owned:
            thing.close()
