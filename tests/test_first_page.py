"""The report's first page answers at a glance (issue 49, item 7): every point of the cost-vs-quality scatter is
labelled on the plot or listed under it, with its values; the forest plot's colours follow the metric's own
direction (tests/test_figures.py); the at-a-glance table, the claims' kinds and the collapsed duplicate columns
(below, on a real sweep)."""

from __future__ import annotations

import html
import json
from types import SimpleNamespace

import pandas as pd

from rag_lab.figures.cost_quality import cost_quality_figure, cost_quality_info, unlabelled_points
from rag_lab.paths import DATA_DIR
from rag_lab.report.glance import rows_alike
from rag_lab.report.page import related_rows

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


def test_the_glance_table_gives_each_candidate_its_deltas_claims_and_kind(tmp_path):
    import re

    from rag_lab.experiments import run_sweep
    from rag_lab.report import write_report

    spec = {"name": "glance", "dataset": "world", "split": "test", "types": ["single", "bridge"], "per_type": 3,
            "base": {"round_cap.max_rounds": 3}, "grid": [{"round_cap.max_rounds": [1, 3]}, {"hyde.enabled": [True]}],
            "findings": [{"metric": COST, "candidate": {"hyde.enabled": True}, "direction": "above",
                          "kind": "definitional", "claim": "HyDE costs a call"}]}
    result = run_sweep(spec, tmp_path / "run", progress="quiet")
    page = html.unescape(write_report(result, tmp_path / "r.html").read_text(encoding="utf-8"))
    glance = page.split('<table class="glance">')[1].split("</table>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", glance.split("<tbody>")[1])
    assert len(rows) == len(result.table) - 1                       # every candidate but the reference
    hyde = next(r for r in rows if "hyde.enabled=true" in r)
    assert "definitional: ✓ holds — HyDE costs a call" in hyde and "shown (declared, holds)" in hyde
    assert re.search(r"\+1\.\d{3} \[\+1\.\d{3}, \+1\.\d{3}\]", hyde), hyde     # Δ calls with its interval
    assert page.index('class="glance"') < page.index("<h2>Cost vs quality")  # above the scatter
    # strict and lenient containment are equal on every question here: shown once, with a note
    rows_frame = result.all_rows()
    assert (rows_frame["quality_answer_containment"].fillna(-1) == rows_frame[QUALITY].fillna(-1)).all()
    assert "quality_answer_containment = quality_answer_containment_strict" in page
    results = page.split("<h2>Results</h2>")[1]
    assert "<th>quality_answer_containment</th>" not in results and f"<th>{QUALITY}</th>" in results


def test_the_glance_table_and_the_where_section_find_the_same_robustness_rows():
    """A row of the robustness table is like a contrast when it has the same metric and changes the same settings,
    whether the contrast is a candidate of the glance table or a declared claim of the where section."""
    table = json.loads((DATA_DIR / "robustness.json").read_text(encoding="utf-8"))
    for row in table["findings"]:
        claimed = related_rows([SimpleNamespace(metric=row["metric"])], [{"candidate": row["candidate"]}], table)
        assert row["key"] in claimed and claimed == rows_alike(table, set(row["candidate"]), [row["metric"]])
