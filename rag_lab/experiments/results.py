"""The results of a sweep, read from its run directory: the table (one row per candidate and seed),
the seed-aggregated view, the Pareto flags, and per-question rows, traces and results on demand.

Table columns: ``candidate_id``, ``config_id`` (the config without the seed), ``seed``,
``param_<dotted key>`` for every key the grid sets (None where a candidate's grid dict leaves it
at the base value), ``n_questions``, every ``quality_*`` mean with its bootstrap CI bounds
``quality_*_lo``/``_hi`` (over questions), the means per question of ``cost_*`` (incurred:
deterministic), ``spent_*`` (cache misses) and ``run_*`` (wall clock), and ``is_pareto``.
``spent_*`` and ``run_*`` depend on the cache state and the machine, so two runs of one sweep
(serial or parallel, cold or warm) agree on ``param_*``, ``quality_*`` and ``cost_*`` only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY
from rag_lab.experiments.stats import COST_PREFIXES, add_pareto, aggregate_rows, mean_std_over_seeds
from rag_lab.experiments.store import RunStore
from rag_lab.experiments.worker import decompress
from rag_lab.pipeline import Result, Trace
from rag_lab.pipeline.trace import KNOB_RATE_COLUMNS, knob_rates

PARAM_PREFIX = "param_"
DEFAULT_PARETO = (DEFAULT_COST, DEFAULT_QUALITY)


class CandidateTraces(Mapping[str, Trace]):
    """The traces of one run by question id, read and decompressed from the store on access."""

    def __init__(self, store: RunStore, candidate_id: str) -> None:
        self._store = store
        self._candidate_id = candidate_id
        self._qids = store.qids(candidate_id)

    def __getitem__(self, qid: str) -> Trace:
        return Trace.model_validate_json(decompress(self._store.blob(self._candidate_id, qid, "trace")))

    def __iter__(self) -> Iterator[str]:
        return iter(self._qids)

    def __len__(self) -> int:
        return len(self._qids)


class SweepResult:
    """A sweep's results in ``run_dir``. ``computed``/``reused`` count the (run, question) pairs this
    invocation ran and found already stored; ``complete`` is whether every planned pair is stored."""

    def __init__(self, store: RunStore, computed: int = 0, reused: int = 0, pareto: tuple[str, str] = DEFAULT_PARETO) -> None:
        self.store = store
        self.run_dir: Path = store.run_dir
        self.computed = computed
        self.reused = reused
        self.plan: dict[str, Any] = store.plan_description()
        self.spec: dict[str, Any] = self.plan["spec"]
        self.qids: list[str] = self.plan["qids"]
        self.swept_keys: list[str] = self.plan["swept_keys"]
        self._candidates = store.candidates()
        self.pareto_columns = pareto
        self.table = self._build_table()

    @classmethod
    def load(cls, run_dir: str | Path, pareto: tuple[str, str] = DEFAULT_PARETO) -> SweepResult:
        """The results stored in ``run_dir`` (complete or not)."""
        return cls(RunStore.read(run_dir), pareto=pareto)

    @property
    def complete(self) -> bool:
        return bool(len(self.table)) and bool((self.table["n_questions"] == len(self.qids)).all())

    @property
    def param_columns(self) -> list[str]:
        return [PARAM_PREFIX + k for k in self.swept_keys]

    def _build_table(self) -> pd.DataFrame:
        records = []
        for cand in self._candidates:
            rows = self.store.rows(cand["candidate_id"])
            ordered = [rows[q] for q in self.qids if q in rows]
            record: dict[str, Any] = {"candidate_id": cand["candidate_id"], "config_id": cand["config_id"],
                                      "seed": cand["seed"]}
            record.update({PARAM_PREFIX + k: cand["params"].get(k) for k in self.swept_keys})
            record.update(aggregate_rows(ordered) if ordered else {"n_questions": 0})
            records.append(record)
        table = pd.DataFrame.from_records(records)
        # a role a candidate never called is a cost it did not incur: 0, not missing
        costs = [c for c in table.columns if c.startswith(COST_PREFIXES)]
        table[costs] = table[costs].fillna(0.0)
        for key in self.swept_keys:  # as given (1 stays an int, unset stays None), not coerced to float
            table[PARAM_PREFIX + key] = pd.Series([c["params"].get(key) for c in self._candidates], dtype=object)
        return self._with_pareto(table, *self.pareto_columns)

    @staticmethod
    def _with_pareto(table: pd.DataFrame, cost: str, quality: str) -> pd.DataFrame:
        if cost in table.columns and quality in table.columns:
            return add_pareto(table, cost, quality)
        out = table.copy()
        out["is_pareto"] = False
        return out

    def pareto(self, cost: str, quality: str) -> pd.DataFrame:
        """A copy of the table with ``is_pareto`` for this pair (minimise ``cost``, maximise ``quality``)."""
        return add_pareto(self.table, cost, quality)

    def over_seeds(self) -> pd.DataFrame:
        """One row per config: ``<col>_mean`` and ``<col>_std`` across seeds, and ``n_seeds``."""
        table = self.table.drop(columns=["candidate_id", "is_pareto"])
        return mean_std_over_seeds(table, ["config_id", *self.param_columns])

    def configs(self) -> pd.DataFrame:
        """Every parameter of every run's resolved config (not only the swept ones), by ``candidate_id``."""
        return pd.DataFrame([{"candidate_id": c["candidate_id"], "seed": c["seed"], **c["config"]}
                             for c in self._candidates])

    def rows(self, candidate_id: str) -> pd.DataFrame:
        """The per-question metrics rows of one run, in question order."""
        rows = self.store.rows(self._known(candidate_id))
        return pd.DataFrame([rows[q] for q in self.qids if q in rows])

    def traces(self, candidate_id: str) -> CandidateTraces:
        """The per-question traces of one run: a mapping ``qid → Trace``, read lazily."""
        return CandidateTraces(self.store, self._known(candidate_id))

    def result(self, candidate_id: str, qid: str) -> Result:
        """The pipeline result (answer, context, citations) of one question of one run."""
        return Result.model_validate_json(decompress(self.store.blob(self._known(candidate_id), qid, "result")))

    def calls_by_role(self, candidate_id: str) -> pd.DataFrame:
        """The ledger of one run by role, from its traces: LLM calls ``incurred`` and ``spent`` (cache misses)."""
        counts: dict[str, list[int]] = {}
        for trace in self.traces(candidate_id).values():
            for call in trace.llm_calls():
                incurred_spent = counts.setdefault(call.role, [0, 0])
                incurred_spent[0] += 1
                incurred_spent[1] += 0 if call.cached else 1
        return pd.DataFrame([{"role": r, "incurred": i, "spent": s} for r, (i, s) in counts.items()],
                            columns=["role", "incurred", "spent"])

    def knob_rates(self, candidate_id: str) -> pd.DataFrame:
        """Simulator knobs of one run, from its traces: per role and knob, ``opportunities``,
        ``fired``, ``configured`` and ``observed`` rate (fired / opportunities) and ``per_call``
        (fired / calls of the role); empty for a real model (see :func:`rag_lab.pipeline.trace.knob_rates`)."""
        return pd.DataFrame(knob_rates(self.traces(candidate_id).values()), columns=KNOB_RATE_COLUMNS)

    def _known(self, candidate_id: str) -> str:
        if candidate_id not in {c["candidate_id"] for c in self._candidates}:
            raise KeyError(f"no candidate {candidate_id!r} in {self.run_dir}")
        return candidate_id

    def __repr__(self) -> str:
        return (f"SweepResult({str(self.run_dir)!r}, runs={len(self.table)}, questions={len(self.qids)}, "
                f"complete={self.complete})")
