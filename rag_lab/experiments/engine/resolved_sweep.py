"""A :class:`ResolvedSweep`: a sweep spec resolved into the exact runs and questions it stands for, by one function
(:meth:`ResolvedSweep.build`; the helpers below are its steps, public for the search and the tests).

A *run* is one distinct candidate config with one seed; its ``candidate_id`` hashes the resolved
config, the backend and the seed, so resolving the same spec again gives the same ids and a resumed
sweep matches its stored rows exactly. The resolved sweep's ``fingerprint`` hashes everything that decides
the results (resolved base config, grid, backend, seeds, question ids); a run directory belongs to
one fingerprint. A search (``spec.search``) with an Optuna sampler resolves to no runs up front: its trials
become runs as the sampler proposes them (:func:`candidate_run`), added to the same store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.candidate_configs import check_claims, completed
from rag_lab.experiments.engine.grid import BACKEND_PREFIX, Grid, GridCandidate, check_keys, config_id, short_hash
from rag_lab.experiments.engine.search_space import SAMPLERS, SearchSpace
from rag_lab.experiments.engine.sweep import BackendSpec, SweepSpec
from rag_lab.pipeline import PipelineConfig
from rag_lab.pipeline.identity import stable
from rag_lab.records import EvalSet

#: Frozen baselines (:func:`rag_lab.pipeline.identity.stable`): the keys every stored backend identity, sweep
#: description and stated claim held. A key added since is in them only off its default; none is added here, ever.
IDENTIFYING_BACKEND = ("kind", "profile", "model", "base_url")
DESCRIBED_SPEC = ("name", "dataset", "split", "types", "per_type", "limit", "base", "grid", "backend", "seeds")
DESCRIBED_BACKEND = ("kind", "profile", "knobs", "model", "base_url", "cache", "max_concurrency", "max_tokens",
                     "cassette", "replay", "price")
DESCRIBED_CLAIM = ("metric", "candidate", "reference", "direction", "margin", "claim", "kind")


def backend_identity(backend: BackendSpec) -> dict[str, Any]:
    """What determines the backend's outputs (not ``cache``, ``max_concurrency``, ``timeout_s`` nor ``max_retries``;
    not ``cassette`` nor ``replay``: a replay gives the recorded outputs, so its candidates are the recording's):
    the simulator's profile, or a server's model and address, then ``max_tokens`` and ``price`` when set."""
    price = None if backend.price is None else backend.price.model_dump()  # it decides the cost_usd column
    if backend.sim_profile is not None:
        values = {"kind": "sim", "profile": backend.sim_profile.model_dump()}
    else:
        values = {"kind": backend.kind, "model": backend.model, "base_url": backend.base_url}
    return stable({**values, "max_tokens": backend.max_tokens, "price": price}, {"max_tokens": None, "price": None},
                  IDENTIFYING_BACKEND)


def described(model: BaseModel, frozen: tuple[str, ...]) -> dict[str, Any]:
    """``model`` as JSON data, each field outside the ``frozen`` baseline only off its default."""
    defaults = {name: to_jsonable_python(field.get_default(call_default_factory=True))
                for name, field in type(model).model_fields.items() if not field.is_required()}
    return stable(model.model_dump(mode="json"), defaults, frozen)


def candidate_id(config: PipelineConfig, backend: BackendSpec, seed: int) -> str:
    """A stable short id of one run: the resolved config, the backend and the seed. Resume matches on it."""
    return short_hash({"config": config.identity(), "backend": backend_identity(backend), "seed": seed})


def base_config(spec: SweepSpec) -> PipelineConfig:
    """The sweep's base pipeline config (read from the file when ``spec.base`` is a path)."""
    if isinstance(spec.base, str):
        return PipelineConfig.from_file(spec.base)
    return PipelineConfig.from_dict(spec.base)


def parameter_grid(spec: SweepSpec) -> Grid:
    """The candidates of a grid sweep, or of a ``sampler: grid`` search (ranges enumerated)."""
    if spec.search is not None:
        if not SAMPLERS[spec.search.sampler].walks_grid:
            raise ConfigError(f"sweep {spec.name!r}: a {spec.search.sampler} search has no grid of candidates; "
                              "its trials are proposed as it runs")
        return SearchSpace(spec.grid).grid()
    return Grid(spec.grid)


def select_questions(spec: SweepSpec, evalset: EvalSet) -> EvalSet:
    """The questions the sweep runs, in dataset order: the split, then the types, then at most ``per_type``
    questions of each type, then at most ``limit`` in all."""
    selected = evalset.select(split=spec.split, types=spec.types, per_type=spec.per_type, limit=spec.limit)
    if not len(selected):
        raise ConfigError(f"sweep {spec.name!r}: no questions selected from {evalset.name!r} "
                          f"(split={spec.split}, types={spec.types})")
    return selected


@dataclass(frozen=True)
class CandidateRun:
    """One candidate config with one seed: a row of the results table."""

    candidate_id: str
    config_id: str
    position: int
    seed: int
    params: dict[str, Any]
    config: PipelineConfig
    #: The backend this run uses: the sweep's, or the candidate's own when the grid sets ``backend.*`` keys.
    backend: BackendSpec
    #: Every dotted key's value (the config's, and the ``backend.*`` keys the grid sets): what the store keeps.
    flat: dict[str, Any]


def candidate_run(spec: SweepSpec, config: PipelineConfig, params: dict[str, Any], seed: int, position: int,
                candidate: GridCandidate | None = None) -> CandidateRun:
    """The run of one resolved candidate ``config`` with ``seed`` at table ``position`` (``candidate``: the
    grid candidate it comes from, whose own backend and id it takes when the grid sets ``backend.*`` keys)."""
    backend = candidate.backend if candidate is not None and candidate.backend is not None else spec.backend
    flat = candidate.flat if candidate is not None and candidate.flat is not None else config.identity()
    cid = candidate.config_id if candidate is not None else config_id(config)
    return CandidateRun(candidate_id=candidate_id(config, backend, seed), config_id=cid, position=position, seed=seed,
                      params=params, config=config, backend=backend, flat=flat)


@dataclass(frozen=True)
class ResolvedSweep:
    """The runs (candidate-major, then seed) and question ids of a sweep, and its fingerprint."""

    spec: SweepSpec
    base: PipelineConfig
    runs: tuple[CandidateRun, ...]
    qids: tuple[str, ...]
    swept_keys: tuple[str, ...]

    @classmethod
    def build(cls, spec: SweepSpec, evalset: EvalSet) -> ResolvedSweep:
        """Resolve ``spec`` against the dataset's ``evalset``; every candidate is validated here, and so are the
        findings the sweep states (each must pick candidates of the grid)."""
        base = base_config(spec)
        runs: list[CandidateRun] = []
        if spec.search is not None and not SAMPLERS[spec.search.sampler].walks_grid:
            keys = SearchSpace(spec.grid).keys
            for key in keys:
                if key.startswith(BACKEND_PREFIX):
                    raise ConfigError(f"search key {key!r}: a search varies policy keys only; sweep backend "
                                      "settings with a grid")
            check_keys(base, keys, "search key")  # unknown keys fail before anything runs, as in a grid
        else:
            grid = parameter_grid(spec)
            keys = grid.keys
            candidates = grid.resolve(base, spec.backend)
            if spec.search is not None and spec.search.trials is not None:  # sampler: grid, its first N points
                candidates = candidates[:spec.search.trials]
            for candidate in candidates:
                for seed in spec.seeds:
                    runs.append(candidate_run(spec, candidate.config, candidate.params, seed, len(runs), candidate))
        qids = tuple(q.qid for q in select_questions(spec, evalset))
        resolved = cls(spec=spec, base=base, runs=tuple(runs), qids=qids, swept_keys=tuple(keys))
        resolved.check_findings()
        return resolved

    def check_findings(self) -> None:
        """Raise a :class:`~rag_lab.errors.ConfigError` naming the first stated finding whose ``candidate`` or
        ``reference`` picks no config of the grid, several, or the same as the other (a search that proposes its
        candidates as it runs is checked when its findings are tested)."""
        configs: dict[str, dict[str, Any]] = {}
        for run in self.runs:
            entry = configs.setdefault(run.config_id, {"config": completed(run.flat), "candidate_ids": []})
            entry["candidate_ids"].append(run.candidate_id)
        claims = [c.model_dump() for c in self.spec.findings]
        check_claims(claims, configs, completed(self.describe()["base_config"]), f"sweep {self.spec.name!r}")

    def describe(self) -> dict[str, Any]:
        """Everything that decides the results, as plain JSON data (stored in the run's meta table)."""
        spec = described(self.spec, DESCRIBED_SPEC)
        spec["backend"] = described(self.spec.backend, DESCRIBED_BACKEND)
        if "findings" in spec:
            spec["findings"] = [described(claim, DESCRIBED_CLAIM) for claim in self.spec.findings]
        backend_keys = [k for k in self.swept_keys if k.startswith(BACKEND_PREFIX)]
        return {
            "spec": spec,
            "base_config": {**self.base.identity(), **self.spec.backend.flat(backend_keys)},
            "backend": backend_identity(self.spec.backend),
            "swept_keys": list(self.swept_keys),
            "qids": list(self.qids),
            "candidate_ids": [r.candidate_id for r in self.runs],
        }

    @property
    def fingerprint(self) -> str:
        """A short hash of :meth:`describe`, where the base config counts by its resolved values (not a
        file path) and the backend by what determines its outputs (not whether the cache is on)."""
        described = self.describe()
        # the claims a sweep states are tested on its rows; they do not decide them
        described["spec"] = {k: v for k, v in described["spec"].items()
                             if k not in {"base", "backend", "findings", "family", "pilot", "pairs_with"}}
        return short_hash(described, length=16)

    @property
    def n_pairs(self) -> int:
        """(run, question) pairs in the whole sweep."""
        return len(self.runs) * len(self.qids)
