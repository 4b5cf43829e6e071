"""The robustness table (``rag-lab robustness``): the registry covers the headline findings of notebooks
01-06, a cell is the exact paired test of the notebook's contrast, Holm runs within each family, the
shipped table covers every registered finding on every cell and is current against ``SIM_VERSION``
(it fails after a simulator change until the table is regenerated), and notebooks quote their row."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rag_lab.course.robustness import (
    CELL_DATASETS,
    HEADLINE_FINDINGS,
    SEEDS,
    SHIPPED_TABLE,
    HeadlineFinding,
    check_current,
    load_table,
    markdown,
    quote,
    run_robustness,
)
from rag_lab.course.settings import LESSON_SETTINGS
from rag_lab.errors import ConfigError
from rag_lab.experiments import holm, paired_test
from rag_lab.llm.simulator import SIM_VERSION

REGENERATE = "rag-lab robustness"


def test_the_registry_holds_a_finding_of_every_policy_notebook_01_to_06():
    notebooks = {f.notebook for f in HEADLINE_FINDINGS}
    assert {n[:2] for n in notebooks} >= {"01", "02", "03", "04", "05", "06"}
    assert len({f.key for f in HEADLINE_FINDINGS}) == len(HEADLINE_FINDINGS)
    from pathlib import Path

    for f in HEADLINE_FINDINGS:  # each is what its notebook asserts: the metric appears in it, the setting is read
        text = (Path(__file__).parent.parent / "notebooks" / f"{f.notebook}.py").read_text()
        assert f.metric in text, f.key
        assert f"settings.{setting_of(f)}" in text, f"{f.notebook} does not read settings.{setting_of(f)} ({f.key})"
    with pytest.raises(ConfigError, match="margin"):
        HeadlineFinding("x", "01", "c", "m", {}, {}, "none")
    with pytest.raises(ConfigError, match="no headline finding 'nope'"):
        run_robustness(["nope"])


def setting_of(finding: HeadlineFinding) -> str:
    """The name of the record in :mod:`rag_lab.course.settings` that ``finding`` is made from (its notebook, arms,
    base, model and world types; a no-change claim runs every test question of its types)."""
    made = [name for name, s in LESSON_SETTINGS.items()
            if (s.notebook, dict(s.candidate), dict(s.reference), dict(s.base), dict(s.knobs), s.profile, s.types)
            == (finding.notebook, dict(finding.candidate), dict(finding.reference), dict(finding.base),
                dict(finding.knobs), finding.profile, finding.world_types)
            and finding.world_per_type == (s.per_type if finding.direction != "none" else None)]
    assert len(made) == 1, f"{finding.key} is made from {made or 'no record'} of rag_lab.course.settings"
    return made[0]


def test_a_finding_not_made_from_a_settings_record_fails_the_check():
    """A headline finding whose arms are written beside the settings (not read from a record) is refused."""
    from dataclasses import replace

    drifted = replace(HEADLINE_FINDINGS[0], candidate={"round_cap.max_rounds": 3})
    with pytest.raises(AssertionError, match="no record"):
        setting_of(drifted)


@pytest.fixture(scope="module")
def small_table(tmp_path_factory):
    """Two findings on the world, seeds 0 and 1 (the notebooks' questions; a few seconds)."""
    return run_robustness(["round_cap_bridge", "zero_yield_answers"], datasets=["world"], seeds=[0, 1],
                          work_dir=tmp_path_factory.mktemp("rob"))


@pytest.mark.slow
def test_a_cell_is_the_exact_paired_test_of_the_notebook_contrast_and_holm_runs_over_the_table(small_table, tmp_path):
    from rag_lab.experiments import run_sweep

    rows = {r["key"]: r for r in small_table.findings}
    assert set(rows) == {"round_cap_bridge", "zero_yield_answers"}
    assert all(len(r["cells"]) == 2 for r in rows.values())
    # re-run one cell by hand: the same sweep, the same exact test, one-sided in the claimed direction
    finding = next(f for f in HEADLINE_FINDINGS if f.key == "round_cap_bridge")
    result = run_sweep(finding.spec("world", 1, 60), tmp_path / "cell", progress="quiet")
    values, reference = result.paired_values(finding.metric, dict(finding.candidate), dict(finding.reference))
    test = paired_test(values, reference, alternative="less")
    cell = rows["round_cap_bridge"]["cells"][1]
    assert (cell["dataset"], cell["seed"]) == ("world", 1)
    assert cell["p"] == test.p and cell["delta"] == test.delta and cell["n"] == test.n == 30
    assert cell["test"] == "exact, one-sided" and cell["agrees"] == (test.delta < 0)
    for key, family in (("round_cap_bridge", "difference"), ("zero_yield_answers", "no change")):
        cells = rows[key]["cells"]   # each in its own family: Holm within it
        assert rows[key]["family"] == family and [c["p_holm"] for c in cells] == holm([c["p"] for c in cells])
    for c in [c for r in small_table.findings for c in r["cells"]]:  # holds needs the Holm-adjusted p
        assert not c["holds"] or c["p_holm"] < small_table.alpha
    tost = rows["zero_yield_answers"]["cells"][0]
    assert tost["test"] == "TOST exact" and tost["agrees"] == (abs(tost["delta"]) < 0.05)
    assert tost["n"] >= 107   # enough questions to decide a ±0.05 margin (docs/decisions.md)


@pytest.mark.slow
def test_the_table_round_trips_and_is_quoted(small_table, tmp_path):
    json_path, md_path = small_table.write(tmp_path / "t.json", tmp_path / "t.md")
    table = load_table(json_path)
    assert table.to_dict() == json.loads(json_path.read_text())
    text = quote("round_cap_bridge", table)
    assert "01_round_cap" in text and "world seed 0" in text and "world seed 1" in text and SIM_VERSION in text
    held = sum(c["holds"] for c in table.row("round_cap_bridge")["cells"])
    assert f"holds in {held} of 2 cells" in text
    assert "| round_cap_bridge (01_round_cap, measured; family: difference)" in md_path.read_text() == markdown(table)
    with pytest.raises(ConfigError, match="no finding 'crag_abstention'"):
        quote("crag_abstention", table)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ConfigError, match="not a robustness table"):
        load_table(tmp_path / "bad.json")
    with pytest.raises(ConfigError, match="cannot read the robustness table"):
        load_table(tmp_path / "missing.json")


def test_the_shipped_table_is_complete_and_current():
    """Fails after any simulator change (SIM_VERSION bumped) until the table is regenerated with
    `rag-lab robustness` (writes data/robustness.json and data/robustness.md)."""
    table = load_table(SHIPPED_TABLE)
    assert table.sim_version == SIM_VERSION, (
        f"data/robustness.json was made with {table.sim_version}, the simulator is {SIM_VERSION}: run `{REGENERATE}`")
    check_current(table)
    assert [f["key"] for f in table.findings] == [f.key for f in HEADLINE_FINDINGS], f"stale registry: run `{REGENERATE}`"
    for row, finding in zip(table.findings, HEADLINE_FINDINGS, strict=True):
        assert (row["metric"], row["candidate"], row["reference"], row["direction"]) == (
            finding.metric, dict(finding.candidate), dict(finding.reference), finding.direction), row["key"]
        assert [(c["dataset"], c["seed"]) for c in row["cells"]] == [(d, s) for d in CELL_DATASETS for s in SEEDS]
    assert (SHIPPED_TABLE.parent / "robustness.md").read_text() == markdown(table)
    # every notebook finding can be quoted from it
    for finding in HEADLINE_FINDINGS:
        assert finding.notebook in quote(finding.key)


@pytest.mark.slow
def test_check_current_refuses_another_simulator(small_table):
    check_current(small_table)
    small_table.sim_version = "sim-0"
    with pytest.raises(ConfigError, match="made with simulator sim-0.*rag-lab robustness"):
        check_current(small_table)
    small_table.sim_version = SIM_VERSION


@pytest.mark.slow
def test_the_cli_writes_both_files(tmp_path, capsys):
    from rag_lab.cli import main

    out, md = tmp_path / "r.json", tmp_path / "r.md"
    assert main(["robustness", "--findings", "crag_abstention", "--datasets", "world", "--seeds", "0",
                 "--work-dir", str(tmp_path / "w"), "--out", str(out), "--markdown", str(md), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "crag_abstention" in printed and f"wrote {out} and {md}" in printed
    table = load_table(out)
    assert table.sim_version == SIM_VERSION and len(table.findings[0]["cells"]) == 1
    assert not np.isnan(table.findings[0]["cells"][0]["p"])
    assert main(["robustness", "--findings", "nope", "--out", str(out)]) == 2
