"""Point labels that never overlap and are never clipped, measured in a real browser: the quickstart report's
cost-quality scatter (the quickstart sweep run into a temporary folder, its report opened from disk in headless
Chromium at a laptop's width, 960 px) and lesson 01's scatter on the rendered course site. Every drawn label's box
(``getBoundingClientRect`` of plotly's ``.textpoint text``) must lie inside the plot area and overlap no other.
The where-it-holds grid is found drawn on both pages. Skips only when Chromium is missing and
RAG_LAB_REQUIRE_BROWSER is unset (.ci/run sets it)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
from jupyterlab_harness import chromium, require_browser
from test_rendered_course_browser import LESSON, SITE, WAIT_MS, serve

from rag_lab.cli import main

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[2]
#: The JavaScript that reads a figure's label boxes and its plot area, in page pixels.
BOXES = """fig => {
  const area = fig.querySelector('.draglayer .nsewdrag').getBoundingClientRect();
  const labels = [...fig.querySelectorAll('.scatterlayer .textpoint text')]
    .filter(t => t.textContent.trim())
    .map(t => { const r = t.getBoundingClientRect();
                return {text: t.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom}; });
  return {area: {left: area.left, top: area.top, right: area.right, bottom: area.bottom}, labels};
}"""


def label_problems(boxes: dict) -> list[str]:
    """Every pair of drawn labels that overlap, and every label that leaves the plot area (plotly clips it)."""
    area, labels = boxes["area"], boxes["labels"]
    problems = [f"{a['text']!r} leaves the plot area" for a in labels
                if a["left"] < area["left"] - 0.5 or a["right"] > area["right"] + 0.5
                or a["top"] < area["top"] - 0.5 or a["bottom"] > area["bottom"] + 0.5]
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            if a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]:
                problems.append(f"{a['text']!r} overlaps {b['text']!r}")
    return problems


def _figure(page, title: re.Pattern[str]):
    plots = page.locator(".js-plotly-plot")
    plots.first.wait_for(timeout=WAIT_MS)
    titles = plots.evaluate_all("els => els.map(e => (e.querySelector('.gtitle') || {}).textContent || '')")
    chosen = [i for i, t in enumerate(titles) if title.search(t)]
    assert chosen, f"no figure titled {title.pattern!r} among {titles}"
    return plots.nth(chosen[0])


def test_the_quickstart_reports_labels_neither_overlap_nor_leave_the_plot(tmp_path: Path) -> None:
    require_browser()
    run_dir = tmp_path / "quickstart"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["sweep", str(REPO / "sweeps" / "quickstart.yaml"), "--out", str(run_dir), "--quiet"]) == 0
        assert main(["report", str(run_dir), "--out", str(run_dir / "report.html")]) == 0
    with chromium(tmp_path / "profile") as page:
        page.set_viewport_size({"width": 960, "height": 900})
        page.goto((run_dir / "report.html").as_uri(), timeout=WAIT_MS, wait_until="load")
        figure = _figure(page, re.compile(r"answer containment.* vs LLM calls"))
        figure.scroll_into_view_if_needed()
        boxes = figure.evaluate(BOXES)
        assert len(boxes["labels"]) >= 5, f"too few labels drawn: {boxes['labels']}"
        assert not label_problems(boxes), label_problems(boxes)
        grid = _figure(page, re.compile(r"Where each finding holds"))   # where claims like the sweep's hold
        symbols = grid.locator(".scatterlayer .textpoint text").evaluate_all("els => els.map(e => e.textContent)")
        # a starred cell was measured on other arms than its row names (the figure's note says which)
        assert len(symbols) >= 2 * 6 and {x.rstrip("*") for x in symbols} <= set("✓~·✗∅?–"), symbols


@pytest.mark.site   # opens the built site: runs after the docs phase
def test_lesson_01s_labels_neither_overlap_nor_leave_the_plot_and_its_grid_is_drawn(tmp_path: Path) -> None:
    require_browser()
    if not (SITE / LESSON / "index.html").exists():
        pytest.fail(f"{SITE / LESSON / 'index.html'} missing: build the site first (bash scripts/test.sh does)")
    with serve(SITE) as base, chromium(tmp_path / "profile") as page:
        page.goto(f"{base}/{LESSON}", timeout=WAIT_MS, wait_until="domcontentloaded")
        figure = _figure(page, re.compile(r"answer containment.* vs LLM calls"))
        figure.scroll_into_view_if_needed()
        boxes = figure.evaluate(BOXES)
        assert boxes["labels"], "lesson 01's scatter draws no label"
        assert not label_problems(boxes), label_problems(boxes)

        grid = _figure(page, re.compile(r"Where each finding holds"))
        grid.scroll_into_view_if_needed()
        symbols = grid.locator(".scatterlayer .textpoint text").evaluate_all("els => els.map(e => e.textContent)")
        assert len(symbols) >= 2 * 6 and len(symbols) % 2 == 0 and {x.rstrip("*") for x in symbols} <= set("✓~·✗∅?–"), \
            symbols
        legend = grid.locator(".legend .legendtext").evaluate_all("els => els.map(e => e.textContent)")
        assert any(t.startswith("✓ holds") for t in legend), legend
