"""Progress of a sweep: a tqdm bar (``tqdm.auto``: a widget in Jupyter, text in a terminal) over
(candidate, question) pairs, with candidates done (one per config and seed), the cache hit rate and
the elapsed time; ``quiet`` shows nothing.

The cache hit rate is read from the finished rows — one minus the LLM calls spent (cache misses)
over the calls incurred — so it counts the calls of every worker process, not just this one's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tqdm.auto import tqdm

from rag_lab.errors import ConfigError

PROGRESS_MODES = ("auto", "quiet")


class SweepProgress:
    """Counts finished pairs and runs; ``remaining`` maps each run's candidate id to its pending questions."""

    def __init__(self, name: str, total_pairs: int, total_runs: int, remaining: Mapping[str, int], mode: str = "auto",
                 label: str = "sweep") -> None:
        if mode not in PROGRESS_MODES:
            raise ConfigError(f"progress must be one of {', '.join(PROGRESS_MODES)}, got {mode!r}")
        self.remaining = {cid: n for cid, n in remaining.items() if n > 0}
        self.total_runs = total_runs
        self.runs_done = total_runs - len(self.remaining)
        self.calls_incurred = 0
        self.calls_spent = 0
        done = total_pairs - sum(self.remaining.values())
        self._bar = tqdm(total=total_pairs or None, initial=done, desc=f"{label} {name}", unit="q", disable=mode == "quiet",
                         dynamic_ncols=True)
        self._show()

    @property
    def cache_hit_rate(self) -> float | None:
        """Share of this session's LLM calls the response cache answered (None before any call)."""
        if not self.calls_incurred:
            return None
        return 1.0 - self.calls_spent / self.calls_incurred

    def update(self, candidate_id: str, row: Mapping[str, Any]) -> None:
        """Count one finished (run, question) with its metrics ``row``."""
        self.calls_incurred += int(row.get("cost_llm_calls") or 0)
        self.calls_spent += int(row.get("spent_llm_calls") or 0)
        if candidate_id in self.remaining:
            self.remaining[candidate_id] -= 1
            if self.remaining[candidate_id] == 0:
                del self.remaining[candidate_id]
                self.runs_done += 1
        self._bar.update(1)
        self._show()

    def add_run(self, candidate_id: str, remaining: int) -> None:
        """A candidate planned while the loop runs (a search's trial) with its ``remaining`` questions."""
        self.total_runs += 1
        if remaining > 0:
            self.remaining[candidate_id] = remaining
        else:
            self.runs_done += 1
        self._show()

    def _show(self) -> None:
        rate = self.cache_hit_rate
        self._bar.set_postfix_str(f"candidates {self.runs_done}/{self.total_runs}, cache hits "
                                  + ("-" if rate is None else f"{rate:.0%}"), refresh=False)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> SweepProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
