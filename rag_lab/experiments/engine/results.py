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

import functools
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY
from rag_lab.evaluation.families import PARAM_PREFIX, absent_value, family_of, is_cost, is_reproducible, metric_columns
from rag_lab.experiments.engine.blobs import decompress
from rag_lab.experiments.engine.candidate_configs import changes_label, check_claims, completed, config_changes, pick_config
from rag_lab.experiments.engine.provenance import Provenance, stored_provenance, write_parquet
from rag_lab.experiments.engine.search_space import Constraint
from rag_lab.experiments.engine.store import RunStore
from rag_lab.pipeline import Result, Trace
from rag_lab.pipeline.trace import KNOB_RATE_COLUMNS, knob_rates
from rag_lab.stats.power import paired_differences
from rag_lab.stats.significance import paired_test
from rag_lab.stats.summary import ELIGIBLE_COL, add_pareto, aggregate_rows, mean_std_over_seeds


class RunProgress(NamedTuple):
    """Question runs (candidate × question pairs) ``finished`` of those ``planned``."""

    finished: int
    planned: int

    @property
    def complete(self) -> bool:
        return self.finished >= self.planned

    def text(self) -> str:
        """``264 of 264 question runs finished`` (the banner's and the command line's words)."""
        return f"{self.finished:,} of {self.planned:,} question runs finished"


DEFAULT_PARETO = (DEFAULT_COST, DEFAULT_QUALITY)
#: The headline quality of a sweep none of whose questions has an answer: refusing is the right reply.
UNANSWERABLE_QUALITY = "quality_abstention_accuracy"


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
        self.description: dict[str, Any] = store.sweep_description()
        self.spec: dict[str, Any] = self.description["spec"]
        self.qids: list[str] = self.description["qids"]
        self.swept_keys: list[str] = self.description["swept_keys"]
        # stored configs leave out a later parameter at its default (ids stay stable): put it back to read them
        self.description["base_config"] = completed(self.description.get("base_config", {}))
        self._candidates = [{**c, "config": completed(c["config"])} for c in store.candidates()]
        self.pareto_columns = pareto
        self.table = self._build_table()

    @classmethod
    def load(cls, run_dir: str | Path, pareto: tuple[str, str] = DEFAULT_PARETO) -> SweepResult:
        """The results stored in ``run_dir`` (complete or not)."""
        return cls(RunStore.read(run_dir), pareto=pareto)

    @property
    def complete(self) -> bool:
        """The sweep has a candidate and every pair it plans is stored (:meth:`progress`): for a search, every
        candidate a race did not drop ran every question and the sampler's trials all ran."""
        return bool(len(self.table)) and self.progress().complete

    def _trials_left(self) -> int:
        """A search's sampler trials not yet proposed (0 for a grid sweep or ``sampler: grid``)."""
        search = self.search or {}
        trials = search.get("trials") if search.get("sampler") != "grid" else None
        return 0 if trials is None else max(0, int(trials) - len(self.store.trials()))

    @property
    def param_columns(self) -> list[str]:
        return [PARAM_PREFIX + k for k in self.swept_keys]

    def reproducible_table(self) -> pd.DataFrame:
        """The table without what the machine or the cache decide (``run_*`` wall time, ``spent_*`` cache misses,
        ``run_wall_latency_s``): the columns that a replay of a recorded sweep reproduces exactly."""
        keep = [c for c in self.table.columns if is_reproducible(c)]
        return self.table[keep]

    def write_reproducible_table(self, path: str | Path) -> Path:
        """:meth:`reproducible_table` as CSV (floats to 10 significant digits), for a byte-for-byte comparison."""
        return _write_csv(path, self.reproducible_table(), "", float_format="%.10g")

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
        costs = [c for c in table.columns if is_cost(c)]
        table[costs] = table[costs].fillna(0.0)
        for key in self.swept_keys:  # as given (1 stays an int, unset stays None), not coerced to float
            table[PARAM_PREFIX + key] = pd.Series([c["params"].get(key) for c in self._candidates], dtype=object)
        if self.search is not None and len(table):
            table = self._with_search(table)
        if (self.pareto_columns == DEFAULT_PARETO and len(table) and DEFAULT_QUALITY in table.columns
                and table[DEFAULT_QUALITY].isna().all() and UNANSWERABLE_QUALITY in table.columns):
            # no question has an answer to contain (every one unanswerable, e.g. twins): the right reply is a refusal
            self.pareto_columns = (DEFAULT_COST, UNANSWERABLE_QUALITY)
        return self._with_pareto(table, *self.pareto_columns)

    @property
    def headline_quality(self) -> str:
        """The quality column the front, the CLI's delta table and the report lead with: strict answer containment,
        or, in a sweep where no question has an answer (unanswerable twins), abstention accuracy."""
        return self.pareto_columns[1]

    @property
    def search(self) -> dict[str, Any] | None:
        """The sweep's ``search:`` section (None for a grid sweep)."""
        return self.spec.get("search")

    def _with_search(self, table: pd.DataFrame) -> pd.DataFrame:
        """A search's columns: ``status`` (``survived``/``dropped`` in a race, else ``complete``/``incomplete``),
        ``dropped_after`` (questions), ``dropped_by`` (a candidate id, or None for a broken constraint),
        ``drop_reason``, ``is_feasible`` (every constraint holds on the means) and ``is_eligible`` (not dropped,
        feasible, every question run: what may be on the front)."""
        race = self.store.race()
        full = table["n_questions"] == len(self.qids)
        status = [race[c]["status"] if c in race else "complete" if f else "incomplete"
                  for c, f in zip(table["candidate_id"], full, strict=True)]
        dropped = [s == "dropped" for s in status]
        drops = [race[c] if d else {} for c, d in zip(table["candidate_id"], dropped, strict=True)]
        table = table.assign(
            status=status, dropped_after=pd.Series([d.get("n_questions") for d in drops], dtype=object),
            dropped_by=pd.Series([d.get("rival") for d in drops], dtype=object),
            drop_reason=[d.get("reason", "") for d in drops])
        feasible = np.ones(len(table), dtype=bool)
        for text in self.search.get("constraints") or []:
            constraint = Constraint.parse(text)
            means = pd.to_numeric(table.get(constraint.metric, pd.Series([math.nan] * len(table))), errors="coerce")
            feasible &= np.array([constraint.holds(float(m)) for m in means], dtype=bool)
        table["is_feasible"] = feasible
        table[ELIGIBLE_COL] = feasible & full.to_numpy(dtype=bool) & ~np.array(dropped, dtype=bool)
        return table

    def trials(self) -> pd.DataFrame:
        """A search's trials in order: ``number``, ``candidate_id``, ``state``, ``n_questions``, the objective
        means told to the sampler and the params (empty for a grid sweep or ``sampler: grid``)."""
        records = [{"number": t["number"], "candidate_id": t["candidate_id"], "state": t["state"],
                    "n_questions": t["n_questions"], **t["objectives"],
                    **{PARAM_PREFIX + k: v for k, v in t["params"].items()}} for t in self.store.trials()]
        return pd.DataFrame.from_records(records)

    def question_runs(self) -> int:
        """(candidate, question) pairs stored: what the sweep or search spent."""
        return self.store.count_rows()

    def full_grid_runs(self) -> int:
        """The question runs of every candidate on every question: what a search's runs are set against."""
        return len(self.table) * len(self.qids)

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

    def all_rows(self) -> pd.DataFrame:
        """The per-question metrics rows of every run, in table then question order, each led by its run's
        ``candidate_id``, ``seed`` and ``param_*`` columns (what ``rag-lab sweep --rows CSV`` writes)."""
        lead = ["candidate_id", "seed", *self.param_columns]
        frames = []
        for _, run in self.table[lead].iterrows():
            rows = self.rows(run["candidate_id"])
            if len(rows):
                frames.append(pd.concat([pd.DataFrame([run.to_dict()] * len(rows)), rows], axis=1))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*lead, "qid"])

    def write_rows(self, path: str | Path) -> Path:
        """:meth:`all_rows` as CSV (one line per run and question), under the run's provenance as ``#`` lines
        (:meth:`~rag_lab.experiments.engine.provenance.Provenance.comment_lines`; ``pd.read_csv(path, comment="#")``)."""
        return _write_csv(path, self.all_rows(), self.provenance.comment_lines())

    def write_table(self, path: str | Path) -> Path:
        """:meth:`reproducible_table` with the run's provenance: Parquet for a ``.parquet`` path (the provenance as
        JSON in the schema's metadata, key ``rag_lab.provenance``; needs pyarrow), else CSV under ``#`` lines as
        :meth:`write_rows` writes them — the rows below them are :meth:`write_reproducible_table`'s, byte for byte."""
        path = Path(path)
        if path.suffix.lower() == ".parquet":
            path.parent.mkdir(parents=True, exist_ok=True)
            write_parquet(self.reproducible_table(), path, self.provenance)
            return path
        return _write_csv(path, self.reproducible_table(), self.provenance.comment_lines(), float_format="%.10g")

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

    # --- paired comparisons against a reference candidate ------------------------------------------

    def _configs_by_id(self) -> dict[str, dict[str, Any]]:
        """Each distinct config (in table order): its flat ``config`` and its runs' ``candidate_ids`` and ``seeds``."""
        configs: dict[str, dict[str, Any]] = {}
        for cand in self._candidates:
            entry = configs.setdefault(cand["config_id"], {"config": cand["config"], "candidate_ids": [], "seeds": []})
            entry["candidate_ids"].append(cand["candidate_id"])
            entry["seeds"].append(cand["seed"])
        return configs

    def config_of(self, config_id: str) -> dict[str, Any]:
        """The flat resolved config of one distinct configuration (``config_id``)."""
        return dict(self._configs_by_id()[config_id]["config"])

    def reference(self, reference: str | Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The reference configuration of :meth:`compare`: ``config_id``, ``candidate_id`` (its first seed's run),
        ``rule`` and ``description`` (a sentence saying which candidate it is and why).

        ``reference=None`` is the sweep's **base config** when some candidate resolves to it (rule ``base``);
        when the base config is not itself a grid point, the **first candidate** in grid order (rule ``first``),
        and the description says so. A string is a ``candidate_id`` (any seed's) or a ``config_id``; a mapping of
        dotted keys to values picks the one config that has all of them (rule ``given``)."""
        configs = self._configs_by_id()
        if not configs:
            raise ConfigError(f"{self.run_dir}: the sweep has no candidates")
        config_id, rule = pick_config(configs, reference, self.description.get("base_config", {}),
                                      f"{self.run_dir}: reference")
        entry = configs[config_id]
        candidate = entry["candidate_ids"][0]
        changes = changes_label(self.changes()[config_id], same="the base config")
        description = {
            "base": f"the base config (candidate {candidate})",
            "first": f"the first candidate {candidate} ({changes}): the base config is not among the candidates",
            "given": f"candidate {candidate} ({changes})",
        }[rule]
        title = {"base": "the base config", "first": f"the first candidate ({changes})", "given": changes}[rule]
        return {"config_id": config_id, "candidate_id": candidate, "rule": rule, "description": description,
                "title": title}

    def check_findings(self) -> None:
        """Raise a :class:`~rag_lab.errors.ConfigError` naming the first stated finding whose ``candidate`` or
        ``reference`` picks no stored config, several, or the same as the other (as a sweep checks before it
        runs: :func:`rag_lab.experiments.engine.candidate_configs.check_claims`)."""
        check_claims(self.spec.get("findings") or [], self._configs_by_id(), self.description.get("base_config", {}),
                     str(self.run_dir))

    def require_finished(self) -> None:
        """Raise a :class:`~rag_lab.errors.ConfigError` when no question of the sweep has finished yet (there is
        nothing to summarise)."""
        if not self.store.count_rows():
            raise ConfigError(f"{self.run_dir}: no question has finished yet (0 of {len(self.qids)} questions for "
                              f"{len(self._candidates)} candidates stored); run the sweep into it first "
                              f"(rag-lab sweep SWEEP_FILE --out {self.run_dir}), then report it")

    def labels(self, reference: str | Mapping[str, Any] | None = None) -> dict[str, str]:
        """Each run's ``candidate_id`` → its parameters that differ from the sweep's base config, e.g.
        ``round_cap.max_rounds=1`` (``base`` when none do, whether or not the base is a grid point); with
        ``reference`` (as in :meth:`reference`), those that differ from that candidate (``reference`` for itself)."""
        configs = self._configs_by_id()
        if reference is None:
            changes, same = self.changes(), "base"
        else:
            ref_config, same = configs[self.reference(reference)["config_id"]]["config"], "reference"
            changes = {k: config_changes(entry["config"], ref_config, self.swept_keys) for k, entry in configs.items()}
        return {cid: changes_label(changes[k], same=same) for k, entry in configs.items() for cid in entry["candidate_ids"]}

    def changes(self) -> dict[str, dict[str, Any]]:
        """Each distinct config's settings that differ from the sweep's base config: ``config_id`` → dotted key →
        value (:func:`~rag_lab.experiments.engine.candidate_configs.config_changes`), in table order."""
        base = self.description.get("base_config", {})
        return {k: config_changes(entry["config"], base, self.swept_keys) for k, entry in self._configs_by_id().items()}

    def metric_matrix(self, candidate_ids: Sequence[str], metric: str, qids: Sequence[str] | None = None) -> np.ndarray:
        """``metric`` per question (rows: ``qids``, default :attr:`qids`, in order) and run (columns:
        ``candidate_ids``, e.g. one config's seeds), each run's column read by :func:`question_values`."""
        qids = self.qids if qids is None else qids
        return np.array([question_values(self.store.rows(cid), qids, metric) for cid in candidate_ids], dtype=float).T

    def _check_metric(self, metric: str) -> None:
        """A clear error for a metric the run does not have (a cost need not be in a row: a role never called)."""
        family = family_of(metric)
        first = next((row for cand in self._candidates for row in self.store.rows(cand["candidate_id"]).values()), {})
        if (family is None or family.side != "cost") and metric not in first:
            raise ConfigError(f"no metric {metric!r} in {self.run_dir} (metrics: {sorted(metric_columns(first))})")

    def paired_values(self, metric: str, candidate: str | Mapping[str, Any],
                      reference: str | Mapping[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``metric`` per question (rows, in :attr:`qids` order) and seed (columns) of ``candidate`` and of
        ``reference`` (each picked as in :meth:`reference`), aligned for a paired test; NaN where undefined."""
        self._check_metric(metric)
        configs = self._configs_by_id()
        cand, ref = configs[self.reference(candidate)["config_id"]], configs[self.reference(reference)["config_id"]]
        if cand["seeds"] != ref["seeds"]:
            raise ConfigError(f"the candidate ran seeds {cand['seeds']}, the reference {ref['seeds']}: "
                             "a paired difference needs the same seeds")
        return self.metric_matrix(cand["candidate_ids"], metric), self.metric_matrix(ref["candidate_ids"], metric)

    def compare(self, metric: str = DEFAULT_QUALITY, reference: str | Mapping[str, Any] | None = None,
                n_boot: int = 2000, alpha: float = 0.05, seed: int = 0) -> pd.DataFrame:
        """Every config against a reference on ``metric``: the paired difference over the same questions
        (:func:`rag_lab.stats.paired.paired_difference`: questions resampled jointly, seeds averaged
        within each question).

        One row per config, in table order: ``candidate_id`` (its first seed's run), ``config_id``, ``label``
        (the parameters that differ from the reference), ``metric``, ``delta`` = candidate − reference with
        its ``1 − alpha`` interval ``lo``/``hi``, ``n`` (questions defined on both sides), ``n_seeds``,
        ``share_differ`` (questions on which the two differ), ``mean`` and ``reference_mean`` on those
        questions, ``excludes_zero`` and ``is_reference``; then the paired test of the difference
        (:func:`rag_lab.stats.significance.paired_test`, two-sided): ``p``, ``test`` (``exact`` sign /
        McNemar, ``permutation`` or ``permutation_mc``), ``n_better`` and ``n_worse`` (questions where the
        candidate is above / below the reference), and ``differences`` (:class:`~rag_lab.stats.power.Differences`:
        what the detectable effect of a cell that is not shown is computed from). ``p`` is not corrected for
        multiplicity: a report or notebook
        corrects over its own family (:func:`rag_lab.stats.significance.holm`). ``attrs["reference"]`` is
        :meth:`reference`'s answer (which candidate, and why: the base config, or the first candidate when the
        base is not a grid point)."""
        self._check_metric(metric)
        ref = self.reference(reference)
        configs = self._configs_by_id()
        ref_entry = configs[ref["config_id"]]
        ref_values = self.metric_matrix(ref_entry["candidate_ids"], metric)
        labels = self.labels(ref["config_id"])
        records = []
        for config_id, entry in configs.items():
            if entry["seeds"] != ref_entry["seeds"]:
                raise ConfigError(f"config {config_id} ran seeds {entry['seeds']}, the reference {ref_entry['seeds']}: "
                                 "a paired difference needs the same seeds")
            values = self.metric_matrix(entry["candidate_ids"], metric)
            test = paired_test(values, ref_values, n_boot=n_boot, alpha=alpha, seed=seed)
            diff = test.difference
            candidate = entry["candidate_ids"][0]
            records.append({"candidate_id": candidate, "config_id": config_id,
                            "label": labels[candidate] if config_id != ref["config_id"] else
                            ("base" if ref["rule"] == "base" else "reference"),
                            "metric": metric, **diff._asdict(), "excludes_zero": diff.excludes_zero,
                            "is_reference": config_id == ref["config_id"], "p": test.p, "test": test.method,
                            "n_better": test.n_better, "n_worse": test.n_worse,
                            "differences": paired_differences(values, ref_values)})
        out = pd.DataFrame.from_records(records)
        out.attrs["reference"] = ref
        return out

    @functools.cached_property
    def provenance(self) -> Provenance:
        """Where these results come from (:class:`~rag_lab.experiments.engine.provenance.Provenance`), as stored
        with the run: what every export of this sweep carries."""
        return stored_provenance(self.store.meta(), self.description)

    def progress(self) -> RunProgress:
        """How many (run, question) pairs are stored of those the sweep plans: every candidate on every question,
        less what a race dropped (its rows stop there), plus a search's trials not yet proposed."""
        per = len(self.qids)
        planned = 0
        for _, row in self.table.iterrows():
            dropped = self.search is not None and row.get("status") == "dropped"
            planned += int(row["n_questions"]) if dropped else per
        planned += self._trials_left() * per
        return RunProgress(finished=self.question_runs(), planned=planned)

    def _known(self, candidate_id: str) -> str:
        if candidate_id not in {c["candidate_id"] for c in self._candidates}:
            raise KeyError(f"no candidate {candidate_id!r} in {self.run_dir}")
        return candidate_id

    def __repr__(self) -> str:
        return (f"SweepResult({str(self.run_dir)!r}, runs={len(self.table)}, questions={len(self.qids)}, "
                f"complete={self.complete})")


def question_values(rows: Mapping[str, Mapping[str, Any]], qids: Sequence[str], metric: str) -> np.ndarray:
    """``metric`` of each of ``qids`` in one run's stored ``rows`` (qid → metrics row, as
    :meth:`~rag_lab.experiments.engine.store.RunStore.rows` reads them): NaN where a question is not stored or its
    value is undefined (None); a row without the key counts as its family's absent value
    (:func:`~rag_lab.evaluation.families.absent_value`: 0 for a cost, a role never called costs nothing)."""
    absent = absent_value(metric)   # (numpy reads None as NaN)
    return np.array([rows[q].get(metric, absent) if q in rows else math.nan for q in qids], dtype=float)


def _write_csv(path: str | Path, frame: pd.DataFrame, head: str, **options: Any) -> Path:
    """``frame`` as CSV (``\\n`` line ends, no index) under the ``head`` lines, in a folder made if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as out:
        out.write(head)
        frame.to_csv(out, index=False, lineterminator="\n", **options)
    return path
