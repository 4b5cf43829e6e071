"""A report's cost-quality figure exported for a paper (rag_lab.figures.export: kaleido driving Debian's
Chromium) and opened in the browser a reader would use: the SVG's DOM draws every candidate's label,
and Chromium's PDF viewer renders the PDF's page (measured from the viewer's own pixels: a rendered page
is mostly white on the viewer's dark background, a PDF it cannot read stays dark).

Skips only when Chromium is missing and RAG_LAB_REQUIRE_BROWSER is unset (.ci/run sets it)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from jupyterlab_harness import chromium, require_browser

from rag_lab.experiments import run_sweep
from rag_lab.figures.export import export_figures
from rag_lab.report import report_figures

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

SMALL = {"name": "export-browser", "dataset": "world", "split": "test", "types": ["bridge", "comparison"],
         "per_type": 2, "backend": {"kind": "sim"}, "grid": {"round_cap.max_rounds": [1, 2, 3]}}
#: Share of near-white pixels in the PDF viewer's screenshot once the page is drawn (an unreadable or
#: blank-rendering PDF leaves the viewer's dark grey: well under 1%).
WHITE_SHARE = 0.2

WHITE_FRACTION_JS = """async (src) => {
  const img = new Image(); img.src = src; await img.decode();
  const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
  const g = c.getContext('2d'); g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data; let white = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i] > 235 && d[i + 1] > 235 && d[i + 2] > 235) white++;
  return white / (d.length / 4);
}"""


def _white_share(page, png: bytes) -> float:
    page.set_content("<html><body></body></html>")
    return float(page.evaluate(WHITE_FRACTION_JS, "data:image/png;base64," + base64.b64encode(png).decode()))


def test_exported_svg_and_pdf_open_in_chromium(tmp_path: Path) -> None:
    require_browser()
    result = run_sweep(SMALL, tmp_path / "run", progress="quiet")
    figure = report_figures(result)["cost_quality"]
    svg, pdf = export_figures({"cost_quality": figure}, tmp_path / "figures", ("svg", "pdf"))
    labels = {t for trace in figure.data if trace.text is not None for t in trace.text if t}
    assert len(labels) >= 2  # points of candidates with the same means share a label ("base (+1 same)")

    with chromium(tmp_path / "profile") as page:
        page.goto(svg.as_uri())
        drawn = set(page.locator("svg text").evaluate_all("els => els.map(e => e.textContent)"))
        assert labels <= drawn, f"labels missing from the SVG as Chromium draws it: {sorted(labels - drawn)}"
        box = page.locator("svg").first.bounding_box()
        assert box is not None and box["width"] >= 800 and box["height"] >= 500

        page.goto(pdf.as_uri())
        measuring = page.context.new_page()
        share = 0.0
        for _ in range(40):  # the viewer draws the page asynchronously
            page.wait_for_timeout(500)
            share = _white_share(measuring, page.screenshot())
            if share >= WHITE_SHARE:
                break
        shot = tmp_path / "pdf_viewer.png"
        shot.write_bytes(page.screenshot())
        assert share >= WHITE_SHARE, f"Chromium's PDF viewer shows no rendered page ({share:.1%} white): {shot}"
