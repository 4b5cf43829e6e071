"""README's paragraph on the quickstart sweep is the sweep's own findings, rendered from a run, not typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_lab.errors import ConfigError
from rag_lab.experiments import run_sweep
from tools.course.readme_quickstart import BEGIN, END, committed_text, quickstart_markdown, replace_block

REPO = Path(__file__).resolve().parent.parent


def test_the_block_is_replaced_between_its_markers_and_a_missing_marker_is_an_error():
    readme = f"intro\n{BEGIN}\nold numbers\n{END}\nrest\n"
    new = replace_block(readme, "new numbers")
    assert new == f"intro\n{BEGIN}\nnew numbers\n{END}\nrest\n"
    assert committed_text(new) == "new numbers"
    with pytest.raises(ConfigError, match="no quickstart block"):
        replace_block("intro\nrest\n", "x")
    with pytest.raises(ConfigError, match="no quickstart block"):
        committed_text(f"{END}\n{BEGIN}\n")


@pytest.mark.slow
def test_readme_quotes_what_the_quickstart_sweep_measures(tmp_path):
    result = run_sweep(REPO / "sweeps/quickstart.yaml", run_dir=tmp_path / "quickstart")
    rendered = quickstart_markdown(result)
    rows = [line for line in rendered.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(result.spec["findings"]) == len(rows) == sum(("| ✓ holds |" in r) + ("| ✗ not shown |" in r) for r in rows)
    assert committed_text((REPO / "README.md").read_text()) == rendered, (
        "README's quickstart paragraph differs from the sweep's findings: run "
        "`rag-lab sweep sweeps/quickstart.yaml --out reports/quickstart` and "
        "`python -m tools.course.readme_quickstart reports/quickstart`")
