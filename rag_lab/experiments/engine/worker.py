"""The unit of sweep work and the process-wide state that runs it.

A :class:`WorkUnit` is one run (candidate config + seed) over a chunk of questions. :func:`run_unit`
is a top-level function, so it pickles for a spawned process pool and for Dask workers; it looks up
a :class:`WorkerState` cached per process (dataset, :class:`CorpusResources`, one backend per
seed), built once on first use — or ahead of time by :func:`init_worker`, the process pool's
initializer. Each question runs on a fresh :class:`Pipeline` over the shared resources, so nothing
a candidate changes can leak into another. Workers return :class:`QuestionOutcome` objects with the
trace and result already compressed; only the parent process writes to the run store.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from rag_lab.evaluation.eval_run import run_questions
from rag_lab.experiments.engine.backend_options import backend_options, backend_prices
from rag_lab.experiments.engine.blobs import compress
from rag_lab.experiments.engine.grid import short_hash
from rag_lab.experiments.engine.sweep import BackendSpec
from rag_lab.llm.base import LLMBackend
from rag_lab.llm.factory import open_backend
from rag_lab.loaders import load_dataset
from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig
from rag_lab.records import Dataset


@dataclass(frozen=True)
class WorkContext:
    """What every worker needs to build its state: the dataset and the backend."""

    dataset: str
    backend: BackendSpec

    @property
    def key(self) -> str:
        return short_hash({"dataset": self.dataset, "backend": self.backend.model_dump(mode="json")})


@dataclass(frozen=True)
class WorkUnit:
    """One run over a chunk of its questions."""

    candidate_id: str
    config: PipelineConfig
    seed: int
    qids: tuple[str, ...]
    #: The run's backend when it is not the context's (a grid that sets ``backend.*`` keys).
    backend: BackendSpec | None = None


@dataclass(frozen=True)
class QuestionOutcome:
    """One finished (run, question): the metrics row and the zlib-compressed trace and result JSON."""

    candidate_id: str
    qid: str
    row: dict[str, Any]
    trace_z: bytes
    result_z: bytes


class WorkerState:
    """A process's (or the parent's) dataset, shared corpus resources and backends by seed.

    ``concurrency``: how many units this state runs at once (the thread executor's worker count);
    a network backend admits that many calls in flight unless the spec sets ``max_concurrency``."""

    def __init__(self, context: WorkContext, dataset: Dataset | None = None, concurrency: int = 1) -> None:
        self.context = context
        self.concurrency = concurrency
        self.dataset = dataset if dataset is not None else load_dataset(context.dataset)
        self.resources = CorpusResources(self.dataset.corpus)
        self._backends: dict[tuple[str, int], LLMBackend] = {}
        self._stack = ExitStack()
        self._lock = threading.Lock()

    def backend(self, seed: int, spec: BackendSpec | None = None) -> LLMBackend:
        """The backend of ``spec`` (default: the context's) for ``seed``, opened on first use and kept open
        until :meth:`close`."""
        spec = spec if spec is not None else self.context.backend
        key = (spec.model_dump_json(), seed)
        with self._lock:
            if key not in self._backends:
                kind, settings = backend_options(spec, seed, self.concurrency)
                self._backends[key] = self._stack.enter_context(open_backend(kind, **settings))
            return self._backends[key]

    def run(self, unit: WorkUnit) -> list[QuestionOutcome]:
        """Run ``unit``'s questions in order on a fresh pipeline for the unit's config."""
        spec = unit.backend if unit.backend is not None else self.context.backend
        pipeline = Pipeline(unit.config, self.resources, self.backend(unit.seed, spec), prices=backend_prices(spec))
        questions = [self.dataset.evalset[qid] for qid in unit.qids]
        return [QuestionOutcome(candidate_id=unit.candidate_id, qid=run.question.qid, row=run.row,
                                trace_z=compress(run.trace.model_dump_json()),
                                result_z=compress(run.result.model_dump_json()))
                for run in run_questions(pipeline, questions)]

    def close(self) -> None:
        """Close the backends (a local model server stops here)."""
        with self._lock:
            self._stack.close()
            self._backends.clear()


_STATES: dict[str, WorkerState] = {}
_STATES_LOCK = threading.Lock()


def worker_state(context: WorkContext) -> WorkerState:
    """This process's state for ``context``, built on first use."""
    with _STATES_LOCK:
        if context.key not in _STATES:
            _STATES[context.key] = WorkerState(context)
        return _STATES[context.key]


#: The environment variables that size the native thread pools (PyTorch's OpenMP, MKL, OpenBLAS).
THREAD_POOL_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def threads_per_worker(workers: int, cpus: int | None = None) -> int:
    """The native threads each of ``workers`` worker processes gets: this machine's usable cores shared out,
    at least one (default ``cpus``: the cores this process may run on)."""
    cpus = cpus if cpus is not None else len(os.sched_getaffinity(0))  # as the local model's default_threads counts
    return max(1, cpus // workers)


def limit_threads(threads: int) -> None:
    """Size this process's native thread pools to ``threads`` where the user has not set them: each worker
    process of a pool otherwise starts one MKL thread per core, and two workers' embedders on two cores then
    take about three times as long as one process (``benchmarks/bench_worker_threads.py``)."""
    for name in THREAD_POOL_VARIABLES:
        os.environ.setdefault(name, str(threads))
    if "torch" in sys.modules:  # imported already: its pool is sized, so size it again
        value = os.environ["OMP_NUM_THREADS"]
        sys.modules["torch"].set_num_threads(int(value) if value.isdigit() and int(value) > 0 else threads)


def init_worker(context: WorkContext, threads: int | None = None) -> None:
    """Process-pool initializer: size the native thread pools to ``threads`` (:func:`limit_threads`), then load
    the dataset and resources before the first unit arrives. A worker ignores Ctrl-C: the parent stops the pool
    and says how to resume (each worker printing its own traceback would not)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if threads is not None:
        limit_threads(threads)
    worker_state(context)


def run_unit(context: WorkContext, unit: WorkUnit) -> list[QuestionOutcome]:
    """Run one unit in this process's cached state (the task function of process pools and Dask)."""
    return worker_state(context).run(unit)
