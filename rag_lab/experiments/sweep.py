"""Declaring a sweep: a parameter :class:`Grid` over dotted pipeline keys, and the :class:`SweepSpec`
that names the data, the base config, the grid, the backend and the seeds (DESIGN.md §6).

Grid semantics follow scikit-learn's ``ParameterGrid``:

>>> grid = Grid({"round_cap.max_rounds": [1, 2], "disclosure.disclosed": [False, True]})
>>> len(grid), grid[1]
(4, {'disclosure.disclosed': False, 'round_cap.max_rounds': 2})
>>> conditional = Grid([{"hyde.enabled": [False]}, {"hyde.enabled": [True], "hyde.n_docs": [2, 4]}])
>>> list(conditional)
[{'hyde.enabled': False}, {'hyde.enabled': True, 'hyde.n_docs': 2}, {'hyde.enabled': True, 'hyde.n_docs': 4}]

A dict's candidates are the product of its value lists with the keys in sorted order (the last key
varies fastest); a list of dicts yields each dict's candidates in turn. :meth:`Grid.resolve`
validates every candidate against a base config before anything runs.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from rag_lab.config_files import explain_validation, read_mapping
from rag_lab.errors import ConfigError
from rag_lab.experiments.search_space import SearchSpace, SearchSpec
from rag_lab.llm.factory import BACKEND_KINDS, simulator_profile
from rag_lab.llm.sim.profile import is_profile_file
from rag_lab.pipeline import PipelineConfig
from rag_lab.records import EvalSet

GridSpec = Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]]


class Grid:
    """The candidates of a parameter grid: each one a ``{dotted key: value}`` dict.

    ``spec`` is a dict of dotted keys to non-empty value lists, or a list of such dicts (a
    conditional grid). An empty dict is one candidate that changes nothing (the base config)."""

    def __init__(self, spec: GridSpec) -> None:
        entries = [spec] if isinstance(spec, Mapping) else spec
        if isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence):
            raise ConfigError(f"a grid is a dict of dotted keys to value lists, or a list of such dicts; "
                              f"got {type(spec).__name__}")
        if not entries:
            raise ConfigError("a grid given as a list needs at least one dict")
        self._entries: list[list[tuple[str, list[Any]]]] = [_entry(e, i) for i, e in enumerate(entries)]
        self._sizes = [_product_size(e) for e in self._entries]

    def __len__(self) -> int:
        return sum(self._sizes)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for entry in self._entries:
            keys = [k for k, _ in entry]
            for values in itertools.product(*(v for _, v in entry)):
                yield dict(zip(keys, values, strict=True))

    def __getitem__(self, index: int) -> dict[str, Any]:
        """The candidate at ``index`` (negative indices count from the end), without expanding the grid."""
        n = len(self)
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"grid indices are integers, not {type(index).__name__}")
        if not -n <= index < n:
            raise IndexError(f"grid index {index} out of range for a grid of {n} candidates")
        index %= n
        for entry, size in zip(self._entries, self._sizes, strict=True):
            if index < size:
                params = {}
                for key, values in reversed(entry):  # the last key varies fastest
                    index, pos = divmod(index, len(values))
                    params[key] = values[pos]
                return dict(sorted(params.items()))
            index -= size
        raise AssertionError("unreachable: index was range-checked")

    def __repr__(self) -> str:
        return f"Grid({len(self)} candidates in {len(self._entries)} dict(s))"

    @property
    def keys(self) -> list[str]:
        """Every dotted key the grid sets anywhere, sorted."""
        return sorted({k for entry in self._entries for k, _ in entry})

    def resolve(self, base: PipelineConfig) -> list[GridCandidate]:
        """Validate every candidate against ``base`` and return the distinct configs, in grid order.

        Unknown keys and invalid values raise :class:`ConfigError` naming the candidate, before
        anything runs. Candidates that resolve to the same config (typically the baseline value
        listed in several dicts of a one-factor-at-a-time grid) **collapse** into the first one;
        its ``params`` become the union of the duplicates' params (they agree, since the configs
        are equal) and ``grid_indices`` lists every grid position it stands for."""
        for key in self.keys:
            try:
                base.get(key)
            except ConfigError as exc:
                raise ConfigError(f"grid key {key!r}: {exc}") from None
        unique: dict[str, GridCandidate] = {}
        for index, params in enumerate(self):
            try:
                config = base.set(params)
            except ConfigError as exc:
                raise ConfigError(f"grid candidate {index} {params}: {exc}") from None
            digest = config_id(config)
            if digest in unique:
                first = unique[digest]
                unique[digest] = GridCandidate(config_id=digest, params={**first.params, **params}, config=config,
                                               grid_indices=(*first.grid_indices, index))
            else:
                unique[digest] = GridCandidate(config_id=digest, params=params, config=config, grid_indices=(index,))
        return list(unique.values())


@dataclass(frozen=True)
class GridCandidate:
    """One distinct config of a grid: the params the grid set, the resolved config and its id."""

    config_id: str
    params: dict[str, Any]
    config: PipelineConfig
    grid_indices: tuple[int, ...]


def _entry(entry: Any, position: int) -> list[tuple[str, list[Any]]]:
    where = f"grid dict {position}"
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: expected a dict of dotted keys to value lists, got {type(entry).__name__}")
    items = []
    for key in sorted(entry):
        values = entry[key]
        if not isinstance(key, str):
            raise ConfigError(f"{where}: keys are dotted strings like 'crag.upper', got {key!r}")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise ConfigError(f"{where}, key {key!r}: expected a list of values, got {values!r}")
        if not values:
            raise ConfigError(f"{where}, key {key!r}: the value list is empty")
        items.append((key, list(values)))
    return items


def _product_size(entry: list[tuple[str, list[Any]]]) -> int:
    size = 1
    for _, values in entry:
        size *= len(values)
    return size


# --- identities -----------------------------------------------------------------------------------


def canonical_json(value: Any) -> str:
    """Sorted-key, compact JSON (tuples become lists): the text that identities are hashed from."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_jsonable)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"cannot serialise {type(value).__name__} in a sweep identity")


def short_hash(value: Any, length: int = 12) -> str:
    """The first ``length`` hex digits of SHA-256 over :func:`canonical_json` of ``value``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:length]


def config_id(config: PipelineConfig) -> str:
    """A stable short id of a resolved pipeline config (every parameter, not just the swept ones)."""
    return short_hash(config.flat())


def candidate_id(config: PipelineConfig, backend: BackendSpec, seed: int) -> str:
    """A stable short id of one run: the resolved config, the backend and the seed. Resume matches on it."""
    return short_hash({"config": config.flat(), "backend": backend.identity(), "seed": seed})


# --- the spec -------------------------------------------------------------------------------------


class BackendSpec(BaseModel):
    """Which LLM answers: ``sim`` (profile and knob overrides), ``openai`` or ``local``.
    ``cache`` uses the shared LLM response cache (it changes what is spent, never results).
    ``max_tokens`` caps every call's completion tokens (a slow local model's 512-token answers).
    ``max_concurrency``: calls in flight at once to an ``openai`` server, e.g. its rate limit
    (default: the sweep's number of thread workers, so every question in flight can call)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str = "sim"
    profile: str = Field(default="typical", description="a profile name (ideal, typical, sloppy) or a profile file "
                                                        "(.yaml/.json, e.g. from rag-lab calibrate; relative to the "
                                                        "sweep file)")
    knobs: dict[str, float | str] = Field(
        default_factory=dict, description="simulator knob overrides (rates in [0, 1], e.g. `synonym_spinning: 0.6`)")
    model: str | None = None
    base_url: str | None = None
    cache: bool = True
    max_concurrency: int | None = Field(default=None, ge=1, le=1024)
    max_tokens: int | None = Field(default=None, ge=1, le=32768,
                                   description="cap on every call's completion tokens (for slow local models)")

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        if kind not in BACKEND_KINDS:
            raise ValueError(f"unknown backend {kind!r}; choose one of {', '.join(BACKEND_KINDS)}")
        return kind

    @model_validator(mode="after")
    def _valid_profile(self) -> BackendSpec:
        if self.kind == "sim":
            try:
                simulator_profile(self.profile, self.knobs)
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
        elif self.knobs:
            raise ValueError(f"knobs are simulator settings; backend {self.kind!r} takes none")
        return self

    def identity(self) -> dict[str, Any]:
        """What determines the backend's outputs (not ``cache`` nor ``max_concurrency``; ``max_tokens``
        only when set, so the identities of uncapped sweeps are what they always were)."""
        cap = {} if self.max_tokens is None else {"max_tokens": self.max_tokens}
        if self.kind == "sim":
            return {"kind": "sim", "profile": simulator_profile(self.profile, self.knobs).model_dump(), **cap}
        return {"kind": self.kind, "model": self.model, "base_url": self.base_url, **cap}


class SweepSpec(BaseModel):
    """A whole sweep: questions (``dataset``, ``split``, ``types``, ``per_type``, ``limit``), the
    ``base`` config (nested or dotted dict, or a YAML/JSON config file path), the ``grid``, the
    ``backend`` and the simulator ``seeds`` (one run per candidate and seed). With ``search``
    (:class:`~rag_lab.experiments.search_space.SearchSpec`) the grid is the space a sampler searches
    (values may also be ranges ``{low, high}``), optionally raced over questions; a search takes one seed.

    Questions are chosen in dataset order: the split, then the types, then at most ``per_type``
    questions of each type, then at most ``limit`` in all."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9_.-]+$")
    dataset: str = Field(min_length=1, description="a shipped dataset name (world) or a dataset path")
    split: str | None = None
    types: list[str] | None = None
    per_type: int | None = Field(default=None, ge=1)
    limit: int | None = Field(default=None, ge=1)
    base: dict[str, Any] | str = Field(default_factory=dict)
    search: SearchSpec | None = None  # (before grid: the grid is read as a search space when it is set)
    grid: dict[str, Any] | list[Any] = Field(default_factory=dict)
    backend: BackendSpec = BackendSpec()
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)

    @field_validator("grid")
    @classmethod
    def _grid_shape(cls, grid: dict[str, Any] | list[Any], info: ValidationInfo) -> dict[str, Any] | list[Any]:
        search = info.data.get("search")
        try:
            if search is None:
                Grid(grid)
            else:
                space = SearchSpace(grid)
                if search.sampler == "grid":
                    space.grid()
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return grid

    @model_validator(mode="after")
    def _one_seed_per_search(self) -> SweepSpec:
        if self.search is not None and len(self.seeds) != 1:
            raise ValueError(f"a search runs one seed (each trial is one candidate), got seeds {self.seeds}")
        return self

    @field_validator("seeds")
    @classmethod
    def _distinct_seeds(cls, seeds: list[int], info: ValidationInfo) -> list[int]:
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds must be distinct, got {seeds}")
        if any(s < 0 for s in seeds):
            raise ValueError(f"seeds must be >= 0, got {seeds}")
        backend = info.data.get("backend")
        if backend is not None and backend.kind != "sim" and len(seeds) > 1:
            raise ValueError(f"several seeds need the simulator; backend {backend.kind!r} takes one seed")
        return seeds

    # --- resolution ----------------------------------------------------------------------------

    def base_config(self) -> PipelineConfig:
        """The base pipeline config (read from the file when ``base`` is a path)."""
        if isinstance(self.base, str):
            return PipelineConfig.from_file(self.base)
        return PipelineConfig.from_dict(self.base)

    def parameter_grid(self) -> Grid:
        """The candidates of a grid sweep, or of a ``sampler: grid`` search (ranges enumerated)."""
        if self.search is not None:
            if self.search.sampler != "grid":
                raise ConfigError(f"sweep {self.name!r}: a {self.search.sampler} search has no grid of candidates; "
                                  "its trials are proposed as it runs")
            return self.search_space().grid()
        return Grid(self.grid)

    def search_space(self) -> SearchSpace:
        """The space a search samples (the ``grid`` section read with ranges allowed)."""
        return SearchSpace(self.grid)

    def select_questions(self, evalset: EvalSet) -> EvalSet:
        """The questions this sweep runs, in dataset order (see the class doc)."""
        questions = evalset.select(split=self.split, types=self.types, per_type=self.per_type, limit=self.limit).questions
        if not questions:
            raise ConfigError(f"sweep {self.name!r}: no questions selected from {evalset.name!r} "
                              f"(split={self.split}, types={self.types})")
        return EvalSet(questions, name=evalset.name)

    # --- files ---------------------------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | Path) -> SweepSpec:
        """Read a YAML or JSON sweep file. A relative ``base`` path is read relative to the file."""
        path = Path(path)
        data = read_mapping(path, "sweep")
        if isinstance(data.get("base"), str) and not Path(data["base"]).is_absolute():
            data["base"] = str(path.parent / data["base"])
        backend = data.get("backend")
        if (isinstance(backend, dict) and isinstance(backend.get("profile"), str)
                and is_profile_file(backend["profile"]) and not Path(backend["profile"]).is_absolute()):
            data["backend"] = {**backend, "profile": str(path.parent / backend["profile"])}
        try:
            return cls.from_dict(data)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SweepSpec:
        """Validate a sweep given as a dict; errors name each field at fault."""
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise ConfigError(explain_validation(exc, "sweep")) from None




def load_sweep_spec(source: SweepSpec | Mapping[str, Any] | str | Path) -> SweepSpec:
    """A :class:`SweepSpec` from a spec, a dict, or a YAML/JSON file path."""
    if isinstance(source, SweepSpec):
        return source
    if isinstance(source, Mapping):
        return SweepSpec.from_dict(source)
    return SweepSpec.from_file(source)
