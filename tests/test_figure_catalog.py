"""The figure registry (``rag_lab.figures.FIGURES``): every figure of the package is in it, its info is a
NamedTuple, and its ``plot_*`` function takes the info's arguments and draws the same figure."""

from __future__ import annotations

import inspect
import typing

import pandas as pd
import pytest

import rag_lab.figures as figures
from rag_lab.figures import FIGURES

TABLE = pd.DataFrame({
    "candidate_id": ["b1", "b2", "b3"],
    "param_hyde.enabled": [False, True, True],
    "cost_llm_calls": [2.0, 3.0, 4.0],
    "quality_f1": [0.5, 0.4, 0.7],
})


def test_every_info_function_of_the_package_is_a_registered_figure() -> None:
    infos = {name.removesuffix("_info") for name in figures.__all__ if name.endswith("_info")}
    assert infos == set(FIGURES)


@pytest.mark.parametrize("name", FIGURES.names())
def test_each_figure_has_a_namedtuple_info_and_a_plot_function(name: str) -> None:
    kind = FIGURES[name]
    info_type = typing.get_type_hints(kind.info)["return"]
    assert issubclass(info_type, tuple) and hasattr(info_type, "_fields"), f"{info_type} is not a NamedTuple"
    plot = getattr(figures, f"plot_{name}")
    assert plot.__name__ == f"plot_{name}"
    assert list(inspect.signature(plot).parameters) == list(inspect.signature(kind.info).parameters)
    assert kind.info.__name__ == f"{name}_info" and kind.figure.__name__ == f"{name}_figure"


def test_plot_is_the_figure_of_the_info() -> None:
    drawn = figures.plot_cost_quality(TABLE, "cost_llm_calls", "quality_f1", color_by="param_hyde.enabled")
    expected = figures.cost_quality_figure(figures.cost_quality_info(TABLE, "cost_llm_calls", "quality_f1",
                                                                     color_by="param_hyde.enabled"))
    assert drawn.to_json() == expected.to_json()
    assert figures.plot_cost_quality(TABLE, "cost_llm_calls", "quality_f1").to_json() != drawn.to_json()
