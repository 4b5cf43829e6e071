"""Declaring a sweep, as plain validated data: the :class:`SweepSpec` that names the data, the base config, the
parameter grid over dotted pipeline keys, the backend (:class:`BackendSpec`), the seeds, an optional ``search:`` and
the findings it states (:class:`ClaimSpec`). Nothing here runs or reads a dataset (the one file it reads is a simulator
profile file a backend names, checked with it); the sweep file is read by
:mod:`rag_lab.experiments.engine.sweep_file`, and one function,
:meth:`rag_lab.experiments.engine.resolved_sweep.ResolvedSweep.build`, resolves a spec into its runs and questions. Sweep files:
docs/cli.md, "Sweep files"; the design: docs/design.md §6."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from rag_lab.config_files import explain_validation
from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import check_metric
from rag_lab.experiments.engine.grid import BACKEND_PREFIX, Grid
from rag_lab.experiments.engine.pair_metrics import PAIR_METRICS
from rag_lab.experiments.engine.search_space import SAMPLERS, SearchSpace, SearchSpec
from rag_lab.llm.factory import BACKENDS, BackendKind, simulator_profile
from rag_lab.llm.ledger import Price
from rag_lab.llm.sim.profile import PROFILES, SimulatorProfile


class BackendSpec(BaseModel):
    """Which LLM answers: ``sim`` (profile and knob overrides), ``openai`` or ``local``.
    ``cache`` uses the shared LLM response cache (it changes what is spent, never results).
    ``max_tokens`` caps every call's completion tokens (a slow local model's 512-token answers).
    ``max_concurrency``: calls in flight at once to an ``openai`` server, e.g. its rate limit
    (default: the sweep's number of thread workers, so every question in flight can call). ``timeout_s`` and
    ``max_retries`` (``openai``, ``local``): how long one HTTP attempt may take and how often a failed one is
    retried; like ``cache`` they are not part of the sweep's identity (they decide when an answer comes, not what
    it is), so setting them on a stored run resumes it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: BackendKind = Field(default="sim", description="a backend of rag_lab.llm.factory.BACKENDS")
    profile: str = Field(default="typical", description=f"a profile name ({', '.join(PROFILES)}) or a profile file "
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
    cassette: str | None = Field(default=None, description="a cassette file (rag_lab.llm.cassette; relative to the sweep "
                                                           "file): a live backend records every call into it, resuming")
    replay: bool = Field(default=False, description="answer from the cassette alone, offline (rag-lab sweep --replay); a "
                                                    "call it does not hold is an error")
    timeout_s: float | None = Field(default=None, gt=0, le=86400,
                                    description="seconds one HTTP attempt to the model server may take (openai, "
                                                "local; default: the backend's, 60 s for openai, 300 s for local)")
    max_retries: int | None = Field(default=None, ge=0, le=100,
                                    description="retries of a failed attempt (timeout, 429, 5xx, unreadable body) "
                                                "before the call gives up (default: the backend's, 3 for openai, 1 "
                                                "for local)")
    price: Price | None = Field(default=None, description="USD per million input and output tokens of this model "
                                                          "(`price: {input_per_m: 0.15, output_per_m: 0.60}`), what "
                                                          "cost_usd and spent_usd count; unset: an illustrative "
                                                          "small-model rate, not a quote")

    @model_validator(mode="after")
    def _valid_profile(self) -> BackendSpec:
        if BACKENDS[self.kind].simulated:
            try:
                self.sim_profile  # noqa: B018  (resolved here, once: the sweep, its ids and the workers read it)
            except ConfigError as exc:
                raise ConfigError(str(exc)) from None
        elif self.knobs:
            raise ConfigError(f"knobs are simulator settings; backend {self.kind!r} takes none")
        if not BACKENDS[self.kind].real and self.cassette is not None:
            raise ConfigError(f"a cassette records a real backend (openai or local), not {self.kind!r}")
        if not BACKENDS[self.kind].real and (self.timeout_s is not None or self.max_retries is not None):
            raise ConfigError(f"timeout_s and max_retries are settings of a model server (openai or local), "
                              f"not of {self.kind!r}")
        if self.replay and self.cassette is None:
            raise ConfigError("replay needs the cassette to replay (backend.cassette)")
        return self

    @cached_property
    def sim_profile(self) -> SimulatorProfile | None:
        """The simulator profile with the knob overrides (``kind: sim``; else None), resolved once per spec."""
        return simulator_profile(self.profile, self.knobs) if BACKENDS[self.kind].simulated else None

    def with_settings(self, settings: Mapping[str, Any]) -> BackendSpec:
        """A validated copy with the dotted ``settings`` changed: ``profile``, ``model``, ``max_tokens`` … by
        their field name, and one simulator knob as ``knobs.<knob>`` (the keys a grid writes as
        ``backend.profile`` or ``backend.knobs.synonym_spinning``, without the ``backend.`` prefix)."""
        data = self.model_dump()
        knobs = dict(data["knobs"])
        for key, value in settings.items():
            field, _, knob = key.partition(".")
            if field == "knobs" and knob:
                knobs[knob] = value
            elif field in _GRID_FIELDS and not knob:
                data[field] = value
            else:
                raise ConfigError(f"'backend.{key}' is not a backend setting a grid can vary; use one of "
                                  f"{', '.join(f'backend.{f}' for f in _GRID_FIELDS)}"
                                  " or backend.knobs.<knob>")
        return BackendSpec.from_dict({**data, "knobs": knobs})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BackendSpec:
        """Validate a backend given as a dict; errors name each field at fault."""
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise ConfigError(explain_validation(exc, "backend")) from None

    def flat(self, keys: Iterable[str]) -> dict[str, Any]:
        """This backend's values of the dotted ``keys`` (``backend.profile``, ``backend.knobs.<knob>``: a knob's
        effective value, from the profile where the spec does not override it)."""
        profile = self.sim_profile.model_dump() if self.sim_profile is not None else {}
        out = {}
        for key in keys:
            field, _, knob = key.removeprefix(BACKEND_PREFIX).partition(".")
            out[key] = self.knobs.get(knob, profile.get(knob)) if field == "knobs" else getattr(self, field)
        return out


#: The settings of how a model server is called, not of what it answers: outside every identity and fingerprint,
#: and not a grid's to vary (two candidates differing only in them would be one run).
SERVER_SETTINGS = ("timeout_s", "max_retries")
#: The backend settings a grid may vary (``backend.<field>``; knobs as ``backend.knobs.<knob>``).
_GRID_FIELDS = tuple(f for f in BackendSpec.model_fields
                     if f not in ("kind", "knobs", "cassette", "replay", "price", *SERVER_SETTINGS))


class ClaimSpec(BaseModel):
    """A claim a sweep states up front (the ``findings:`` section): ``candidate`` minus ``reference`` (dicts of
    dotted settings picking one config each, or candidate ids; no reference: the base config) on ``metric``
    lies ``direction`` of 0 (``above``/``below``: a one-sided paired test; ``none``: within ±``margin``, the
    TOST). The sweep's findings form one family, tested in the order listed (fixed sequence: a finding counts
    when it and every one before it do, so its verdict never depends on the findings after it); ``rag-lab
    sweep``, the HTML report and :func:`rag_lab.experiments.engine.findings.sweep_findings` test them with the same
    code."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric: str
    candidate: dict[str, Any] | str
    reference: dict[str, Any] | str | None = None
    direction: Literal["above", "below", "none"] = "above"
    margin: float | None = Field(default=None, gt=0.0)
    claim: str = ""
    name: str = Field(default="", max_length=80, pattern=r"^[A-Za-z0-9_.-]*$",
                      description="a short handle a page or notebook quotes the claim by (e.g. round_cap_calls)")
    kind: Literal["measured", "by_construction", "definitional"] = Field(
        default="measured", description="what the claim rests on: measured (an effect the data show), by_construction "
                                        "(true by how the simulator is set; its control, the knob at 0, is another "
                                        "sweep: here the contrast alone is tested), or definitional (true by what "
                                        "the setting does, e.g. HyDE adds a call)")
    over: Literal["questions", "pairs"] = Field(
        default="questions", description="what a value is: one of the sweep's questions, or one pair of a question "
                                         "and its unanswerable twin (a metric of PAIR_METRICS; the sweep names its "
                                         "other half in pairs_with)")

    @model_validator(mode="after")
    def _known(self) -> ClaimSpec:
        if self.over == "pairs":
            PAIR_METRICS.check(self.metric)
        else:
            check_metric(self.metric, "finding metric")
        return self

    @model_validator(mode="after")
    def _margin(self) -> ClaimSpec:
        if (self.direction == "none") != (self.margin is not None):
            raise ConfigError("a margin goes with direction 'none' (no change within ±margin), and only with it")
        return self


class FamilySpec(BaseModel):
    """How a sweep's declared findings are corrected together (the ``family:`` section), stated before the data: the
    procedure (``fixed-sequence``: each claim at ``alpha`` in the order listed, a claim counting only when every one
    before it does), the error rate it controls (the familywise error rate, strongly, at ``alpha``), and the
    ``study`` the family belongs to: the sweep files of one study name it, and a study's pages give each claim's p
    after Holm's correction over every claim of the study beside its family's (:mod:`rag_lab.experiments.study`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    procedure: Literal["fixed-sequence"] = "fixed-sequence"
    controls: Literal["familywise error rate"] = "familywise error rate"
    alpha: float = Field(default=0.05, gt=0.0, le=0.2)
    study: str = Field(default="", max_length=80, description="the study this family is part of (its sweep files "
                                                              "name the same study)")


class SweepSpec(BaseModel):
    """A whole sweep: questions (``dataset``, ``split``, ``types``, ``per_type``, ``limit``), the
    ``base`` config (nested or dotted dict, or a YAML/JSON config file path), the ``grid``, the
    ``backend`` and the simulator ``seeds`` (one run per candidate and seed). With ``search``
    (:class:`~rag_lab.experiments.engine.search_space.SearchSpec`) the grid is the space a sampler searches
    (values may also be ranges ``{low, high}``), optionally raced over questions; a search takes one seed.

    Questions are chosen in dataset order: the split, then the types, then at most ``per_type``
    questions of each type, then at most ``limit`` in all. ``family`` says how the ``findings`` are corrected
    together (:class:`FamilySpec`); ``pilot`` lists the questions the ``findings`` were
    planned on, which their tests leave out; ``pairs_with`` names the sweep of the pairs' other half (a question and
    its unanswerable twin, :mod:`rag_lab.loaders.twins`), which findings ``over: pairs`` read."""

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
    findings: list[ClaimSpec] = Field(default_factory=list)
    family: FamilySpec = Field(default_factory=FamilySpec)
    pilot: list[str] = Field(default_factory=list, description="the qids of the pilot the claims were planned on: "
                                                               "kept out of every declared claim's test")
    pairs_with: str | None = Field(default=None, description="the sweep file of the other half of each pair (relative "
                                                             "to this file): the questions whose unanswerable twins "
                                                             "this sweep runs, or the twins of its questions")

    @model_validator(mode="after")
    def _pairs_declared(self) -> SweepSpec:
        if any(c.over == "pairs" for c in self.findings) and self.pairs_with is None:
            raise ConfigError("a finding over pairs needs the sweep of the other half: pairs_with: <sweep file>")
        return self

    @field_validator("grid")
    @classmethod
    def _grid_shape(cls, grid: dict[str, Any] | list[Any], info: ValidationInfo) -> dict[str, Any] | list[Any]:
        search = info.data.get("search")
        try:
            if search is None:
                Grid(grid)
            else:
                space = SearchSpace(grid)
                if SAMPLERS[search.sampler].walks_grid:
                    space.grid()
        except ConfigError as exc:
            raise ConfigError(str(exc)) from None
        return grid

    @model_validator(mode="after")
    def _one_seed_per_search(self) -> SweepSpec:
        if self.search is not None and len(self.seeds) != 1:
            raise ConfigError(f"a search runs one seed (each trial is one candidate), got seeds {self.seeds}")
        return self

    @field_validator("seeds")
    @classmethod
    def _distinct_seeds(cls, seeds: list[int], info: ValidationInfo) -> list[int]:
        if len(set(seeds)) != len(seeds):
            raise ConfigError(f"seeds must be distinct, got {seeds}")
        if any(s < 0 for s in seeds):
            raise ConfigError(f"seeds must be >= 0, got {seeds}")
        backend = info.data.get("backend")
        if backend is not None and not BACKENDS[backend.kind].simulated and len(seeds) > 1:
            raise ConfigError(f"several seeds need the simulator; backend {backend.kind!r} takes one seed")
        return seeds

    def with_backend(self, **settings: Any) -> SweepSpec:
        """A validated copy whose backend has ``settings`` changed (e.g. ``timeout_s`` from the command line)."""
        if not settings:
            return self
        return self.model_copy(update={"backend": BackendSpec.from_dict({**self.backend.model_dump(), **settings})})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SweepSpec:
        """Validate a sweep given as a dict; errors name each field at fault."""
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise ConfigError(explain_validation(exc, "sweep")) from None

