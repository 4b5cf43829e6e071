"""Every figure of the package is split Optuna-style: each ``<name>_info`` that ``rag_lab.figures`` exports returns a
NamedTuple of plain data, and its ``<name>_figure`` partner, exported beside it, draws a plotly figure from that
info alone."""

from __future__ import annotations

import typing

import pandas as pd
import plotly.graph_objects as go
import pytest

import rag_lab.figures as figures

INFOS = sorted(name.removesuffix("_info") for name in figures.__all__ if name.endswith("_info"))
TABLE = pd.DataFrame({
    "candidate_id": ["b1", "b2", "b3"],
    "param_hyde.enabled": [False, True, True],
    "cost_llm_calls": [2.0, 3.0, 4.0],
    "quality_f1": [0.5, 0.4, 0.7],
})


def test_the_package_exports_its_figures() -> None:
    assert len(INFOS) >= 9 and "cost_quality" in INFOS and "where_grid" in INFOS


@pytest.mark.parametrize("name", INFOS)
def test_each_figure_has_a_namedtuple_info_and_a_figure_function(name: str) -> None:
    info, figure = getattr(figures, f"{name}_info"), getattr(figures, f"{name}_figure", None)
    assert figure is not None and f"{name}_figure" in figures.__all__, f"{name}_info has no exported {name}_figure"
    info_type = typing.get_type_hints(info)["return"]
    assert issubclass(info_type, tuple) and hasattr(info_type, "_fields"), f"{info_type} is not a NamedTuple"
    assert info_type.__name__ in figures.__all__


def test_a_figure_is_drawn_from_its_info_alone() -> None:
    info = figures.cost_quality_info(TABLE, "cost_llm_calls", "quality_f1", color_by="param_hyde.enabled")
    drawn = figures.cost_quality_figure(info)
    assert isinstance(drawn, go.Figure)
    assert drawn.to_json() == figures.cost_quality_figure(info).to_json()
    assert figures.cost_quality_figure(figures.cost_quality_info(TABLE, "cost_llm_calls", "quality_f1")).to_json() \
        != drawn.to_json()
