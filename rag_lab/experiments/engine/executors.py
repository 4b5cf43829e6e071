"""Where sweep units run: in this process (``serial``), in a bounded thread pool (``threads``, for
network backends whose calls wait on I/O), in a spawned process pool (``processes``), or on a Dask
distributed cluster (``dask``). Each executor yields every unit's outcomes as the unit finishes, in
completion order; the caller writes them to the store, so only the parent process ever writes.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rag_lab.errors import ConfigError
from rag_lab.registry import Registry

if TYPE_CHECKING:  # the worker loads the pipeline; `rag-lab --help` reads the rows without it
    from rag_lab.experiments.engine.worker import QuestionOutcome, WorkContext, WorkerState, WorkUnit

#: How an executor runs units: ``(units, context, local_state, workers, dask_address)`` → each unit's outcomes.
RunUnits = Callable[["Sequence[WorkUnit]", "WorkContext", "WorkerState | None", int, Any],
                    "Iterator[list[QuestionOutcome]]"]


@dataclass(frozen=True)
class Executor:
    """One executor: ``run`` runs the units; ``in_process`` — its units run in this process, on this process's
    :class:`~rag_lab.experiments.engine.worker.WorkerState` (serial, threads), the others' workers build their
    own; ``what`` is the line ``rag-lab sweep --help`` shows."""

    run: RunUnits
    in_process: bool
    what: str


def _serial(units: Sequence[WorkUnit], context: WorkContext, local_state: WorkerState | None, workers: int,
            address: Any) -> Iterator[list[QuestionOutcome]]:
    for unit in units:
        yield local_state.run(unit)  # type: ignore[union-attr]


def _threads(units: Sequence[WorkUnit], context: WorkContext, local_state: WorkerState | None, workers: int,
             address: Any) -> Iterator[list[QuestionOutcome]]:
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rag-lab-sweep") as pool:
        yield from _as_completed(pool, [pool.submit(local_state.run, u) for u in units])  # type: ignore[union-attr]


def _processes(units: Sequence[WorkUnit], context: WorkContext, local_state: WorkerState | None, workers: int,
               address: Any) -> Iterator[list[QuestionOutcome]]:
    from rag_lab.experiments.engine.worker import init_worker, run_unit, threads_per_worker

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=init_worker, initargs=(context, threads_per_worker(workers)))
    with pool:
        yield from _as_completed(pool, [pool.submit(run_unit, context, u) for u in units])


def _dask(units: Sequence[WorkUnit], context: WorkContext, local_state: WorkerState | None, workers: int,
          address: Any) -> Iterator[list[QuestionOutcome]]:
    """Run on Dask distributed: ``address`` is a scheduler address, a ``distributed.Client``, or None
    for a new loopback ``LocalCluster`` of ``workers`` single-threaded processes. Each Dask worker
    builds its :class:`~rag_lab.experiments.engine.worker.WorkerState` once (cached per process by
    :func:`~rag_lab.experiments.engine.worker.run_unit`)."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ConfigError("executor 'dask' needs the 'distributed' package (pip install distributed)") from None
    from rag_lab.experiments.engine.worker import run_unit

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


#: The executors by name (the CLI's ``--executor`` choices and help are read from it).
EXECUTORS: Registry[Executor] = Registry("executor")
EXECUTORS.add("serial", Executor(_serial, True, "one question after another in this process"))
EXECUTORS.add("threads", Executor(_threads, True, "a thread pool in this process, for backends that wait on I/O"))
EXECUTORS.add("processes", Executor(_processes, False, "a pool of spawned processes, each with its own pipeline"))
EXECUTORS.add("dask", Executor(_dask, False, "a Dask distributed cluster (a local one unless --dask names one)"))


def in_process(executor: str) -> bool:
    """Whether ``executor``'s units run in this process (see :class:`Executor`)."""
    return EXECUTORS[executor].in_process


def executors_help() -> str:
    """One clause per executor, for ``--executor``'s help: ``serial: one question after another ...; threads: ...``."""
    return "; ".join(f"{name}: {executor.what}" for name, executor in EXECUTORS.items())


def check_executor(executor: str, workers: int, dask_address: Any = None) -> None:
    """Clear errors for an unknown executor, a bad worker count or an address without Dask."""
    EXECUTORS.check(executor)
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
    """Run ``units`` on the executor named ``executor`` (its row of :data:`EXECUTORS`); yield each unit's
    outcomes as it finishes. ``local_state`` serves the in-process executors; the others' workers build their own."""
    check_executor(executor, workers, dask_address)
    if not units:
        return
    row = EXECUTORS[executor]
    if row.in_process and local_state is None:
        raise ConfigError(f"the {executor} executor needs this process's WorkerState")
    yield from row.run(units, context, local_state, workers, dask_address)


def _as_completed(pool: ThreadPoolExecutor | ProcessPoolExecutor, futures: list[Future]) -> Iterator[list[QuestionOutcome]]:
    """Yield results as futures finish; on an error or an abandoned generator, cancel what has not started."""
    try:
        for future in as_completed(futures):
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)

