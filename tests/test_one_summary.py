"""What a sweep found is built once (issue 51, item 2): ``rag-lab sweep`` and the HTML report render the same
:class:`~rag_lab.experiments.engine.summary.SweepSummary`, so they show the same declared verdicts and the same
deltas, cell for cell; and neither the CLI's sweep commands nor the report call into a statistic."""

from __future__ import annotations

import ast
import contextlib
import html
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from rag_lab.cli import main
from rag_lab.errors import ConfigError
from rag_lab.experiments import load_sweep
from rag_lab.experiments.engine.summary import summarize
from rag_lab.report import report_figures, write_report

ROOT = Path(__file__).resolve().parent.parent / "rag_lab"
COST = "cost_llm_calls"
SPEC = {"name": "one-summary", "dataset": "world", "split": "test", "types": ["single", "bridge"], "per_type": 3,
        "base": {"round_cap.max_rounds": 3},
        "grid": [{"round_cap.max_rounds": [1, 3]}, {"hyde.enabled": [True]}, {"crag.upper": [0.3]}],
        "findings": [{"metric": COST, "candidate": {"hyde.enabled": True}, "direction": "above",
                      "kind": "definitional", "claim": "HyDE costs a call"},
                     {"metric": COST, "candidate": {"round_cap.max_rounds": 1}, "direction": "below",
                      "claim": "one round saves calls"}]}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The sweep's summary, what ``rag-lab sweep`` printed and the report's page (unescaped)."""
    folder = tmp_path_factory.mktemp("one_summary")
    sweep_file = folder / "sweep.json"
    sweep_file.write_text(json.dumps(SPEC), encoding="utf-8")
    out = folder / "cli.txt"
    with out.open("w", encoding="utf-8") as handle, contextlib.redirect_stdout(handle):
        assert main(["sweep", str(sweep_file), "--out", str(folder / "run"), "--quiet"]) == 0
    page = write_report(folder / "run", folder / "report.html").read_text(encoding="utf-8")
    return summarize(load_sweep(folder / "run")), out.read_text(encoding="utf-8"), html.unescape(page)


def _cli_rows(text: str) -> dict[str, str]:
    """The CLI's Δ table: each line after its head, by the candidate's label (the first column)."""
    lines = text[text.index("changes vs reference  "):].split("\n\n")[0].splitlines()[1:]
    return {re.split(r"\s{2,}", line.strip())[0]: line for line in lines}


def _html_rows(page: str) -> dict[str, list[tuple[str, str]]]:
    """The report's Δ table: each row's cells as (class, text), by the candidate's label (the second cell)."""
    body = page.split('<table class="delta">')[1].split("</table>")[0].split("<tbody>")[1]
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body):
        cells = re.findall(r'<td(?: class="([^"]*)")?>(.*?)</td>', row)
        rows[cells[1][1]] = cells
    return rows


def test_the_cli_and_the_report_show_the_same_verdicts_and_deltas(pages):
    summary, text, page = pages
    assert len(summary.deltas) == 3 and len(summary.findings) == 2     # three candidates but the base, two claims
    cli, report = _cli_rows(text), _html_rows(page)
    assert set(cli) == set(report) == {row.label for row in summary.deltas}
    declared = 0
    for row in summary.deltas:
        html_cells = report[row.label][2:2 + len(summary.metrics)]
        for cell, (cls, shown) in zip(row.cells, html_cells, strict=True):
            assert cell.text in cli[row.label], (row.label, cell.text, cli[row.label])   # the same Δ, p or verdict
            assert shown.startswith(cell.text), (row.label, cell.text, shown)
            assert ("measured" in cls.split()) == cell.measured                       # the same "shown"
            assert ((cell.text + " *") in cli[row.label]) == (cell.measured and cell.declared is None)
            declared += cell.declared is not None
    assert declared == 2                               # each declared claim sits in its cell on both pages
    lines = list(summary.finding_lines)
    assert [ln.removeprefix("  ") for ln in text.splitlines() if ln.startswith("  ✓") or ln.startswith("  ✗")] == lines
    assert re.findall(r"<li>(.*?)</li>", page.split('<ul class="note findings">')[1].split("</ul>")[0]) == lines


def _calls_into(path: Path, modules: tuple[str, ...]) -> list[str]:
    """The imports of ``path`` from any of ``modules``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(modules):
            found += [f"{node.module}.{a.name}" for a in node.names]
    return found


def test_the_sweep_command_and_the_report_compute_no_statistic():
    """They read the summary: no test, interval, Holm or comparison is imported (a cell's ``Δ [lo, hi]`` text,
    :func:`rag_lab.stats.paired.interval_text`, is formatting and stays allowed for the verification table)."""
    computing = ("rag_lab.stats.significance", "rag_lab.stats.power", "rag_lab.stats.summary.add_pareto",
                 "rag_lab.experiments.engine.comparisons.comparisons", "rag_lab.experiments.engine.findings.provisional")
    paths = [ROOT / "cli" / "sweep_commands.py", *sorted((ROOT / "report").glob("*.py"))]
    found = {str(p.relative_to(ROOT)): [name for name in _calls_into(p, ("rag_lab.stats", "rag_lab.experiments.engine"))
                                        if name.startswith(computing)] for p in paths}
    assert not any(found.values()), found


@pytest.mark.parametrize("table", [pd.DataFrame({"candidate_id": ["a"], COST: [1.0]}),
                                   pd.DataFrame(columns=["candidate_id", COST, "quality_answer_containment_strict"])])
def test_the_report_and_its_figures_refuse_a_table_alike(table, tmp_path):
    """The report and ``rag-lab report --export``'s figures read their source by one step, with one error."""
    with pytest.raises(ConfigError) as page:
        write_report(table, tmp_path / "report.html")
    with pytest.raises(ConfigError) as figures:
        report_figures(table)
    assert str(figures.value) == str(page.value)
