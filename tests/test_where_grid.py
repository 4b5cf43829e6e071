"""The where-it-holds grid (rag_lab.figures.where_grid): each robustness cell's status, the grid's data, figure
and text twins (tools/course/robustness_markdown.py), and the short lines banners and the lesson map cite (≤ 180
characters a finding, ≤ 200 a map cell)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lessons.robustness import load_table
from rag_lab.figures.where_grid import (
    STATUSES,
    cell_status,
    recorded_column,
    where_grid_figure,
    where_grid_info,
)
from rag_lab.figures.where_grid import where_line as grid_line
from tools.course.banners import where_line
from tools.course.map import committed_map
from tools.course.robustness_markdown import markdown, where_grid_markdown, where_grid_text

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
ROW = {"direction": "below"}


@pytest.mark.parametrize(("row", "cell", "status"), [
    (ROW, {"n": 60, "delta": -0.3, "lo": -0.4, "hi": -0.2, "holds": True, "agrees": True}, "holds"),
    (ROW, {"n": 60, "delta": -0.05, "lo": -0.1, "hi": 0.0, "holds": False, "agrees": True}, "sign agrees"),
    (ROW, {"n": 60, "delta": 0.0, "lo": 0.0, "hi": 0.0, "holds": False, "agrees": False}, "no difference"),
    (ROW, {"n": 60, "delta": 0.0, "lo": -0.05, "hi": 0.05, "holds": False, "agrees": False}, "sign disagrees"),
    (ROW, {"n": 60, "delta": 0.1, "lo": 0.0, "hi": 0.2, "holds": False, "agrees": False}, "sign disagrees"),
    ({"direction": "none"}, {"n": 60, "delta": 0.0, "lo": 0.0, "hi": 0.0, "holds": False, "agrees": False},
     "sign disagrees"),
    (ROW, {"n": 0, "delta": math.nan, "status": "tested", "holds": False, "agrees": False}, "undefined"),
    (ROW, {"status": "not recorded", "why": "no call"}, "not recorded"),
    (ROW, {"status": "not applicable", "why": "a knob"}, "not applicable"),
])
def test_each_cell_has_one_status(row, cell, status):
    assert cell_status(row, cell) == status


def test_recorded_columns_are_named_by_dataset_prompts_and_model():
    assert recorded_column("Qwen2.5-Coder-1.5B, prompts v2, hotpotqa_sample (recorded)") == ("HotpotQA v2",
                                                                                             "Qwen2.5-Coder-1.5B")
    assert recorded_column("Qwen2.5-Coder-1.5B, hotpotqa_sample (recorded)") == ("HotpotQA v1", "Qwen2.5-Coder-1.5B")


def test_the_grid_of_the_shipped_table():
    table = load_table()
    info = where_grid_info(table)
    assert len(info.keys) == len(table.findings) + len(table.studies)
    study_only = {c["dataset"] for row in table.studies for c in row["recorded"]} - set(table.recorded)
    assert len(info.columns) == len(table.datasets) * len(table.seeds) + len(table.recorded) + len(study_only)
    assert all(len(row) == len(info.columns) for row in info.cells)
    first = table.findings[0]["cells"][0]
    assert info.cells[0][0].status == ("holds" if first["holds"] else info.cells[0][0].status)
    assert info.cells[0][0].delta == pytest.approx(first["delta"]) and info.cells[0][0].n == first["n"]
    shown = {c.status for row in info.cells for c in row} - {"not run"}   # blank cells are not drawn
    figure = where_grid_figure(info)
    assert {t.name.split(" ", 1)[1] for t in figure.data} == {STATUSES[s][2].replace("<", "&lt;") for s in shown}
    drawn = sum(c.status != "not run" for row in info.cells for c in row)   # a dataset a finding is not run on: blank
    assert sum(len(t.x) for t in figure.data) == drawn
    assert drawn < len(info.keys) * len(info.columns)   # the guard rows run on the twins, the lesson rows not
    assert any("Δ = " in h and "n=" in h for t in figure.data for h in t.hovertext)
    text = where_grid_text(info)
    assert len(text.splitlines()) == 1 + len(info.keys)
    assert where_grid_markdown(info) in markdown(table)     # robustness.md shows the grid at a glance


def test_a_dataset_a_finding_is_not_run_on_is_blank_and_left_out_of_its_line():
    table = {"findings": [
        {"key": "lesson", "claim": "c", "direction": "below", "cells": [
            {"dataset": "world", "seed": 0, "n": 9, "delta": -0.2, "lo": -0.3, "hi": -0.1, "holds": True, "agrees": True}]},
        {"key": "guard", "claim": "g", "direction": "below", "cells": [
            {"dataset": "world", "seed": 0, "n": 9, "delta": -0.2, "lo": -0.3, "hi": -0.1, "holds": True, "agrees": True},
            {"dataset": "hotpotqa_sample_twins", "seed": 0, "n": 5, "delta": -0.1, "lo": -0.2, "hi": 0.0,
             "holds": False, "agrees": True}]}],
        "datasets": ["world", "hotpotqa_sample_twins"], "seeds": [0], "recorded": []}
    info = where_grid_info(table)
    assert info.columns == ("world s0", "HotpotQA twins s0")
    assert [c.status for c in info.cells[0]] == ["holds", "not run"] and info.cells[0][1].symbol == ""
    assert grid_line(info, "lesson") == "world ✓" and grid_line(info, "guard") == "world ✓, HotpotQA twins ~"
    assert "| lesson | ✓ |  |" in where_grid_markdown(info) and "not run" not in where_grid_text(info)


def test_a_study_row_has_cells_only_where_declared_and_a_cell_on_other_arms_is_starred():
    cell = {"n": 9, "delta": -0.2, "lo": -0.3, "hi": -0.1, "holds": True, "agrees": True, "status": "tested"}
    table = {"findings": [
        {"key": "lesson", "claim": "c", "direction": "below", "cells": [{"dataset": "world", "seed": 0, **cell}],
         "recorded": [{"dataset": "M, prompts v3, hotpotqa_sample (recorded)", **cell, "p_holm": 0.01,
                       "measured_as": "max_rounds=1 vs max_rounds=3"}]}],
        "studies": [{"key": "study", "claim": "s", "direction": "below", "cells": [], "recorded": [
            {"dataset": "M, prompts v3, hotpotqa_sample_twins (recorded)", **cell, "p_family": 0.02,
             "correction": "fixed sequence within part"}]}],
        "datasets": ["world"], "seeds": [0], "recorded": ["M, prompts v3, hotpotqa_sample (recorded)"]}
    info = where_grid_info(table)
    assert info.columns == ("world s0", "HotpotQA v3 (M)", "HotpotQA twins v3 (M)")
    assert [c.status for c in info.cells[0]] == ["holds", "holds", "not run"]
    assert [c.status for c in info.cells[1]] == ["not run", "not run", "holds"]
    assert grid_line(info, "lesson") == "world ✓; M: HotpotQA v3 ✓* (* measured as max_rounds=1 vs max_rounds=3)"
    assert grid_line(info, "study") == "M: HotpotQA twins v3 ✓"
    assert info.cells[1][2].p_holm == 0.02 and info.cells[1][2].correction == "fixed sequence within part"
    assert where_grid_info(table, ["lesson"]).columns == ("world s0", "HotpotQA v3 (M)")   # no column of rows not shown


def test_a_finding_is_cited_in_one_short_line():
    table = load_table()
    for row in table.findings:
        line = where_line(row["key"], table)
        assert len(line) <= 180, (row["key"], len(line), line)
        statuses = [cell_status(row, c) for c in row["cells"]]
        assert line.startswith("world " + "".join(STATUSES[s][0] for s in statuses[:len(table.seeds)]))


def test_the_lesson_map_cells_are_short():
    rows = [line for line in committed_map(NOTEBOOKS).splitlines() if line.startswith("| ") and line[2:4].isdigit()]
    assert len(rows) >= 17
    longest = max((cell for line in rows for cell in line.strip("|").split(" | ")), key=len)
    assert len(longest.strip()) <= 200, longest


def test_the_robustness_command_grid_prints_the_text_twin(capsys):
    """``python -m tools.course robustness --grid`` (it was ``rag-lab robustness --grid``)."""
    from tools.course.__main__ import main

    assert main(["robustness", "--grid"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    table = load_table()
    assert lines[0].startswith("✓ holds;") and len(lines) == 1 + len(table.findings) + len(table.studies)
    assert lines[1].split()[0] == table.findings[0]["key"]
    assert lines[1].endswith(where_line(table.findings[0]["key"], table))
