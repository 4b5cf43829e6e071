"""Every paired result the shipped pages show as not shown says what its sample could have detected: each cell of
``data/robustness.md`` that does not hold, and each real-model contrast of ``data/recorded/*.md`` that the model
does not show, carries its detectable effect (or, where no question differs, the exact bound)."""

from __future__ import annotations

import re

import pytest

from rag_lab.paths import DATA_DIR

#: What a not-shown cell must say: the detectable effect, the smallest margin showable, or the exact bound.
SAYS_DETECTABLE = re.compile(r"detectable: \|Δ\| ≥ [\d.]+|smallest margin showable: \|Δ\| ≥ [\d.]+|"
                             r"no question differs: \|Δ\| ≤ [\d.]+|"
                             r"no question differs: at most [\d.]+% of questions could differ|"
                             r"none within the metric's range")


def _rows(text: str, first_heading: str) -> list[list[str]]:
    """The cells of every table row (``| a | b |``) after the line ``first_heading``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(first_heading))
    return [[c.strip().replace("\\|", "|") for c in _CELL_BAR.split(line.strip()[1:-1])] for line in lines[start:]
            if line.startswith("| ") and not line.startswith("|---")]


#: A bar that separates markdown table cells (``\|`` inside a cell is an escaped bar, as in ``\|Δ\|``).
_CELL_BAR = re.compile(r"(?<!\\)\|")


def test_every_robustness_cell_that_does_not_hold_states_its_detectable_effect():
    text = (DATA_DIR / "robustness.md").read_text(encoding="utf-8")
    cells = [cell for row in _rows(text, "| finding |") for cell in row if cell[:1] in ("~", "·", "✗") and " p=" in cell]
    assert cells, "no cell that does not hold was found: the table's layout changed"
    missing = [cell for cell in cells if not SAYS_DETECTABLE.search(cell)]
    assert not missing, f"{len(missing)} robustness cells without their detectable effect, e.g. {missing[0]!r}"


@pytest.mark.parametrize("page", sorted((DATA_DIR / "recorded").glob("*.md")), ids=lambda p: p.stem)
def test_every_recorded_contrast_the_model_does_not_show_states_its_detectable_effect(page):
    rows = _rows(page.read_text(encoding="utf-8"), "## Against the simulator")
    head = next(r for r in rows if r[:2] == ["contrast", "metric"])
    shown, detect = head.index("real_shown"), head.index("real_detectable")
    contrasts = [r for r in rows if r != head and len(r) > shown and r[shown] in ("True", "False")]
    assert contrasts and all(len(r) == len(head) for r in contrasts), "a contrast row's cells do not match its header"
    missing = [r for r in contrasts if r[shown] == "False" and not SAYS_DETECTABLE.search(r[detect])]
    assert not missing, f"{page.name}: {len(missing)} contrasts not shown without their detectable effect: {missing[0]}"
    assert all(r[detect] in ("", "nan") for r in contrasts if r[shown] == "True")
