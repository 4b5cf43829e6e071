"""The widgets draw and report through the shared parts: the explorer's plot is the figures package's
cost-vs-quality figure of its points table, and the sweep panel's bar moves from the engine's progress records,
with no thread polling the run directory."""

from __future__ import annotations

import threading

from rag_lab.figures import cost_quality_figure, cost_quality_info
from rag_lab.widgets import PolicyExplorer, SweepPanel


def test_explorer_plot_is_the_cost_quality_figure_of_its_points():
    explorer = PolicyExplorer(params=["round_cap.max_rounds"], limit=4)
    explorer.run()
    explorer.with_params({"round_cap.max_rounds": 3}).wait()
    table = explorer.points.rename(columns={"config_id": "candidate_id"})
    expected = cost_quality_figure(cost_quality_info(table, explorer.cost_col, explorer.quality_col, text_col="changes"))
    drawn = explorer.figure.data
    assert len(drawn) == len(expected.data) + 1 and drawn[-1].name == "current"
    for got, want in zip(drawn, expected.data, strict=False):
        got = {k: v for k, v in got.to_plotly_json().items() if k != "uid"}   # a live trace's uid is its own
        assert got == want.to_plotly_json()   # the same points, labels, hover, error bars, front
    assert explorer.figure.layout.xaxis.range == expected.layout.xaxis.range   # the ranges the labels were placed in
    assert explorer.figure.layout.title.text == expected.layout.title.text


def test_sweep_panel_bar_moves_from_the_engine_in_the_sweeps_own_thread(tmp_path):
    panel = SweepPanel(limit=4, run_dir=tmp_path / "run")
    panel.choose({"round_cap.max_rounds": [1, 3]})
    moves: list[tuple[str, int]] = []
    panel._progress.observe(lambda change: moves.append((threading.current_thread().name, change["new"])), names="value")
    result = panel.run()
    assert result.complete and panel._progress.value == panel._progress.max == 8
    # every move comes from the thread running the sweep (no second thread reads the store), one per stored pair
    assert {name for name, _ in moves} == {"sweep-panel"}
    assert [value for _, value in moves] == list(range(1, 9))
