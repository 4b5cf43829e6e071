"""Run a search (``search:`` in a sweep file) into a run directory: Optuna's multi-objective samplers, or
every grid point, optionally raced over questions (:mod:`.racing`).

Trials are ordinary candidates of the same run store (``candidates`` and ``rows``), so the results table,
the report, the widgets and ``rag-lab verify`` read a searched run as they read a grid's. What is
particular to a search is in two more tables (``trials``, ``race``; see :mod:`rag_lab.experiments.engine.store`), both recomputed
from the stored rows on every run.

**Resume.** The Optuna study is not stored: it is rebuilt on every run by replaying the trials in order
against a freshly seeded sampler. Trial *k* asks the sampler for its params (the same as last time, since
the sampler has been told the same values for trials 0..k−1), the candidate's stored rows are reused
and only the missing (candidate, question) pairs run, and the values told are means of stored rows. So
a run killed at any point (SIGKILL included) resumes to the same trials, the same rows and the same race
decisions as a run that was never interrupted; if the code changed so that a replayed trial proposes
other params than the stored one, the run stops with an error instead of mixing two searches.

**Racing.** ``sampler: grid`` races all the grid's candidates at once. With ``nsga2``/``tpe`` each trial
races against the *incumbents* (the earlier trials that ran every question and survived): it runs the
first batch, then the next, and stops as soon as it is shown dominated. A dropped trial is told to the
sampler with its means over the questions it ran (a noisier estimate, not a failure), so the sampler
still learns where the bad region is. A trial whose params repeat an earlier trial's config reuses that
candidate's rows and outcome (no question runs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.executors import check_executor, execute
from rag_lab.experiments.engine.plan import PlannedRun, SweepPlan, planned_run
from rag_lab.experiments.engine.search_space import Constraint, Objective
from rag_lab.experiments.engine.store import RunStore
from rag_lab.experiments.engine.sweep import SweepSpec
from rag_lab.experiments.engine.worker import WorkContext, WorkerState, WorkUnit
from rag_lab.experiments.tuning.racing import RaceOutcome, mean_of, race_order, run_race
from rag_lab.records import Dataset
from rag_lab.stats.summary import COST_PREFIXES

#: A constraint value told to Optuna when a candidate's metric is undefined (it counts as broken).
UNDEFINED_VIOLATION = 1e9


@dataclass(frozen=True)
class SearchEvent:
    """What a running search reports to ``on_event`` (the sweep panel listens): ``kind`` is ``trial`` (a
    trial was told to the sampler), ``dropped`` (a raced candidate was dropped) or ``done``."""

    kind: str
    candidate_id: str | None = None
    number: int | None = None
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


class _Evaluator:
    """Runs the missing (candidate, question) pairs through the sweep executors and commits them."""

    def __init__(self, store: RunStore, runs: dict[str, PlannedRun], context: WorkContext, local: WorkerState | None,
                 executor: str, workers: int, dask_address: Any, bar: Any) -> None:
        self.store, self.runs, self.context, self.local = store, runs, context, local
        self.executor, self.workers, self.dask_address, self.bar = executor, workers, dask_address, bar
        self.done = store.done_pairs()
        self.computed = 0
        self._rows: dict[str, dict[str, dict[str, Any]]] = {}

    def evaluate(self, candidate_ids: Sequence[str], qids: Sequence[str]) -> None:
        pending = [(cid, [q for q in qids if (cid, q) not in self.done]) for cid in candidate_ids]
        n_pending = sum(len(q) for _, q in pending)
        if not n_pending:
            return
        size = 1 if self.executor in ("serial", "threads") else max(1, math.ceil(n_pending / (self.workers * 4)))
        units = [WorkUnit(candidate_id=cid, config=self.runs[cid].config, seed=self.runs[cid].seed,
                          qids=tuple(q[i:i + size]), backend=self.runs[cid].backend)
                 for cid, q in pending for i in range(0, len(q), size)]
        for outcomes in execute(units, self.context, self.local, self.executor, self.workers, self.dask_address):
            for outcome in outcomes:
                self.computed += self.store.write(outcome)
                self.done.add((outcome.candidate_id, outcome.qid))
                self._rows.pop(outcome.candidate_id, None)
                self.bar.update(1)

    def values(self, candidate_id: str, qids: Sequence[str], metric: str) -> np.ndarray:
        """``metric`` on ``qids`` (NaN where undefined or not run; a cost a role never incurred is 0)."""
        if candidate_id not in self._rows:
            self._rows[candidate_id] = self.store.rows(candidate_id)
        rows = self._rows[candidate_id]
        absent = 0.0 if metric.startswith(COST_PREFIXES) else math.nan
        out = []
        for q in qids:
            value = rows[q].get(metric, absent) if q in rows else math.nan
            out.append(math.nan if value is None else float(value))
        return np.array(out, dtype=float)

    def ran(self, candidate_id: str, qids: Sequence[str]) -> list[str]:
        return [q for q in qids if (candidate_id, q) in self.done]


def _sampler(spec: SweepSpec) -> Any:
    try:
        import optuna
    except ImportError:
        raise ConfigError("a search with sampler nsga2 or tpe needs Optuna (pip install optuna)") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    search = spec.search
    assert search is not None
    # constraints reach the sampler through Trial.set_constraint (Optuna 5; constraints_func is deprecated)
    if search.sampler == "nsga2":
        return optuna.samplers.NSGAIISampler(population_size=search.population, seed=search.seed)
    return optuna.samplers.TPESampler(seed=search.seed)


def run_search(
    spec: SweepSpec,
    plan: SweepPlan,
    dataset: Dataset,
    store: RunStore,
    workers: int = 1,
    executor: str = "serial",
    dask_address: Any = None,
    progress: str = "auto",
    on_event: Callable[[SearchEvent], None] | None = None,
) -> tuple[int, int]:
    """Run (or resume) the search of ``spec`` into ``store`` (created for ``plan``); returns the (candidate,
    question) pairs computed and found stored. :func:`rag_lab.experiments.runner.run_sweep` calls this for a
    sweep with ``search:``; read the results with :class:`~rag_lab.experiments.engine.results.SweepResult`."""
    search = spec.search
    if search is None:
        raise ConfigError("run_search needs a sweep with a search: section")
    check_executor(executor, workers, dask_address)
    objectives, constraints = search.parsed_objectives(), search.parsed_constraints()
    notify = on_event or (lambda _event: None)
    context = WorkContext(dataset=spec.dataset, backend=spec.backend)
    local = WorkerState(context, dataset, concurrency=workers if executor == "threads" else 1) \
        if executor in ("serial", "threads") else None
    before = store.count_rows()
    session = store.begin_session(executor, workers)
    runs = {r.candidate_id: r for r in plan.runs}
    bar = tqdm(desc=f"search {spec.name}", unit="q", disable=progress == "quiet", dynamic_ncols=True)
    evaluator = _Evaluator(store, runs, context, local, executor, workers, dask_address, bar)
    order = race_order(list(plan.qids), search.seed) if search.race is not None else list(plan.qids)

    def race(challengers: Sequence[str], incumbents: Sequence[str]) -> dict[str, RaceOutcome]:
        assert search is not None and search.race is not None

        def dropped(outcome: RaceOutcome) -> None:
            store.record_race(outcome.candidate_id, outcome.status, outcome.n_questions, outcome.rival,
                              outcome.reason, outcome.detail)
            notify(SearchEvent("dropped", outcome.candidate_id, text=outcome.reason,
                               data={"n_questions": outcome.n_questions, "rival": outcome.rival}))

        outcomes = run_race(challengers, incumbents, order, search.race, objectives, constraints,
                            evaluator.evaluate, evaluator.values, on_drop=dropped)
        for o in outcomes.values():
            if o.status == "survived":
                store.record_race(o.candidate_id, o.status, o.n_questions, None, o.reason, o.detail)
        return outcomes

    try:
        if search.sampler == "grid":
            ids = [r.candidate_id for r in plan.runs]
            if search.race is not None:
                race(ids, [])
            else:
                evaluator.evaluate(ids, order)
        else:
            _optuna_trials(spec, plan, store, evaluator, runs, order, objectives, constraints, race, notify)
    finally:
        computed = evaluator.computed
        store.end_session(session, computed)
        bar.close()
        if local is not None:
            local.close()
    notify(SearchEvent("done", text=f"{computed} question runs computed"))
    return computed, before


def _optuna_trials(spec: SweepSpec, plan: SweepPlan, store: RunStore, evaluator: _Evaluator,
                   runs: dict[str, PlannedRun], order: list[str], objectives: list[Objective],
                   constraints: list[Constraint], race: Callable[[Sequence[str], Sequence[str]], dict[str, RaceOutcome]],
                   notify: Callable[[SearchEvent], None]) -> None:
    import optuna

    search = spec.search
    assert search is not None and search.trials is not None
    space = spec.search_space()
    study = optuna.create_study(directions=[o.direction for o in objectives],
                                sampler=_sampler(spec))
    stored = {t["number"]: t for t in store.trials()}
    outcomes: dict[str, RaceOutcome] = {}
    incumbents: list[str] = []
    for number in range(search.trials):
        trial = study.ask()
        params = space.suggest(trial)
        if number in stored and stored[number]["params"] != params:
            raise ConfigError(
                f"{store.run_dir}: trial {number} replays to {params}, but the stored trial has "
                f"{stored[number]['params']} (the sampler or the code changed since this search started); "
                "run it into a new directory, or overwrite this one")
        try:
            config = plan.base.with_params(params)
        except ConfigError as exc:  # e.g. a range reaching outside a policy's bounds
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            store.record_trial(number, "", params, f"failed: {exc}", {}, 0)
            continue
        run = planned_run(spec, config, params, plan.spec.seeds[0], position=number)
        cid = run.candidate_id
        if cid not in runs:
            runs[cid] = run
            store.add_runs([run])
        if search.race is not None:
            if cid not in outcomes:
                outcomes.update(race([cid], incumbents))
                if outcomes[cid].status == "survived":
                    incumbents.append(cid)
            qids = order[:outcomes[cid].n_questions]
        else:
            evaluator.evaluate([cid], order)
            qids = order
        means = {m: mean_of(evaluator.values(cid, qids, m))
                 for m in dict.fromkeys([o.metric for o in objectives] + [k.metric for k in constraints])}
        for k in constraints:
            trial.set_constraint(str(k), UNDEFINED_VIOLATION if math.isnan(means[k.metric]) else k.violation(means[k.metric]))
        values = [means[o.metric] for o in objectives]
        if any(math.isnan(v) for v in values):
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            state = "failed: an objective is undefined on every question run"
        else:
            study.tell(trial, values)
            state = "complete"
        store.record_trial(number, cid, params, state, {o.metric: means[o.metric] for o in objectives}, len(qids))
        notify(SearchEvent("trial", cid, number, text=f"trial {number}: {cid} ({state}, {len(qids)} questions)",
                           data={"params": params, "means": means}))
