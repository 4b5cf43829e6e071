"""A sweep resolves its simulator profile once: the spec's validation resolves it, and the candidate ids,
the table's backend columns and the workers (in this process or unpickled in another) read that one."""

from __future__ import annotations

import pickle

import pytest

import rag_lab.experiments.engine.sweep as sweep_module
from rag_lab.experiments.engine.resolved_sweep import candidate_id
from rag_lab.experiments.engine.sweep import BackendSpec
from rag_lab.pipeline import PipelineConfig


@pytest.fixture
def resolutions(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    calls: list[tuple] = []
    resolve = sweep_module.simulator_profile

    def counted(*args, **kwargs):
        calls.append(args)
        return resolve(*args, **kwargs)

    monkeypatch.setattr(sweep_module, "simulator_profile", counted)
    return calls


def test_the_profile_is_resolved_once_per_backend_spec(resolutions: list[tuple]) -> None:
    spec = BackendSpec(kind="sim", profile="typical", knobs={"synonym_spinning": 0.4})
    assert len(resolutions) == 1                                   # validation resolves it ...
    ids = {candidate_id(PipelineConfig().with_params({"round_cap.max_rounds": r}), spec, 0) for r in (1, 2, 3)}
    assert len(ids) == 3
    assert spec.flat(["backend.knobs.synonym_spinning", "backend.knobs.premature_stop"])[
        "backend.knobs.synonym_spinning"] == 0.4
    copy = pickle.loads(pickle.dumps(spec))                        # ... a process worker gets it with the spec
    assert copy.sim_profile == spec.sim_profile and copy == spec
    assert len(resolutions) == 1                                   # ... and nothing resolves it again
    assert spec.with_settings({"knobs.synonym_spinning": 0.5}).sim_profile.synonym_spinning == 0.5
    assert len(resolutions) == 2                                   # a changed spec is a new resolution


def test_other_backends_have_no_profile(resolutions: list[tuple]) -> None:
    assert BackendSpec(kind="openai", model="m").sim_profile is None and not resolutions
