"""Progress of a sweep as one record: :class:`SweepProgress` counts the finished (candidate, question) pairs,
candidates done (one per config and seed) and the cache hit rate, and hands each :class:`Progress` record to
its subscribers — the command line's tqdm bar (:class:`ProgressBar`, ``tqdm.auto``: a widget in Jupyter, text in
a terminal) when ``progress="auto"``, and any ``on_progress`` callback (the sweep panel's bar).

The cache hit rate is read from the finished rows — one minus the LLM calls spent (cache misses)
over the calls incurred — so it counts the calls of every worker process, not just this one's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from tqdm.auto import tqdm

from rag_lab.errors import ConfigError

PROGRESS_MODES = ("auto", "quiet")


class Progress(NamedTuple):
    """Where a running sweep is: ``done`` of ``total`` (candidate, question) pairs (those stored before this
    session included), ``runs_done`` of ``total_runs`` candidates, the cache hit rate (None before any call);
    ``finished`` on the last record of a session. ``label`` and ``name`` say which loop (``sweep small``). One
    configuration's questions (:func:`per_question`) count no candidates (``total_runs`` 0) and no cache hits."""

    label: str
    name: str
    done: int
    total: int
    runs_done: int
    total_runs: int
    cache_hit_rate: float | None
    finished: bool = False

    def postfix(self) -> str:
        """``candidates 3/3, cache hits 40%`` (the bar's words; none without candidates)."""
        if not self.total_runs:
            return ""
        rate = "-" if self.cache_hit_rate is None else f"{self.cache_hit_rate:.0%}"
        return f"candidates {self.runs_done}/{self.total_runs}, cache hits {rate}"


#: What subscribes to a sweep's progress.
ProgressCallback = Callable[[Progress], None]


class ProgressBar:
    """The command line's bar: a tqdm bar over pairs drawn from the records it is given, closed on the last."""

    def __init__(self) -> None:
        self._bar: Any = None

    def __call__(self, progress: Progress) -> None:
        if self._bar is None:
            self._bar = tqdm(total=progress.total or None, initial=progress.done, unit="q", dynamic_ncols=True,
                             desc=f"{progress.label} {progress.name}")
        self._bar.total = progress.total or None
        self._bar.update(progress.done - self._bar.n)
        self._bar.set_postfix_str(progress.postfix(), refresh=False)
        if progress.finished:
            self._bar.close()


def subscribers(mode: str, on_progress: ProgressCallback | Sequence[ProgressCallback] | None) -> list[ProgressCallback]:
    """The callbacks a sweep's progress goes to: the tqdm bar unless ``mode`` is ``quiet``, then ``on_progress``."""
    if mode not in PROGRESS_MODES:
        raise ConfigError(f"progress must be one of {', '.join(PROGRESS_MODES)}, got {mode!r}")
    extra = [] if on_progress is None else [on_progress] if callable(on_progress) else list(on_progress)
    return ([ProgressBar()] if mode == "auto" else []) + extra


class SweepProgress:
    """Counts finished pairs and runs and tells ``callbacks`` after each change; ``remaining`` maps each run's
    candidate id to its pending questions."""

    def __init__(self, name: str, total_pairs: int, total_runs: int, remaining: Mapping[str, int],
                 callbacks: Sequence[ProgressCallback] = (), label: str = "sweep") -> None:
        self.name, self.label, self.callbacks = name, label, list(callbacks)
        self.remaining = {cid: n for cid, n in remaining.items() if n > 0}
        self.total_pairs = total_pairs
        self.done = total_pairs - sum(self.remaining.values())
        self.total_runs = total_runs
        self.runs_done = total_runs - len(self.remaining)
        self.calls_incurred = 0
        self.calls_spent = 0
        self._publish()

    @property
    def cache_hit_rate(self) -> float | None:
        """Share of this session's LLM calls the response cache answered (None before any call)."""
        if not self.calls_incurred:
            return None
        return 1.0 - self.calls_spent / self.calls_incurred

    def record(self, finished: bool = False) -> Progress:
        """The counts now, as the record the subscribers get."""
        return Progress(self.label, self.name, self.done, self.total_pairs, self.runs_done, self.total_runs,
                        self.cache_hit_rate, finished)

    def update(self, candidate_id: str, row: Mapping[str, Any]) -> None:
        """Count one finished (run, question) with its metrics ``row``."""
        self.calls_incurred += int(row.get("cost_llm_calls") or 0)
        self.calls_spent += int(row.get("spent_llm_calls") or 0)
        if candidate_id in self.remaining:
            self.remaining[candidate_id] -= 1
            if self.remaining[candidate_id] == 0:
                del self.remaining[candidate_id]
                self.runs_done += 1
        self.done += 1
        self._publish()

    def add_run(self, candidate_id: str, remaining: int) -> None:
        """A candidate proposed while the loop runs (a search's trial) with its ``remaining`` questions."""
        self.total_runs += 1
        if remaining > 0:
            self.remaining[candidate_id] = remaining
        else:
            self.runs_done += 1
        self._publish()

    def _publish(self, finished: bool = False) -> None:
        record = self.record(finished)
        for callback in self.callbacks:
            callback(record)

    def close(self) -> None:
        """Send the last record (``finished``)."""
        self._publish(finished=True)

    def __enter__(self) -> SweepProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def per_question(callbacks: Sequence[ProgressCallback], label: str, name: str) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback of :func:`rag_lab.evaluation.evaluate_pipeline` (one configuration over
    its questions) that hands ``callbacks`` the same :class:`Progress` records a sweep's subscribers get."""

    def progress(done: int, total: int) -> None:
        record = Progress(label, name, done, total, 0, 0, None, finished=done >= total)
        for callback in callbacks:
            callback(record)

    return progress
