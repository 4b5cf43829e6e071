"""PolicyExplorer in a real browser: JupyterLab + headless Chromium (Debian's package) via Playwright.

Opens notebooks/explorer_demo.ipynb, and then the course's policy notebook 01_round_cap.ipynb, runs all
cells, moves the `round_cap.max_rounds` slider with the keyboard and asserts from the DOM that the plot
gained a point, drawn at a new place, and that the status counted a second run. Screenshots:
reports/browser/policy_explorer.png and reports/browser/01_round_cap.png. Skips only when Chromium is missing and
RAG_LAB_REQUIRE_BROWSER is unset (.ci/run sets it, and scripts/test.sh installs Chromium).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import time
from pathlib import Path

import pytest
from jupyterlab_harness import chromium, jupyterlab, open_notebook, require_browser, run_all_cells

pytestmark = [pytest.mark.browser, pytest.mark.timeout(480)]

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "explorer_demo.ipynb"
SCREENSHOT = REPO / "reports" / "browser" / "policy_explorer.png"
#: A course notebook whose widget must render and respond too (it runs its sweeps first, so it takes longer).
POLICY_NOTEBOOK = REPO / "notebooks" / "01_round_cap.ipynb"
POLICY_SCREENSHOT = REPO / "reports" / "browser" / "01_round_cap.png"
SLIDER = "round_cap.max_rounds"
WAIT_MS = 120_000  # every single wait in the browser is bounded by this
FIRST_RUN_MS = 300_000  # and the first run: with cold caches the kernel builds the world's index (~40 s here)

EXPLORER = ".rag-lab-policy-explorer"
POINTS = f"{EXPLORER} .js-plotly-plot .scatterlayer .point"
RUNS = re.compile(r"runs:\s*(\d+)")


@pytest.fixture
def lab(tmp_path):
    require_browser()
    root = tmp_path / "lab"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    # the course notebook reads ../sweeps and ../data like in the repository and imports its helpers (the lessons
    # package beside it, from the kernel's working directory): keep that layout
    (root / "notebooks").mkdir()
    shutil.copy(POLICY_NOTEBOOK, root / "notebooks" / POLICY_NOTEBOOK.name)
    shutil.copytree(REPO / "notebooks" / "lessons", root / "notebooks" / "lessons",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("sweeps",):
        shutil.copytree(REPO / folder, root / folder)
    with jupyterlab(root) as server:
        yield server


def _positions(page) -> set[str]:
    """Where the plot's markers are drawn (plotly puts each point at a `transform`)."""
    return set(page.locator(POINTS).evaluate_all("els => els.map(e => e.getAttribute('transform'))"))


def _status_runs(page) -> int:
    text = page.locator(EXPLORER).first.inner_text()
    match = RUNS.search(text)
    return int(match.group(1)) if match else 0


def _in_view(locator) -> bool:
    """Scroll ``locator`` into view again (always true): cells above it that finish rendering late (tall tables,
    markdown) shift the page, and JupyterLab stops rendering cells that leave the viewport."""
    with contextlib.suppress(Exception):
        locator.scroll_into_view_if_needed(timeout=1000)
    return True


def _wait_until(page, condition, what: str, lab, timeout_ms: float = WAIT_MS) -> None:
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        if condition():
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"timed out after {timeout_ms / 1000:.0f} s waiting for {what}; JupyterLab log tail:\n{lab.log_tail()}")


def drive_explorer(page, lab, notebook: str, screenshot: Path) -> dict:
    """Open and run `notebook`, move the slider, assert the plot moved; return what was seen."""
    console: list[str] = []
    page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}") if msg.type == "error" else None)
    started = time.monotonic()
    failure = screenshot.with_name(screenshot.stem + "_failure.png")
    failure.unlink(missing_ok=True)
    try:
        open_notebook(page, lab, notebook, WAIT_MS)
        run_all_attempts = run_all_cells(page, WAIT_MS)
        explorer = page.locator(EXPLORER).first
        explorer.wait_for(state="visible", timeout=WAIT_MS)
        explorer.locator(".js-plotly-plot").first.wait_for(state="visible", timeout=WAIT_MS)
        # JupyterLab renders only the cells near the viewport: after "run all" the page sits at the last cell,
        # so bring the explorer back before reading its points and status line
        explorer.scroll_into_view_if_needed()
        _wait_until(
            page,
            lambda: _in_view(explorer) and page.locator(POINTS).count() >= 1 and _status_runs(page) >= 1,
            "the first run's point",
            lab,
            FIRST_RUN_MS,
        )
        before = {"points": page.locator(POINTS).count(), "runs": _status_runs(page), "positions": _positions(page)}

        slider = explorer.locator(".widget-slider", has=page.locator(".widget-label", has_text=SLIDER)).first
        handle = slider.locator(".noUi-handle").first
        readout = slider.locator(".widget-readout").first
        old_value = readout.inner_text().strip()
        handle.focus()
        page.keyboard.press("ArrowRight")
        if readout.inner_text().strip() == old_value:  # already at the maximum: step down instead
            page.keyboard.press("ArrowLeft")
        new_value = readout.inner_text().strip()
        assert new_value != old_value, f"{SLIDER} did not move from {old_value} with the keyboard"

        _wait_until(
            page,
            lambda: (
                page.locator(POINTS).count() > before["points"]
                and _status_runs(page) > before["runs"]
                and _positions(page) != before["positions"]
            ),
            f"a new point after {SLIDER}: {old_value} -> {new_value} (before: {before})",
            lab,
        )
        after = {"points": page.locator(POINTS).count(), "runs": _status_runs(page), "positions": _positions(page)}
        explorer.scroll_into_view_if_needed()
        page.wait_for_timeout(500)  # let plotly finish its transition before the picture
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot))
        return {
            "run_all_attempts": run_all_attempts,
            "before": before,
            "after": after,
            "slider": (old_value, new_value),
            "seconds": time.monotonic() - started,
        }
    except Exception as exc:
        failure.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(Exception):  # the page may be gone; the log below still says what happened
            page.screenshot(path=str(failure))
        raise AssertionError(
            f"{exc}\n\nscreenshot: {failure}\nbrowser console errors:\n"
            + "\n".join(console[-20:])
            + f"\nJupyterLab log tail:\n{lab.log_tail()}"
        ) from exc


def test_policy_explorer_moves_plot_in_jupyterlab(lab, tmp_path):
    with chromium(tmp_path / "chromium-profile") as page:
        seen = drive_explorer(page, lab, NOTEBOOK.name, SCREENSHOT)
    assert seen["after"]["points"] > seen["before"]["points"], seen
    assert seen["after"]["runs"] > seen["before"]["runs"], seen
    assert seen["after"]["positions"] - seen["before"]["positions"], f"no marker drawn at a new place: {seen}"
    assert SCREENSHOT.stat().st_size > 10_000, f"screenshot too small to show anything: {SCREENSHOT}"


@pytest.mark.timeout(900)
def test_policy_notebook_widget_renders_and_runs_in_jupyterlab(lab, tmp_path):
    with chromium(tmp_path / "chromium-profile") as page:
        seen = drive_explorer(page, lab, f"notebooks/{POLICY_NOTEBOOK.name}", POLICY_SCREENSHOT)
    assert seen["after"]["points"] > seen["before"]["points"], seen
    assert seen["after"]["runs"] > seen["before"]["runs"], seen
    assert POLICY_SCREENSHOT.stat().st_size > 10_000, f"screenshot too small to show anything: {POLICY_SCREENSHOT}"
