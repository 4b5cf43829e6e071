"""Identities are stable by construction (rag_lab/pipeline/identity.py): every shipped table's candidate and config
ids are what the sweep files plan today, and stay so when a policy field or a whole policy is added with its
default — with no marker on the field; the frozen baseline is never edited; a removed parameter follows one rule."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import Field

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.grid import config_id, short_hash
from rag_lab.experiments.engine.resolved_sweep import ResolvedSweep, backend_identity, base_config, candidate_run, parameter_grid
from rag_lab.experiments.engine.sweep import BackendSpec, SweepSpec
from rag_lab.experiments.engine.sweep_file import load_sweep_spec
from rag_lab.paths import DATA_DIR, SWEEPS_DIR
from rag_lab.pipeline import POLICIES, PipelineConfig, Policy, policies
from rag_lab.pipeline.identity import BASELINE, identity

ROOT = Path(__file__).resolve().parents[1]

#: Every shipped table that carries ids, beside the sweep file that made it.
SHIPPED = {path.stem: path for path in sorted(SWEEPS_DIR.glob("*.yaml"))
           if (DATA_DIR / "recorded" / f"{path.stem}_table.csv").is_file()}


def _shipped_ids(name: str) -> list[tuple[str, str, str]]:
    with open(DATA_DIR / "recorded" / f"{name}_table.csv", newline="") as f:
        return [(row["candidate_id"], row["config_id"], row["seed"]) for row in csv.DictReader(f)]


def _planned_ids(name: str) -> list[tuple[str, str, str]]:
    spec = load_sweep_spec(SHIPPED[name])
    candidates = parameter_grid(spec).resolve(base_config(spec), spec.backend)
    runs = [candidate_run(spec, c.config, c.params, seed, 0, c) for c in candidates for seed in spec.seeds]
    return [(r.candidate_id, r.config_id, str(r.seed)) for r in runs]


def _every_shipped_id_is_planned() -> None:
    for name in SHIPPED:
        assert sorted(_planned_ids(name)) == sorted(_shipped_ids(name)), f"the ids of {name} changed"


def test_the_shipped_tables_ids_are_what_their_sweeps_plan():
    assert len(SHIPPED) >= 10
    _every_shipped_id_is_planned()
    assert config_id(PipelineConfig()) == "9b83f0ee4c28"   # the default config, as every store has named it


@pytest.fixture
def a_field_added_later() -> Iterator[None]:
    """``citations`` gains a field, with no marker of any kind (as a developer would add it)."""
    class CitationGuard(policies.CitationGuard):
        new_knob: float = Field(default=0.3, ge=0.0, le=1.0)

    field = PipelineConfig.model_fields["citations"]
    before = (field.annotation, field.default)
    field.annotation, field.default = CitationGuard, CitationGuard()
    PipelineConfig.model_rebuild(force=True)
    try:
        yield
    finally:
        field.annotation, field.default = before
        PipelineConfig.model_rebuild(force=True)


@pytest.fixture
def a_policy_added_later() -> Iterator[None]:
    class Patience(Policy):
        """A toy policy registered from outside (no stage reads it)."""

        rounds: int = Field(default=1, ge=0, le=5)

    POLICIES.add("patience", Patience)
    try:
        yield
    finally:
        POLICIES.remove("patience")


def test_a_field_added_with_its_default_changes_no_stored_id(a_field_added_later, a_policy_added_later):
    config = PipelineConfig()
    assert config.flat()["citations.new_knob"] == 0.3 and config.flat()["patience.rounds"] == 1   # they exist
    _every_shipped_id_is_planned()
    assert config_id(config) == "9b83f0ee4c28"
    # off its default, a new parameter names a new config; back at its default, the old one again
    moved = config.with_params({"patience.rounds": 2})
    assert moved.identity()["patience.rounds"] == 2 and config_id(moved) != config_id(config)
    assert "citations.new_knob" not in config.identity()


def _resolved(spec: SweepSpec) -> ResolvedSweep:
    keys = tuple(parameter_grid(spec).keys)
    return ResolvedSweep(spec=spec, base=base_config(spec), runs=(), qids=("q1", "q2"), swept_keys=keys)


def test_a_sweep_spec_field_added_with_its_default_changes_no_fingerprint():
    """The sweep's description and fingerprint follow the same rule: a spec or backend field added since the
    baseline (DESCRIBED_SPEC, IDENTIFYING_BACKEND in resolved_sweep.py) is described only off its default."""
    class LaterBackend(BackendSpec):
        warmup_calls: int = 0

    class LaterSpec(SweepSpec):
        notes: str = ""
        backend: LaterBackend = LaterBackend()

    assert _resolved(load_sweep_spec(SHIPPED["real_qwen_hotpotqa"])).fingerprint == "554b7398616902ce"   # as stored
    for name, path in SHIPPED.items():
        spec = load_sweep_spec(path)
        later = LaterSpec.model_validate({**spec.model_dump(), "backend": spec.backend.model_dump()})
        assert _resolved(later).describe() == _resolved(spec).describe(), name
        assert backend_identity(later.backend) == backend_identity(spec.backend), name
    noted = LaterSpec(name="x", dataset="world", notes="a note", backend=LaterBackend(warmup_calls=2))
    described = _resolved(noted).describe()["spec"]
    assert (described["notes"], described["backend"]["warmup_calls"]) == ("a note", 2)   # off their defaults
    assert backend_identity(BackendSpec(max_tokens=64))["max_tokens"] == 64


def test_the_baseline_is_frozen():
    """Never edit rag_lab/pipeline/identity.py's BASELINE: every stored id was hashed over it."""
    assert short_hash(BASELINE, 16) == "9b83f0ee4c28a7a0"


def test_a_removed_parameter_keeps_its_one_value_in_the_identity():
    flat = {k: v for k, v in PipelineConfig().flat().items() if k != "retrieval.top_k"}   # as if top_k were gone
    assert identity(flat, flat)["retrieval.top_k"] == 5
    assert PipelineConfig().identity()["rewrite.fusion"] == "rrf"           # removed: in every identity
    assert "rewrite.fusion" not in PipelineConfig().flat()
    assert PipelineConfig.from_dict(PipelineConfig().identity()) == PipelineConfig()   # a stored identity reads back
    with pytest.raises(ConfigError, match="rewrite.fusion was removed: 'rrf', its only value"):
        PipelineConfig.from_dict({"rewrite.fusion": "sum"})


def test_no_marker_nor_special_case_keeps_ids():
    """The rule is the only thing that keeps ids: no ADDED_LATER, no RETIRED in the package."""
    found = [f"{p.relative_to(ROOT)}" for p in sorted((ROOT / "rag_lab").rglob("*.py"))
             if "ADDED_LATER" in (text := p.read_text()) or "RETIRED" in text]
    assert not found, found
