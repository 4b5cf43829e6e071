"""Declaring a search instead of a grid: the ``search:`` section of a sweep file (:class:`SearchSpec`: sampler,
trials, objectives, constraints, racing) and the space it searches (:class:`SearchSpace`: the sweep's ``grid:``,
where a value is a list of choices or a ``{low, high}`` range, and a list of dicts is a conditional space).
Objectives are metric columns, minimised or maximised by what they are (or ``min:`` / ``max:``); a constraint is
``METRIC <= NUMBER`` or ``>=`` on a candidate's mean. Search files: docs/cli.md, "Search and racing"."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY, check_metric, lower_is_better
from rag_lab.evaluation.families import is_metric
from rag_lab.experiments.engine.grid import Grid
from rag_lab.registry import Registry

_CONSTRAINT = re.compile(r"^\s*([a-z0-9_]+)\s*(<=|>=)\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*$")


# --- objectives and constraints ------------------------------------------------------------------


@dataclass(frozen=True)
class Objective:
    """A metric column and whether it is minimised."""

    metric: str
    minimize: bool

    @property
    def direction(self) -> str:
        return "minimize" if self.minimize else "maximize"

    @classmethod
    def parse(cls, text: str) -> Objective:
        direction, _, metric = text.rpartition(":")
        if direction not in ("", "min", "max"):
            raise ConfigError(f"objective {text!r}: the prefix is min: or max:, not {direction}:")
        if not is_metric(metric):
            raise ConfigError(f"objective {text!r}: expected a metric column such as cost_llm_calls or "
                             "quality_answer_containment_strict")
        check_metric(metric, f"objective {text!r}:")
        if direction:
            return cls(metric, direction == "min")
        return cls(metric, lower_is_better(metric))


@dataclass(frozen=True)
class Constraint:
    """``metric <= bound`` or ``metric >= bound`` on a candidate's mean."""

    metric: str
    op: Literal["<=", ">="]
    bound: float

    @classmethod
    def parse(cls, text: str) -> Constraint:
        found = _CONSTRAINT.match(text)
        if not found or not is_metric(found.group(1)):
            raise ConfigError(f"constraint {text!r}: expected METRIC <= NUMBER or METRIC >= NUMBER, "
                             "e.g. 'cost_llm_calls <= 3'")
        check_metric(found.group(1), f"constraint {text!r}:")
        return cls(found.group(1), found.group(2), float(found.group(3)))  # type: ignore[arg-type]

    def violation(self, mean: float) -> float:
        """How far ``mean`` breaks the constraint (> 0), or by how much it keeps it (<= 0); NaN stays NaN,
        which counts as broken (Optuna's convention: a constraint value <= 0 is feasible)."""
        return mean - self.bound if self.op == "<=" else self.bound - mean

    def holds(self, mean: float) -> bool:
        return not math.isnan(mean) and self.violation(mean) <= 0

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.bound:g}"


# --- the racing and search sections --------------------------------------------------------------


class RaceSpec(BaseModel):
    """Racing over questions: every candidate runs the first ``batches[0]`` questions (in a seeded
    random order of the sweep's questions), then the next batches, then all; after each batch but the
    last (a *look*), a candidate is dropped when a test shows a surviving rival dominating it — not worse on
    every objective and better on one — or its mean breaking a constraint: Bonferroni over its rivals, Holm over
    the look's candidates and constraints, at the look's share of ``alpha`` (in proportion to its questions).
    ``dominance``: ``noninferior`` (not worse = the exact non-inferiority test with ``margin``, a net share of
    the questions: 0.02 lets the rival lose on at most 2% more of the questions than it wins) or ``strict``
    (shown better on every objective); see :mod:`rag_lab.experiments.tuning.racing`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    batches: list[int] = Field(default_factory=lambda: [20, 40, 80], min_length=1)
    alpha: float = Field(default=0.05, gt=0.0, lt=0.5)
    dominance: Literal["noninferior", "strict"] = "noninferior"
    margin: float = Field(default=0.02, gt=0.0, lt=0.5)

    @field_validator("dominance", mode="before")
    @classmethod
    def _no_weak(cls, value: Any) -> Any:
        if value == "weak":
            raise ConfigError("dominance 'weak' (never worse on the questions run so far: an observation, not a test) "
                             "is gone; use 'noninferior' (shown not worse within race.margin, the default) or 'strict'")
        return value

    @field_validator("batches")
    @classmethod
    def _increasing(cls, batches: list[int]) -> list[int]:
        if any(b < 2 for b in batches) or any(b >= a for a, b in zip(batches[1:], batches, strict=False)):
            raise ConfigError(f"race batches are question counts >= 2 in increasing order, got {batches}")
        return batches

    def stages(self, n_questions: int) -> list[int]:
        """The question counts of each stage for ``n_questions`` in all (the last is always all of them)."""
        return [b for b in self.batches if b < n_questions] + [n_questions]


@dataclass(frozen=True)
class Sampler:
    """One search sampler: Optuna's (``build(search)`` makes it, seeded) or, without ``build``, the grid walked in
    its order (every point of the sweep's grid, no Optuna)."""

    build: Callable[[Any], Any] | None = None

    @property
    def walks_grid(self) -> bool:
        """Whether the sampler walks the sweep's grid (its candidates are resolved up front)."""
        return self.build is None


def _optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise ConfigError("a search with an Optuna sampler (nsga2, tpe) needs Optuna (pip install optuna)") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _nsga2(search: Any) -> Any:
    # constraints reach the sampler through Trial.set_constraint (Optuna 5; constraints_func is deprecated)
    return _optuna().samplers.NSGAIISampler(population_size=search.population, seed=search.seed)


def _tpe(search: Any) -> Any:
    return _optuna().samplers.TPESampler(seed=search.seed)


#: The search samplers by name (a search's ``sampler:``, the sweep panel's choices).
SAMPLERS: Registry[Sampler] = Registry("sampler")
SAMPLERS.add("nsga2", Sampler(_nsga2))
SAMPLERS.add("tpe", Sampler(_tpe))
SAMPLERS.add("grid", Sampler())


class SearchSpec(BaseModel):
    """The ``search:`` section of a sweep: ``sampler`` (``nsga2``, ``tpe``: Optuna's multi-objective
    samplers; ``grid``: every point of the space, in grid order), ``trials`` (how many the sampler
    proposes; a grid defaults to all its points), ``objectives``, ``constraints``, ``seed`` (the
    sampler's and the racing order's), ``population`` (NSGA-II's generation size) and ``race`` (racing over
    questions, :mod:`rag_lab.experiments.tuning.racing`). Each objective is minimised or maximised by what it is
    (``cost_*`` and rates of bad outcomes such as ``quality_refused`` minimised, other ``quality_*`` maximised), or
    explicitly with a ``min:`` / ``max:`` prefix; a candidate that breaks a constraint is never on the front.

    >>> spec = SearchSpec.model_validate({"sampler": "nsga2", "trials": 30,
    ...                                   "constraints": ["cost_llm_calls <= 3"]})
    >>> spec.objectives, [str(c) for c in spec.parsed_constraints()]
    (['cost_llm_calls', 'quality_answer_containment_strict'], ['cost_llm_calls <= 3'])"""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sampler: SAMPLERS.field() = "nsga2"  # type: ignore[valid-type]
    trials: int | None = Field(default=None, ge=1, le=100_000)
    objectives: list[str] = Field(default_factory=lambda: [DEFAULT_COST, DEFAULT_QUALITY], min_length=1, max_length=4)
    constraints: list[str] = Field(default_factory=list)
    seed: int = Field(default=0, ge=0)
    population: int = Field(default=8, ge=2, le=1000)
    race: RaceSpec | None = None

    @field_validator("objectives")
    @classmethod
    def _objectives(cls, objectives: list[str]) -> list[str]:
        parsed = [Objective.parse(o) for o in objectives]
        if len({o.metric for o in parsed}) != len(parsed):
            raise ConfigError(f"objectives must be distinct metrics, got {objectives}")
        return objectives

    @field_validator("constraints")
    @classmethod
    def _constraints(cls, constraints: list[str]) -> list[str]:
        for c in constraints:
            Constraint.parse(c)
        return constraints

    @model_validator(mode="after")
    def _trials(self) -> SearchSpec:
        if not SAMPLERS[self.sampler].walks_grid and self.trials is None:
            raise ConfigError(f"sampler {self.sampler!r} needs trials: N (how many candidates it proposes)")
        return self

    def parsed_objectives(self) -> list[Objective]:
        return [Objective.parse(o) for o in self.objectives]

    def parsed_constraints(self) -> list[Constraint]:
        return [Constraint.parse(c) for c in self.constraints]


# --- the parameter space -------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Range:
    low: float
    high: float
    step: float | None
    log: bool
    integer: bool

    def points(self, key: str) -> list[Any]:
        """Every value of a stepped (or integer) range, for ``sampler: grid``."""
        if self.log:
            raise ConfigError(f"{key}: a log range cannot be enumerated by sampler: grid; give a list of values")
        step = self.step if self.step is not None else (1 if self.integer else None)
        if step is None:
            raise ConfigError(f"{key}: a float range needs a step for sampler: grid")
        count = int(math.floor((self.high - self.low) / step + 1e-9)) + 1
        values = [self.low + i * step for i in range(count)]
        return [int(round(v)) for v in values] if self.integer else [round(v, 12) for v in values]


def _dimension(key: str, value: Any, where: str) -> Choice | Range:
    if isinstance(value, Mapping):
        unknown = set(value) - {"low", "high", "step", "log"}
        if unknown or not {"low", "high"} <= set(value):
            raise ConfigError(f"{where}, key {key!r}: a range is {{low, high}} with optional step and log, got {dict(value)}")
        low, high, step, log = value["low"], value["high"], value.get("step"), bool(value.get("log", False))
        numbers = [v for v in (low, high, step) if v is not None]
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in numbers):
            raise ConfigError(f"{where}, key {key!r}: low, high and step are numbers, got {dict(value)}")
        if not low < high:
            raise ConfigError(f"{where}, key {key!r}: low must be below high, got {low} and {high}")
        if step is not None and (step <= 0 or (log and step is not None)):
            raise ConfigError(f"{where}, key {key!r}: step must be > 0 and cannot go with log")
        if log and low <= 0:
            raise ConfigError(f"{where}, key {key!r}: a log range needs low > 0")
        integer = all(isinstance(v, int) for v in numbers)
        return Range(low=low, high=high, step=step, log=log, integer=integer)
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
        raise ConfigError(f"{where}, key {key!r}: expected a non-empty list of choices or a range {{low, high}}, "
                          f"got {value!r}")
    for v in value:
        if v is not None and not isinstance(v, (bool, int, float, str)):
            raise ConfigError(f"{where}, key {key!r}: choices are numbers, strings, booleans or null, got {v!r}")
    return Choice(tuple(value))


class SearchSpace:
    """The dotted-key space of a search: one dict of dimensions, or a list of dicts (branches). A value is a
    **list of choices** (as in a grid) or a **range** ``{low: 1, high: 4}`` (integers when ``low`` and ``high``
    are integers; ``step`` and ``log`` optional). A list of dicts is a **conditional** space: the sampler first
    picks one dict (a categorical ``branch``), then that dict's keys, so ``hyde.n_docs`` is searched only where
    ``hyde.enabled`` is true:

    >>> space = SearchSpace([{"hyde.enabled": [False]},
    ...                      {"hyde.enabled": [True], "hyde.n_docs": {"low": 1, "high": 4}}])
    >>> space.keys, len(space.branches)
    (['hyde.enabled', 'hyde.n_docs'], 2)
    >>> space.grid().__len__()   # sampler: grid enumerates it (ranges need integers or a step)
    5
    """

    def __init__(self, spec: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> None:
        entries = [spec] if isinstance(spec, Mapping) else list(spec)
        if not entries or any(not isinstance(e, Mapping) for e in entries):
            raise ConfigError("a search space is a dict of dotted keys to choices or ranges, or a list of such dicts")
        self.branches: list[dict[str, Choice | Range]] = []
        for i, entry in enumerate(entries):
            where = f"search space dict {i}"
            if not entry:
                raise ConfigError(f"{where} is empty: a search needs at least one parameter")
            for key in entry:
                if not isinstance(key, str):
                    raise ConfigError(f"{where}: keys are dotted strings like 'crag.upper', got {key!r}")
            self.branches.append({k: _dimension(k, entry[k], where) for k in sorted(entry)})

    @property
    def keys(self) -> list[str]:
        return sorted({k for b in self.branches for k in b})

    def _name(self, branch: int, key: str) -> str:
        """The Optuna parameter name: the dotted key, prefixed by its branch when there are several
        (one Optuna parameter must keep one distribution)."""
        return key if len(self.branches) == 1 else f"{branch}:{key}"

    def suggest(self, trial: Any) -> dict[str, Any]:
        """The dotted params of one Optuna ``trial`` (its ``suggest_*`` calls, in a fixed order)."""
        branch = 0 if len(self.branches) == 1 else trial.suggest_categorical("branch", list(range(len(self.branches))))
        params: dict[str, Any] = {}
        for key, dim in self.branches[branch].items():
            name = self._name(branch, key)
            if isinstance(dim, Choice):
                params[key] = trial.suggest_categorical(name, list(dim.values))
            elif dim.integer:
                params[key] = trial.suggest_int(name, int(dim.low), int(dim.high), step=int(dim.step or 1), log=dim.log)
            else:
                params[key] = trial.suggest_float(name, float(dim.low), float(dim.high), step=dim.step, log=dim.log)
        return params

    def grid(self) -> Grid:
        """The space as a :class:`Grid` (``sampler: grid``): choices as given, ranges enumerated."""
        return Grid([{k: list(d.values) if isinstance(d, Choice) else d.points(k) for k, d in b.items()}
                     for b in self.branches])
