"""Run a search (``search:`` in a sweep file) into a run directory (:func:`run_search`): Optuna's multi-objective
samplers, or every grid point, optionally raced over questions (:mod:`.racing`). Trials are ordinary candidates
of the run store, so the results table, the report, the widgets and ``rag-lab verify`` read a searched run as
they read a grid's; the ``trials`` and ``race`` tables (:mod:`rag_lab.experiments.engine.store`) are recomputed
from the stored rows on every run. The study is not stored: it is replayed against a freshly seeded sampler, so a
killed search resumes to the same trials. How resuming and racing work: docs/cli.md, "Search and racing"."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.evaluator import Evaluator
from rag_lab.experiments.engine.resolved_sweep import ResolvedSweep, candidate_run
from rag_lab.experiments.engine.search_space import SAMPLERS, Constraint, Objective, SearchSpace
from rag_lab.experiments.engine.store import RunStore
from rag_lab.experiments.engine.sweep import SweepSpec
from rag_lab.experiments.tuning.racing import RaceOutcome, mean_of, race_order, run_race

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


def run_search(spec: SweepSpec, resolved: ResolvedSweep, evaluator: Evaluator,
               on_event: Callable[[SearchEvent], None] | None = None) -> None:
    """Run (or resume) the search of ``spec`` (``resolved``: what it resolves to) through ``evaluator``, the one loop
    that runs and stores (candidate, question) pairs. :func:`rag_lab.experiments.sweep_runner.run_sweep` calls this
    for a sweep with ``search:``; read the results with :class:`~rag_lab.experiments.engine.results.SweepResult`."""
    search = spec.search
    if search is None:
        raise ConfigError("run_search needs a sweep with a search: section")
    store = evaluator.store
    objectives, constraints = search.parsed_objectives(), search.parsed_constraints()
    notify = on_event or (lambda _event: None)
    order = race_order(list(resolved.qids), search.seed) if search.race is not None else list(resolved.qids)

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

    if SAMPLERS[search.sampler].walks_grid:
        ids = [r.candidate_id for r in resolved.runs]
        if search.race is not None:
            race(ids, [])
        else:
            evaluator.evaluate(ids, order)
    else:
        _optuna_trials(spec, resolved, store, evaluator, order, objectives, constraints, race, notify)
    notify(SearchEvent("done", text=f"{evaluator.computed} question runs computed"))


def _optuna_trials(spec: SweepSpec, resolved: ResolvedSweep, store: RunStore, evaluator: Evaluator,
                   order: list[str], objectives: list[Objective],
                   constraints: list[Constraint], race: Callable[[Sequence[str], Sequence[str]], dict[str, RaceOutcome]],
                   notify: Callable[[SearchEvent], None]) -> None:
    import optuna

    search = spec.search
    assert search is not None and search.trials is not None
    space = SearchSpace(spec.grid)
    study = optuna.create_study(directions=[o.direction for o in objectives],
                                sampler=SAMPLERS[search.sampler].build(search))
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
            config = resolved.base.with_params(params)
        except ConfigError as exc:  # e.g. a range reaching outside a policy's bounds
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            store.record_trial(number, "", params, f"failed: {exc}", {}, 0)
            continue
        run = candidate_run(spec, config, params, resolved.spec.seeds[0], position=number)
        cid = run.candidate_id
        evaluator.add_run(run)
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
