"""The backend settings are declared once (BackendOptions): open_backend and make_backend take exactly those
keywords, an unknown one is refused by name, and a sweep's backend spec opens its backend with them."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.sweep import BackendSpec
from rag_lab.llm.factory import BackendOptions, make_backend, open_backend

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
    kind, settings = BackendSpec(kind="sim", profile="ideal", knobs={"synonym_spinning": 0.3}).backend_settings(7)
    assert kind == "sim" and set(settings) <= set(SETTINGS)
    assert settings["seed"] == 7 and settings["profile"].synonym_spinning == 0.3   # the resolved profile
    kind, settings = BackendSpec(kind="openai", model="m", base_url="http://x/v1").backend_settings(0, concurrency=4)
    assert kind == "openai" and settings["max_concurrency"] == 4 and set(settings) <= set(SETTINGS)
    backend = make_backend("sim", **{**BackendSpec().backend_settings(0)[1], "cache": False})
    assert type(backend).__name__ == "SimulatedBackend"
