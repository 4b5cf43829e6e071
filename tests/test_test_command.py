"""What the README's test command (scripts/test.sh) relies on: its browser phase collects tests/browser alone, so no
browser test may live elsewhere; the browser tests that open the built site are marked site (the others run beside
the docs build); its pytest phases hand out the test files in the order tests/conftest.py sorts them."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SCRIPT = (TESTS.parent / "scripts" / "test.sh").read_text(encoding="utf-8")


def test_every_browser_test_is_in_the_folder_the_browser_phase_collects():
    elsewhere = [str(path.relative_to(TESTS)) for path in TESTS.rglob("*.py")
                 if TESTS / "browser" not in path.parents and path.name != Path(__file__).name
                 and re.search(r"mark\.browser\b", path.read_text(encoding="utf-8"))]
    assert not elsewhere, f"browser tests outside tests/browser, which the browser phase alone collects: {elsewhere}"
    assert re.search(r"^browser=\(tests/browser ", SCRIPT, re.M)


def test_every_browser_test_that_opens_the_site_runs_after_the_docs_build():
    """The docs build runs beside the browser tests marked not site; a test that reads the built site (its path, or
    RAG_LAB_SITE) must be marked site, or it would race the build."""
    unmarked = [str(path.relative_to(TESTS)) for path in (TESTS / "browser").glob("test_*.py")
                if re.search(r"RAG_LAB_SITE|\"site\"|/ \"site\"|SITE\b", path.read_text(encoding="utf-8"))
                and not re.search(r"mark\.site\b", path.read_text(encoding="utf-8"))]
    assert not unmarked, f"browser tests that open the built site without the site mark: {unmarked}"
    assert re.search(r'^phase browser "\$\{browser\[@\]\}" -m "browser and not site"$', SCRIPT, re.M)
    assert re.search(r'^wait "\$docs".*\n.*\nphase "browser, on the site" "\$\{browser\[@\]\}" -m "browser and site"$',
                     SCRIPT, re.M)


def test_the_phases_keep_the_heavy_files_first():
    phase = re.search(r"^  python -m pytest .*$", SCRIPT, re.M)
    assert phase and "--dist loadfile --no-loadscope-reorder" in phase.group(0)
