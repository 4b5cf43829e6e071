"""Run a sweep into a run directory, resumably, serially or in parallel.

>>> result = run_sweep("sweeps/quickstart.yaml", "reports/quickstart")          # doctest: +SKIP
>>> result.table[["candidate_id", "quality_answer_containment", "cost_llm_calls", "is_pareto"]]  # doctest: +SKIP

Every candidate is validated before anything runs. The (run, question) pairs already committed in
the run directory are skipped; the rest are cut into units (one question each for ``serial`` and
``threads``, chunks of a run's questions for ``processes`` and ``dask``), executed, and each
finished pair is committed by this process as it arrives. The table is then read back from the
store in plan order, so it is the same whatever the executor, the completion order or the number
of interruptions (for ``param_*``, ``quality_*`` and ``cost_*``; see :mod:`rag_lab.experiments.engine.results`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.executors import check_executor, execute
from rag_lab.experiments.engine.plan import SweepPlan
from rag_lab.experiments.engine.progress import SweepProgress
from rag_lab.experiments.engine.results import DEFAULT_PARETO, SweepResult
from rag_lab.experiments.engine.store import RunStore
from rag_lab.experiments.engine.sweep import SweepSpec, load_sweep_spec
from rag_lab.experiments.engine.worker import WorkContext, WorkerState, WorkUnit
from rag_lab.experiments.tuning.search import run_search
from rag_lab.loaders import load_dataset

#: Units handed to each parallel worker, on average: enough to balance load, few enough to amortise the
#: per-task overhead of processes and Dask.
UNITS_PER_WORKER = 4


def run_sweep(
    spec: SweepSpec | Mapping[str, Any] | str | Path,
    run_dir: str | Path,
    workers: int = 1,
    executor: str = "serial",
    dask_address: Any = None,
    progress: str = "auto",
    overwrite: bool = False,
    chunk_size: int | None = None,
    pareto: tuple[str, str] = DEFAULT_PARETO,
    on_event: Any = None,
    replay: bool = False,
) -> SweepResult:
    """Run (or resume) the sweep ``spec`` into ``run_dir`` and return its results.

    ``executor``: ``serial``; ``threads`` (``workers`` concurrent questions sharing this process's
    resources — for network backends); ``processes`` (a spawned pool of ``workers``); ``dask``
    (``dask_address``: a scheduler address or a ``distributed.Client``; None starts a loopback
    ``LocalCluster`` of ``workers`` processes). ``chunk_size``: questions per unit for processes and
    Dask (default: about :data:`UNITS_PER_WORKER` units per worker). ``progress``: ``auto`` or ``quiet``.
    ``overwrite`` replaces a run directory that holds a different sweep (else that is an error).
    ``pareto``: the (cost, quality) columns of the table's ``is_pareto``. A ``local`` backend starts one
    model server per process: run it serially or with threads. A sweep with ``search:`` runs its sampler
    (and race) through :func:`rag_lab.experiments.tuning.search.run_search`, into the same kind of run directory;
    ``on_event`` then receives its :class:`~rag_lab.experiments.tuning.search.SearchEvent` objects (trials, drops).
    ``replay``: answer every call from the backend's cassette (``backend.cassette``), offline; the candidates
    and tables are the recording's, and a call the cassette does not hold is a
    :class:`~rag_lab.errors.CassetteMiss`.
    """
    spec = load_sweep_spec(spec)
    if replay:
        spec = spec.with_replay()
    check_executor(executor, workers, dask_address)
    if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1):
        raise ConfigError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    dataset = load_dataset(spec.dataset)
    plan = SweepPlan.build(spec, dataset.evalset)
    store = RunStore.create(run_dir, plan, overwrite=overwrite)
    if spec.search is not None:
        computed, reused = run_search(spec, plan, dataset, store, workers=workers,
                                      executor=executor, dask_address=dask_address, progress=progress,
                                      on_event=on_event)
        return SweepResult(store, computed=computed, reused=reused, pareto=pareto)
    done = store.done_pairs()
    pending = {r.candidate_id: [q for q in plan.qids if (r.candidate_id, q) not in done] for r in plan.runs}
    n_pending = sum(len(q) for q in pending.values())
    context = WorkContext(dataset=spec.dataset, backend=spec.backend)
    local = (WorkerState(context, dataset, concurrency=workers if executor == "threads" else 1)
             if executor in ("serial", "threads") and n_pending else None)
    if chunk_size is None:
        chunk_size = 1 if executor in ("serial", "threads") else max(1, math.ceil(n_pending / (workers * UNITS_PER_WORKER)))
    units = [
        WorkUnit(candidate_id=run.candidate_id, config=run.config, seed=run.seed, qids=tuple(qids[i:i + chunk_size]),
                 backend=run.backend)
        for run in plan.runs
        for qids in [pending[run.candidate_id]]
        for i in range(0, len(qids), chunk_size)
    ]
    session = store.begin_session(executor, workers)
    computed = 0
    try:
        with SweepProgress(spec.name, plan.n_pairs, len(plan.runs), {c: len(q) for c, q in pending.items()},
                           mode=progress) as bar:
            for outcomes in execute(units, context, local, executor, workers, dask_address):
                for outcome in outcomes:
                    computed += store.write(outcome)
                    bar.update(outcome.candidate_id, outcome.row)
    finally:
        store.end_session(session, computed)
        if local is not None:
            local.close()
    return SweepResult(store, computed=computed, reused=plan.n_pairs - n_pending, pareto=pareto)


def load_sweep(run_dir: str | Path, pareto: tuple[str, str] = DEFAULT_PARETO) -> SweepResult:
    """The results stored in ``run_dir`` by :func:`run_sweep` (complete or not), without running anything."""
    return SweepResult.load(run_dir, pareto=pareto)
