"""The report's first page answers at a glance (issue 49, item 7): every point of the cost-vs-quality scatter is
labelled on the plot or listed under it, with its values; the forest plot's colours follow the metric's own
direction (tests/test_figures.py); the at-a-glance table, the claims' kinds and the collapsed duplicate columns
(below, on a real sweep)."""

from __future__ import annotations

import html

import pandas as pd

from rag_lab.figures.cost_quality import cost_quality_figure, cost_quality_info, unlabelled_points

COST, QUALITY = "cost_llm_calls", "quality_answer_containment_strict"


def _crowded() -> pd.DataFrame:
    """Six candidates, five of them on nearly one spot: their long labels cannot all fit beside their points."""
    names = ["base", "zero_yield.enabled=false, disclosure.disclosed=true", "round_cap.max_rounds=4",
             "crag.upper=0.3", "crag.upper=0.7", "hyde.enabled=true, hyde.n_docs=4"]
    return pd.DataFrame({"candidate_id": [f"c{i}" for i in range(6)], COST: [3.29, 3.30, 3.29, 3.29, 3.30, 4.33],
                         QUALITY: [0.524, 0.524, 0.523, 0.524, 0.525, 0.429], "changes": names})


def test_every_point_is_labelled_or_listed_under_the_plot():
    info = cost_quality_info(_crowded(), COST, QUALITY, text_col="changes")
    figure = cost_quality_figure(info)
    drawn = {html.unescape(t) for trace in figure.data if trace.text is not None for t in trace.text if t}
    listed = unlabelled_points(info)
    assert listed, "the crowded points were all labelled: the test needs some that are not"
    note = html.unescape(figure.layout.annotations[-1].text)
    for name in info.texts:   # on the plot (alone, or first of a "(+k same)" label), or named in the note
        assert any(t == name or t.startswith(f"{name} (+") for t in drawn) or name in note, (name, drawn, note)
    for entry in listed:   # a listed point carries its number on the plot (where it fits) and its values in the note
        assert (not entry.key or entry.key in drawn) and f"({entry.x:g}" in note.replace(".30,", ".3,"), (entry, note)
