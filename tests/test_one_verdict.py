"""One verdict per claim on every page: a declared claim (a sweep file's ``findings:``, tested one-sided in its
family) that holds there but would not be shown by the exploratory Δ table's two-sided, Holm-corrected test is
shown with its declared verdict, and only that, in ``rag-lab sweep``'s output, on the HTML report (the Δ table
and the forest plot's marks, with a legend for every mark) and in the lesson text."""

from __future__ import annotations

import html
import re

import pytest
import yaml

from lessons.lesson_text import findings_markdown
from rag_lab.cli import main
from rag_lab.experiments import load_sweep
from rag_lab.experiments.engine.comparisons import comparisons
from rag_lab.experiments.engine.findings import finding_line, sweep_findings
from rag_lab.experiments.engine.summary import p_cell, summarize
from rag_lab.figures.forest import MARKS, forest_figure, forest_info
from rag_lab.report import report_figures, write_report
from rag_lab.report.glance import glance_table

COST = "cost_llm_calls"
#: On the 30 world bridge questions, cap 2 saves calls on 5 of them and costs more on none: one-sided p = 0.031
#: (holds, a family of one); two-sided p = 0.062, and Holm over the 8 exploratory cells makes it 0.375.
SPEC = {
    "name": "one_verdict", "dataset": "world", "split": "test", "types": ["bridge"], "per_type": 30,
    "base": {"round_cap.max_rounds": 3}, "backend": {"kind": "sim", "profile": "typical"},
    "grid": [{"round_cap.max_rounds": [1, 2, 3]}, {"crag.upper": [0.3, 0.7]}],
    "findings": [{"metric": COST, "candidate": {"round_cap.max_rounds": 2}, "direction": "below",
                  "claim": "a cap of two rounds saves LLM calls"}],
}
CLAIM = SPEC["findings"][0]["claim"]
LABEL = "round_cap.max_rounds=2"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("one_verdict")
    sweep_file = folder / "sweep.yaml"
    sweep_file.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    return sweep_file, folder / "run"


@pytest.fixture(scope="module")
def sweep_output(run):
    import contextlib
    import io

    sweep_file, run_dir = run
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["sweep", str(sweep_file), "--out", str(run_dir), "--quiet"]) == 0
    return out.getvalue()


def test_the_claim_holds_in_its_family_but_not_in_the_exploratory_table(run, sweep_output):
    result = load_sweep(run[1])
    (finding,) = sweep_findings(result)
    assert finding.holds, finding.message
    exploratory = comparisons(result, (COST,))[COST]           # the same cell, tested as every other cell is
    row = exploratory[exploratory["label"] == LABEL].iloc[0]
    assert not (row["p_holm"] < 0.05), row["p_holm"]
    declared = comparisons(result, (COST,), declared=[finding])[COST]
    row = declared[declared["label"] == LABEL].iloc[0]
    assert row["p_holm"] != row["p_holm"]                      # out of the Holm family: NaN
    assert p_cell(row) == finding.verdict


def test_rag_lab_sweep_prints_one_verdict(sweep_output):
    assert "Declared claims (confirmatory)" in sweep_output and "Exploratory:" in sweep_output
    line = next(t for t in sweep_output.splitlines() if t.startswith(LABEL))
    cost_cell = line.split(")  ")[-1]                           # the last column: Δ LLM calls
    assert "✓ holds" in cost_cell and "declared 1 of 1" in cost_cell, line
    assert "Holm" not in cost_cell, line
    assert "✗ not shown" not in sweep_output and "does not hold" not in sweep_output


def test_the_report_shows_one_verdict_and_marks_the_forest_by_it(run, sweep_output, tmp_path):
    page = write_report(run[1], tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Declared claims" in page and "(exploratory)" in page
    cells = re.findall(r'<td class="([^"]*declared[^"]*)">([^<]*)</td>', page)
    assert len(cells) == 1, cells
    cls, text = cells[0]
    assert "measured" in cls and "✓ holds" in html.unescape(text) and "Holm" not in text
    assert "does not hold" not in page and "✗ not shown" not in html.unescape(page)
    forest = report_figures(run[1])[f"forest_{COST}"]
    names = {trace.name: list(trace.y) for trace in forest.data}
    holds = html.escape(MARKS["declared, holds"][1])
    assert names[holds] == [LABEL], names
    assert all(LABEL not in ys for name, ys in names.items() if name != holds)
    assert all(trace.showlegend is not False for trace in forest.data) and forest.layout.showlegend
    # where claims like this one hold: the robustness row of the same metric and setting, as a grid
    assert 'id="where-grid"' in page and "Rows: round_cap_calls:" in page


def test_the_verdict_the_finding_line_and_the_glance_table_say_it_in_one_word(run, sweep_output):
    result = load_sweep(run[1])
    (finding,) = sweep_findings(result)
    glance = glance_table(summarize(result))
    assert finding.mark == "✓ holds"
    assert finding.verdict.startswith(finding.mark) and finding_line(finding).startswith(finding.mark)
    assert f": {finding.mark} — {CLAIM}" in glance.loc[glance["changes"] == LABEL, "claim"].iloc[0]


def test_the_lesson_text_says_the_same_verdict(run, sweep_output):
    (finding,) = sweep_findings(load_sweep(run[1]))
    text = str(findings_markdown(finding))
    assert text.startswith("*Declared claims (confirmatory)") and "family of 1" in text.split("\n")[0]
    assert "**Holds**" in text and "Not shown" not in text


def test_every_forest_mark_is_in_the_legend_and_follows_a_bare_compare_table(run, sweep_output):
    result = load_sweep(run[1])
    info = forest_info(result.compare(COST))
    assert info.rule == "the interval excludes 0"               # no Holm column: what "shown" means says so
    figure = forest_figure(info)
    drawn = {trace.name for trace in figure.data}
    assert drawn == {html.escape(MARKS[m][1].format(rule=info.rule)) for m in set(info.mark)}
    assert sum(len(trace.y) for trace in figure.data) == len(info.labels)
