"""The one loop that runs (candidate, question) pairs: :class:`Evaluator` takes the pairs a grid sweep, a search
or a race asks for, runs the ones the store lacks through an executor and commits each row as it arrives. It
owns what every caller would otherwise repeat: the in-process worker state (built only when there is work), the
chunking rule, the store session and the progress records (the bar and any ``on_progress`` subscriber).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.executors import execute, in_process
from rag_lab.experiments.engine.progress import ProgressCallback, SweepProgress, subscribers
from rag_lab.experiments.engine.resolved_sweep import CandidateRun, ResolvedSweep
from rag_lab.experiments.engine.results import question_values
from rag_lab.experiments.engine.store import RunStore
from rag_lab.experiments.engine.worker import WorkContext, WorkerState, WorkUnit
from rag_lab.records import Dataset

#: Work units per worker an out-of-process executor gets (about): few enough to keep each unit's start-up cost
#: small, enough that a slow unit does not leave the other workers idle at the end.
UNITS_PER_WORKER = 4


class Evaluator:
    """Runs the missing pairs of ``resolved``'s candidates into ``store`` (use it as a context manager: the session
    and the bar open on entry and close on exit). ``chunk_size``: questions per work unit (default: 1 in
    process, about :data:`UNITS_PER_WORKER` units per worker otherwise); ``label`` names the bar (``sweep``,
    ``search``). ``progress="auto"`` draws the tqdm bar; ``on_progress`` (one callback or several) gets the same
    :class:`~rag_lab.experiments.engine.progress.Progress` records, in the thread that runs the loop."""

    def __init__(self, store: RunStore, resolved: ResolvedSweep, dataset: Dataset, *, executor: str = "serial",
                 workers: int = 1, dask_address: Any = None, progress: str = "auto", chunk_size: int | None = None,
                 label: str = "sweep", on_progress: ProgressCallback | Sequence[ProgressCallback] | None = None) -> None:
        if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1):
            raise ConfigError(f"chunk_size must be a positive integer, got {chunk_size!r}")
        self.store, self.resolved, self.dataset = store, resolved, dataset
        self.executor, self.workers, self.dask_address = executor, workers, dask_address
        self.progress, self.chunk_size, self.label = progress, chunk_size, label
        self.subscribers = subscribers(progress, on_progress)
        self.context = WorkContext(dataset=resolved.spec.dataset, backend=resolved.spec.backend)
        self.runs: dict[str, CandidateRun] = {r.candidate_id: r for r in resolved.runs}
        self.done = store.done_pairs()
        self.computed = 0
        self._rows: dict[str, dict[str, dict[str, Any]]] = {}
        self._local: WorkerState | None = None
        self._session: Any = None
        self._bar: SweepProgress | None = None
        self._reused = 0

    def __enter__(self) -> Evaluator:
        remaining = {cid: sum((cid, q) not in self.done for q in self.resolved.qids) for cid in self.runs}
        self._reused = len(self.done)
        self._session = self.store.begin_session(self.executor, self.workers)
        self._bar = SweepProgress(self.resolved.spec.name, self.resolved.n_pairs, len(self.runs), remaining,
                                  callbacks=self.subscribers, label=self.label)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.store.end_session(self._session, self.computed)
        finally:
            if self._bar is not None:
                self._bar.close()
            if self._local is not None:
                self._local.close()

    @property
    def reused(self) -> int:
        """(candidate, question) pairs stored before this session."""
        return self._reused

    def add_run(self, run: CandidateRun) -> None:
        """A candidate proposed while the loop runs (a search's trial), stored with its config."""
        if run.candidate_id not in self.runs:
            self.runs[run.candidate_id] = run
            self.store.add_runs([run])
            if self._bar is not None:
                self._bar.add_run(run.candidate_id, sum((run.candidate_id, q) not in self.done for q in self.resolved.qids))

    def pending(self, candidate_ids: Sequence[str], qids: Sequence[str]) -> list[tuple[str, list[str]]]:
        """Each candidate's questions of ``qids`` the store lacks, in order."""
        return [(cid, [q for q in qids if (cid, q) not in self.done]) for cid in candidate_ids]

    def evaluate(self, candidate_ids: Sequence[str], qids: Sequence[str]) -> None:
        """Make sure every (candidate, question) pair of ``candidate_ids`` × ``qids`` is stored: run the missing ones,
        committing each row as it finishes."""
        pending = self.pending(candidate_ids, qids)
        n_pending = sum(len(q) for _, q in pending)
        if not n_pending:
            return
        if self._local is None and in_process(self.executor):
            self._local = WorkerState(self.context, self.dataset,
                                      concurrency=self.workers if self.executor == "threads" else 1)
        size = self.chunk_size or (1 if in_process(self.executor)
                                   else max(1, math.ceil(n_pending / (self.workers * UNITS_PER_WORKER))))
        units = [WorkUnit(candidate_id=cid, config=self.runs[cid].config, seed=self.runs[cid].seed,
                          qids=tuple(q[i:i + size]), backend=self.runs[cid].backend)
                 for cid, q in pending for i in range(0, len(q), size)]
        for outcomes in execute(units, self.context, self._local, self.executor, self.workers, self.dask_address):
            for outcome in outcomes:
                self.computed += self.store.write(outcome)
                self.done.add((outcome.candidate_id, outcome.qid))
                self._rows.pop(outcome.candidate_id, None)
                if self._bar is not None:
                    self._bar.update(outcome.candidate_id, outcome.row)

    def values(self, candidate_id: str, qids: Sequence[str], metric: str) -> np.ndarray:
        """``metric`` on ``qids`` (NaN where undefined or not run; a cost a role never incurred is 0)."""
        if candidate_id not in self._rows:
            self._rows[candidate_id] = self.store.rows(candidate_id)
        return question_values(self._rows[candidate_id], qids, metric)

    def ran(self, candidate_id: str, qids: Sequence[str]) -> list[str]:
        """The questions of ``qids`` the candidate has run."""
        return [q for q in qids if (candidate_id, q) in self.done]
