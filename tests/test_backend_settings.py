"""The backend settings are declared once (BackendOptions): open_backend and make_backend take exactly those
keywords, an unknown one is refused by name, and a sweep's backend spec opens its backend with them."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.backend_options import backend_options
from rag_lab.experiments.engine.sweep import BackendSpec
from rag_lab.llm.cassette import CassetteHeader
from rag_lab.llm.factory import BackendOptions, make_backend, open_backend
from rag_lab.llm.local.model_pack import CHUNKED_MODELS

SETTINGS = [f.name for f in fields(BackendOptions)]


@pytest.mark.parametrize("function", [open_backend, make_backend], ids=lambda f: f.__name__)
def test_the_openers_take_the_declared_settings(function) -> None:
    parameters = inspect.signature(function).parameters
    assert list(parameters) == ["kind", *SETTINGS]
    assert all(parameters[f.name].default == f.default for f in fields(BackendOptions))
    with pytest.raises(ConfigError, match=r"unknown backend setting\(s\) \['modle'\]; the settings are profile, seed"):
        opened = function("sim", modle="x")
        opened.__enter__()  # open_backend is a context manager: its settings are read when it is entered


def test_a_sweep_spec_opens_its_backend_with_the_declared_settings() -> None:
    kind, settings = backend_options(BackendSpec(kind="sim", profile="ideal", knobs={"synonym_spinning": 0.3}), 7)
    assert kind == "sim" and set(settings) <= set(SETTINGS)
    assert settings["seed"] == 7 and settings["profile"].synonym_spinning == 0.3   # the resolved profile
    kind, settings = backend_options(BackendSpec(kind="openai", model="m", base_url="http://x/v1"), 0, concurrency=4)
    assert kind == "openai" and settings["max_concurrency"] == 4 and set(settings) <= set(SETTINGS)
    backend = make_backend("sim", **{**backend_options(BackendSpec(), 0)[1], "cache": False})
    assert type(backend).__name__ == "SimulatedBackend"


def test_a_backend_changed_by_a_grid_or_by_the_command_line_is_refused_alike() -> None:
    from rag_lab.experiments.engine.sweep import SweepSpec

    spec = SweepSpec.from_dict({"name": "s", "dataset": "world"})
    refused = []
    for change in (lambda: spec.backend.with_settings({"max_tokens": 0}), lambda: spec.with_backend(max_tokens=0),
                   lambda: BackendSpec.from_dict({"max_tokens": 0})):
        with pytest.raises(ConfigError, match="max_tokens") as error:
            change()
        refused.append(str(error.value))
    assert refused[0] == refused[1] == refused[2]


def test_a_replay_refuses_a_cassette_of_another_model_than_the_pinned_one(tmp_path) -> None:
    pinned = CHUNKED_MODELS["qwen2.5-coder-1.5b"].sha256
    spec = BackendSpec(kind="local", model="qwen2.5-coder-1.5b", cassette=str(tmp_path / "c.jsonl"), replay=True)
    for sha256, refused in ((pinned, False), ("0" * 64, True)):
        header = CassetteHeader(name="local", model="qwen2.5-coder-1.5b", identity=("local", "qwen2.5-coder-1.5b"),
                                provenance={"model_sha256": sha256})
        (tmp_path / "c.jsonl").write_text(header.model_dump_json() + "\n", encoding="utf-8")
        if refused:
            with pytest.raises(ConfigError, match=f"recorded with the GGUF model with sha256 {'0' * 64}, "
                                                  "but this sweep's model 'qwen2.5-coder-1.5b'"):
                backend_options(spec, 0)
        else:
            assert backend_options(spec, 0) == ("recorded", {"model": str(tmp_path / "c.jsonl"), "max_tokens": None})
