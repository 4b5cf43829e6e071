"""The rendered course in a real browser: the built MkDocs site served on 127.0.0.1, lesson 01's page opened
in headless Chromium (Debian's, through Playwright), and its cost-quality figure found drawn by plotly —
the plot's title, one marker per round cap and the Pareto front's line, at real positions on the page —
with the page's note giving the run time of the run it shows, and no request that failed (nothing is fetched
from another host: the machines are offline). Screenshot: reports/browser/course_01.png.

The site is the one the test command builds (``reports/site``; ``RAG_LAB_SITE`` names another): its docs
phase runs before this one, from the executed copies its nbmake run keeps. A site that is missing, or whose
lesson 01 was not rendered from an executed run, fails with what to run. Skips only when Chromium is missing
and RAG_LAB_REQUIRE_BROWSER is unset (.ci/run sets it)."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from jupyterlab_harness import chromium, require_browser
from playwright.sync_api import TimeoutError as PlaywrightTimeout

pytestmark = [pytest.mark.browser, pytest.mark.site, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("RAG_LAB_SITE", REPO / "reports" / "site"))
LESSON = "course/01_round_cap/"
SCREENSHOT = REPO / "reports" / "browser" / "course_01.png"
WAIT_MS = 90_000  # every wait in the browser (a loaded machine: parsing plotly.js alone can take seconds)
#: The cost-quality figure's title (rag_lab.figures.cost_quality_figure: "<quality> vs <cost>").
TITLE = re.compile(r"answer containment.* vs LLM calls")
CAPS = 4  # notebook 01 sweeps round_cap.max_rounds over 1..4: one marker each


@contextlib.contextmanager
def serve(folder: Path):
    """``folder`` over HTTP on 127.0.0.1 (a free port), in a thread; stopped on exit."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):  # no request log on stderr
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_rendered_lesson_01_draws_its_cost_quality_figure(tmp_path: Path) -> None:
    require_browser()
    page_file = SITE / LESSON / "index.html"
    if not page_file.exists():
        pytest.fail(f"{page_file} missing: build the site first (bash scripts/test.sh does; by hand: python -m pytest "
                    "notebooks/01_round_cap.ipynb -p tools.course.site --keep-executed reports/executed, then "
                    f"mkdocs build --site-dir {SITE})")

    with serve(SITE) as base, chromium(tmp_path / "profile") as page:
        failed: list[str] = []
        page.on("requestfailed", lambda request: failed.append(request.url))
        # plotly.js is a plain <script> before the figures: they are drawn by DOMContentLoaded
        page.goto(f"{base}/{LESSON}", timeout=WAIT_MS, wait_until="domcontentloaded")

        note = page.locator(".rag-lab-run").first
        note.wait_for(timeout=WAIT_MS)
        assert "Not executed" not in note.inner_text(), (
            f"lesson 01's page was built without its executed notebook: {note.inner_text()!r}")
        seconds = page.locator(".rag-lab-run-time").first.inner_text()
        assert re.fullmatch(r"\d+ s", seconds), f"no run time on the page: {seconds!r}"

        plots = page.locator(".js-plotly-plot")  # a div plotly.js (the site's own copy) has drawn into
        try:
            plots.first.wait_for(timeout=WAIT_MS)
        except PlaywrightTimeout:
            divs = page.locator(".plotly-graph-div").count()
            pytest.fail(f"plotly drew no figure on lesson 01's page in {WAIT_MS / 1000:.0f} s ({divs} figure divs on the "
                        f"page; requests that failed: {failed})")
        titles = plots.evaluate_all("els => els.map(e => (e.querySelector('.gtitle') || {}).textContent || '')")
        chosen = [i for i, title in enumerate(titles) if TITLE.search(title)]
        assert chosen, f"no cost-quality figure among lesson 01's plots (titles {titles})"
        figure = plots.nth(chosen[0])
        figure.scroll_into_view_if_needed()
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        figure.screenshot(path=str(SCREENSHOT))

        box = figure.bounding_box()
        assert box is not None and box["width"] >= 400 and box["height"] >= 300, f"the figure is not laid out: {box}"
        # plotly puts each marker at a `transform` inside the plot's SVG; the candidates' trace has one per cap
        places = figure.locator(".scatterlayer .trace").first.locator(".point").evaluate_all(
            "els => els.map(e => e.getAttribute('transform'))")
        assert len(places) >= CAPS and len(set(places)) >= 2, f"cost-quality markers drawn: {places}"
        assert figure.locator(".scatterlayer .js-line").count() >= 1, "the Pareto front's line is not drawn"
        assert not failed, f"requests that failed (the site must open offline, from 127.0.0.1 alone): {failed}"
