"""The course's notebooks are built the way notebooks/README.md says: every listed notebook exists with
its Jupytext pair in sync and no stored outputs, a banner, a story, a widget cell that runs the full
pipeline, a paired-difference finding that is asserted, exercises and working previous/next links.

(nbmake runs each notebook; this checks the structure nbmake cannot see.)"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
COURSE = [
    "00_quickstart", "01_round_cap", "02_budget_disclosure", "03_zero_yield_stop", "04_hyde", "05_crag_thresholds",
    "06_truncation", "07_search_budget", "08_query_rewrite", "09_judge_input", "10_router", "11_source_contract",
    "12_controller_validation", "13_citation_guard", "14_capstone", "15_real_data", "16_real_model",
]
WIDGET = re.compile(r"\b(PolicyExplorer|SweepPanel)\(")
RUN = re.compile(r"\.run\(")
LINK = re.compile(r"\]\((\d\d_[a-z_]+)\.ipynb\)")


def _cells(name: str) -> list[tuple[str, str]]:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    return [(c.cell_type, c.source) for c in nb.cells]


def test_the_course_lists_every_notebook_and_nothing_else():
    present = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    assert present == COURSE, f"notebooks/ has {present}, the course lists {COURSE}"
    readme = (NOTEBOOKS / "README.md").read_text()
    missing = [n for n in COURSE if f"({n}.ipynb)" not in readme]
    assert not missing, f"notebooks/README.md does not link {missing}"


@pytest.mark.parametrize("name", [*COURSE, "explorer_demo"])
def test_pair_is_in_sync_and_outputs_are_stripped(name):
    ipynb, py = NOTEBOOKS / f"{name}.ipynb", NOTEBOOKS / f"{name}.py"
    assert py.exists(), f"{py.name} missing: run `jupytext --set-formats ipynb,py:percent notebooks/{name}.ipynb`"
    from_py = jupytext.read(py)
    from_ipynb = nbformat.read(ipynb, as_version=4)
    a = [(c.cell_type, c.source.strip()) for c in from_ipynb.cells]
    b = [(c.cell_type, c.source.strip()) for c in from_py.cells]
    assert a == b, (f"{ipynb.name} and {py.name} differ (first differing cell "
                    f"{next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))}); "
                    f"run `jupytext --sync notebooks/{py.name}`")
    nbformat.validate(from_ipynb)  # e.g. cell ids in an nbformat 4.4 file (scripts/sync_notebooks.sh fixes it)
    with_outputs = [i for i, c in enumerate(from_ipynb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert not with_outputs, f"{ipynb.name}: cells {with_outputs} have stored outputs (the HTML export keeps them)"


@pytest.mark.parametrize("name", COURSE)
def test_notebook_has_every_part_of_a_lesson(name):
    cells = _cells(name)
    markdown = "\n".join(s for t, s in cells if t == "markdown")
    code = "\n".join(s for t, s in cells if t == "code")
    assert cells and cells[0][0] == "markdown" and cells[0][1].startswith("# "), f"{name}: the first cell is the title"
    assert "> **Finding type:**" in cells[0][1], f"{name}: no '> **Finding type:**' banner in the first cell"
    assert "## The story" in markdown, f"{name}: no '## The story' section"
    assert "## Try this" in markdown, f"{name}: no '## Try this' exercises"
    assert WIDGET.search(code) and RUN.search(code), f"{name}: no widget cell (PolicyExplorer/SweepPanel) that runs"
    assert "paired_finding(" in code and re.search(r"assert \w+\.holds, \w+\.message", code), (
        f"{name}: no asserted paired finding (`assert finding.holds, finding.message`)")
    assert "cost_quality_figure(" in code or name in ("00_quickstart", "16_real_model"), (
        f"{name}: no static cost-vs-quality figure from rag_lab.figures")
    assert "DESIGN.md §" not in markdown, f"{name}: 'DESIGN.md §' points outside the repository"


@pytest.mark.parametrize("name", COURSE)
def test_previous_and_next_links(name):
    last = next(s for t, s in reversed(_cells(name)) if t == "markdown")
    links = LINK.findall(last)
    i = COURSE.index(name)
    expected = [n for n in (COURSE[i - 1] if i > 0 else None, COURSE[i + 1] if i + 1 < len(COURSE) else None) if n]
    assert links == expected, f"{name}: the last markdown cell links {links}, expected previous/next {expected}"
