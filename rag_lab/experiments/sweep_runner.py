"""Run a sweep into a run directory, resumably, serially or in parallel (docs/design.md §6).

>>> result = run_sweep("sweeps/quickstart.yaml", "reports/quickstart")          # doctest: +SKIP
>>> result.table[["candidate_id", "quality_answer_containment", "cost_llm_calls", "is_pareto"]]  # doctest: +SKIP

Every candidate is validated before anything runs; the (run, question) pairs already stored are skipped, and each
finished pair is committed as it arrives. The table is read back from the store in the resolved sweep's order: the
same whatever the executor, the completion order or the interruptions (:mod:`rag_lab.experiments.engine.results`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rag_lab.experiments.engine.backend_options import replay_cassette
from rag_lab.experiments.engine.evaluator import Evaluator
from rag_lab.experiments.engine.executors import check_executor
from rag_lab.experiments.engine.pairs import PAIRS_WITH
from rag_lab.experiments.engine.progress import ProgressCallback
from rag_lab.experiments.engine.provenance import build_provenance
from rag_lab.experiments.engine.resolved_sweep import ResolvedSweep
from rag_lab.experiments.engine.results import DEFAULT_PARETO, SweepResult
from rag_lab.experiments.engine.store import RunStore
from rag_lab.experiments.engine.sweep import SweepSpec
from rag_lab.experiments.engine.sweep_file import load_sweep_spec, replay_spec
from rag_lab.experiments.tuning.search import run_search
from rag_lab.loaders import load_dataset


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
    wait: bool = False,
    on_progress: ProgressCallback | Sequence[ProgressCallback] | None = None,
) -> SweepResult:
    """Run (or resume) the sweep ``spec`` into ``run_dir`` and return its results.

    ``executor``: ``serial``; ``threads`` (``workers`` concurrent questions sharing this process's
    resources — for network backends); ``processes`` (a spawned pool of ``workers``); ``dask``
    (``dask_address``: a scheduler address or a ``distributed.Client``; None starts a loopback
    ``LocalCluster`` of ``workers`` processes). ``chunk_size``: questions per unit for processes and
    Dask (default: about ``UNITS_PER_WORKER`` units per worker, :mod:`rag_lab.experiments.engine.evaluator`).
    ``progress``: ``auto`` (a tqdm bar) or ``quiet``; ``on_progress`` (one callback or several) gets each
    :class:`~rag_lab.experiments.engine.progress.Progress` record the bar draws, as pairs finish.
    ``overwrite`` replaces a run directory that holds a different sweep (else that is an error).
    ``pareto``: the (cost, quality) columns of the table's ``is_pareto``. A ``local`` backend starts one
    model server per process: run it serially or with threads. A sweep with ``search:`` runs its sampler
    (and race) through :func:`rag_lab.experiments.tuning.search.run_search`, into the same kind of run directory;
    ``on_event`` then receives its :class:`~rag_lab.experiments.tuning.search.SearchEvent` objects (trials, drops).
    ``replay``: answer every call from the backend's cassette (``backend.cassette``), offline; the candidates
    and tables are the recording's, and a call the cassette does not hold is a
    :class:`~rag_lab.errors.CassetteMiss`. A sweep that names ``pairs_with:`` (the other half of its pairs) runs
    that sweep too, the same way, into ``run_dir/pairs_with``, where its findings over pairs read it.
    One process writes a run directory at a time: another one writing it is a
    :class:`~rag_lab.errors.RunDirectoryBusy` naming its pid, unless ``wait``, which waits for it to finish (a
    resume of the same sweep then computes only what it left).
    """
    spec = load_sweep_spec(spec)
    if replay:
        spec = replay_spec(spec)
    if spec.backend.replay:
        replay_cassette(spec.backend)  # a cassette of another model is refused before anything is written
    check_executor(executor, workers, dask_address)
    dataset = load_dataset(spec.dataset)
    resolved = ResolvedSweep.build(spec, dataset.evalset)
    with RunStore.create(run_dir, resolved, overwrite=overwrite, wait=wait) as store:
        if "provenance" not in store.meta():
            store.write_provenance(build_provenance(spec, dataset, resolved.describe()["base_config"]).model_dump_json())
        evaluator = Evaluator(store, resolved, dataset, executor=executor, workers=workers, dask_address=dask_address,
                              progress=progress, chunk_size=chunk_size, label="search" if spec.search else "sweep",
                              on_progress=on_progress)
        with evaluator:
            if spec.search is not None:
                run_search(spec, resolved, evaluator, on_event=on_event)
            else:
                evaluator.evaluate([r.candidate_id for r in resolved.runs], resolved.qids)
        if spec.pairs_with is not None:   # the pairs' other half, into the run directory's PAIRS_WITH folder
            run_sweep(spec.pairs_with, Path(run_dir) / PAIRS_WITH, workers=workers, executor=executor,
                      dask_address=dask_address, progress=progress, overwrite=overwrite, chunk_size=chunk_size,
                      pareto=pareto, replay=replay, wait=wait, on_progress=on_progress)
    return SweepResult(RunStore.read(run_dir), computed=evaluator.computed, reused=evaluator.reused, pareto=pareto)


def load_sweep(run_dir: str | Path, pareto: tuple[str, str] = DEFAULT_PARETO) -> SweepResult:
    """The results stored in ``run_dir`` by :func:`run_sweep` (complete or not), without running anything."""
    return SweepResult.load(run_dir, pareto=pareto)
