"""The robustness table (``python -m tools.course robustness``): the registry covers the asserted findings of notebooks
01-13 and what each refusing guard buys on unanswerable questions, a cell is the exact paired test of the
notebook's contrast, Holm runs within each family, a finding runs on its own datasets (the guards on the world's
unanswerable questions and the real samples' twins, flagged twins left out), the shipped table covers every
registered finding on every cell and is current against ``SIM_VERSION`` (it fails after a simulator change
until the table is regenerated), and notebooks quote their row."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lessons.robustness import (
    CELL_DATASETS,
    GUARD_DATASETS,
    HEADLINE_FINDINGS,
    SEEDS,
    SHIPPED_TABLE,
    HeadlineFinding,
    check_current,
    load_table,
    quote,
)
from lessons.settings import LESSON_SETTINGS
from rag_lab.errors import ConfigError
from rag_lab.experiments import holm, paired_test
from rag_lab.llm.simulator import SIM_VERSION
from tools.course.robustness_markdown import markdown, write_table
from tools.course.robustness_run import run_robustness

REGENERATE = "python -m tools.course robustness"


def test_the_registry_holds_a_finding_of_every_policy_notebook_01_to_13():
    notebooks = {f.notebook for f in HEADLINE_FINDINGS}
    assert {n[:2] for n in notebooks} >= {f"{i:02d}" for i in range(1, 14)}
    assert len({f.key for f in HEADLINE_FINDINGS}) == len(HEADLINE_FINDINGS)
    from pathlib import Path

    for f in HEADLINE_FINDINGS:  # each is what its notebook asserts: the metric appears in it, the setting is read
        text = (Path(__file__).parent.parent / "notebooks" / f"{f.notebook}.py").read_text()
        assert f.metric in text, f.key
        assert f"settings.{setting_of(f)}" in text, f"{f.notebook} does not read settings.{setting_of(f)} ({f.key})"
        if f.key not in GUARDS:   # the notebook states this claim: it reads the sentence, typed once in its sweep file
            assert f'claim=robustness.claim("{f.key}")' in text, f"{f.notebook} does not read claim {f.key!r}"
            assert f.claim not in text, f"{f.notebook} types the claim of {f.key} again"
    with pytest.raises(ConfigError, match="margin"):
        HeadlineFinding("x", "01", "c", "m", {}, {}, "none")
    with pytest.raises(ConfigError, match="no headline finding 'nope'"):
        run_robustness(["nope"])
    for datasets in ((), ("world", "world")):
        with pytest.raises(ConfigError, match="datasets must name at least one dataset, each once"):
            HeadlineFinding("x", "01", "c", "m", {}, {}, "below", datasets=datasets)


#: The guards that refuse, each with the lesson whose setting it reads (the controller's own INSUFFICIENT has no
#: switch of its own, so no row).
GUARDS = {"guard_citation_rule": "13", "guard_citation_threshold": "13", "guard_crag_lower": "05",
          "guard_source_contract": "11", "guard_zero_yield": "03"}


def test_each_refusing_guard_is_claimed_to_answer_fewer_unanswerable_questions():
    """A guard row: the guard on (candidate) against off (reference), unsupported answers lower, on the world's
    unanswerable test questions (every one) and the real samples' unanswerable twins; a claim about unanswerable
    questions runs on those datasets, every other on the default three."""
    rows = {f.key: f for f in HEADLINE_FINDINGS}
    for key, notebook in GUARDS.items():
        f = rows[key]
        assert f.notebook[:2] == notebook, key
        assert (f.metric, f.direction, f.margin) == ("quality_unsupported_answer", "below", None), key
        assert f.datasets == GUARD_DATASETS and f.world_types == ("unanswerable",) and f.world_per_type is None, key
        assert f.candidate != f.reference, key
    assert {k for k, f in rows.items() if f.metric == "quality_unsupported_answer"} == set(GUARDS)
    on_unanswerable = {k for k, f in rows.items() if f.world_types == ("unanswerable",)}
    assert {k for k, f in rows.items() if f.datasets == GUARD_DATASETS} == on_unanswerable
    assert all(f.datasets == CELL_DATASETS for k, f in rows.items() if k not in on_unanswerable)
    assert rows["guard_citation_rule"].candidate == {"citations.require_citation": True}


def test_each_finding_runs_on_its_own_datasets_and_the_table_on_theirs(monkeypatch, tmp_path):
    """No sweep runs here: each cell is stubbed. A guard row gets the world and the twins, a lesson row the world
    and the samples; ``datasets`` keeps only the cells on those (a finding with none is left out); the table's
    datasets are its findings' in order of first use."""
    from rag_lab.experiments import robustness as rerun

    def fake_rerun(sweep, datasets, seeds, work_dir, limit=None, on_cell=None):
        records = [{"finding": 0, "name": sweep["findings"][0]["name"], "dataset": dataset, "seed": seed, "n": 10,
                    "delta": -0.1, "lo": -0.2, "hi": -0.05, "p": 1e-6,
                    "differences": {"n": 10, "differ": 2, "size": 1.0, "sd": 0.3, "binary": True}}
                   for dataset in datasets for seed in seeds]
        for record in records:
            on_cell(record)
        return records

    monkeypatch.setattr(rerun, "rerun_findings", fake_rerun)
    table = run_robustness(["round_cap_calls", "guard_crag_lower"], seeds=[0, 1], work_dir=tmp_path)
    assert table.datasets == [*CELL_DATASETS, *GUARD_DATASETS[1:]]
    cells = {r["key"]: [(c["dataset"], c["seed"]) for c in r["cells"]] for r in table.findings}
    assert cells["guard_crag_lower"] == [(d, s) for d in GUARD_DATASETS for s in (0, 1)]
    assert cells["round_cap_calls"] == [(d, s) for d in CELL_DATASETS for s in (0, 1)]
    assert table.findings[1]["datasets"] == list(GUARD_DATASETS)
    only = run_robustness(["round_cap_calls", "guard_crag_lower"], datasets=["musique_sample_twins"], seeds=[0],
                          work_dir=tmp_path)
    assert [r["key"] for r in only.findings] == ["guard_crag_lower"] and only.datasets == ["musique_sample_twins"]
    with pytest.raises(ConfigError, match="at least one finding on one of its datasets"):
        run_robustness(["round_cap_calls"], datasets=["musique_sample_twins"], work_dir=tmp_path)
    md = markdown(table)   # the lesson row has no twin cell: "–" in every cell, blank at a glance
    assert "| round_cap_calls | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ |  |  |  |  |" in md
    assert "datasets world, hotpotqa_sample_twins, musique_sample_twins" in md


@pytest.mark.slow
def test_a_twin_cell_leaves_the_flagged_twins_out_of_its_test_and_its_detectable_effect(tmp_path):
    """The first 3 HotpotQA twins: 2 are flagged (their corpus still holds the answer), so the cell tests 1."""
    table = run_robustness(["guard_source_contract"], datasets=["hotpotqa_sample_twins"], seeds=[0], real_limit=3,
                           work_dir=tmp_path)
    (cell,) = table.findings[0]["cells"]
    assert cell["dataset"] == "hotpotqa_sample_twins" and cell["n"] == 1 == cell["differences"]["n"]


def setting_of(finding: HeadlineFinding) -> str:
    """The name of the record in :mod:`lessons.settings` that ``finding`` is made from (its notebook, arms,
    base, model and world types; a no-change claim runs every test question of its types)."""
    made = [name for name, s in LESSON_SETTINGS.items()
            if (s.notebook, dict(s.candidate), dict(s.reference), dict(s.base), dict(s.knobs), s.profile, s.types)
            == (finding.notebook, dict(finding.candidate), dict(finding.reference), dict(finding.base),
                dict(finding.knobs), finding.profile, finding.world_types)
            and finding.world_per_type == (s.per_type if finding.direction != "none" else None)]
    assert len(made) == 1, f"{finding.key} is made from {made or 'no record'} of lessons.settings"
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
    json_path, md_path = write_table(small_table, tmp_path / "t.json", tmp_path / "t.md")
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
    `python -m tools.course robustness` (writes data/robustness.json and data/robustness.md)."""
    table = load_table(SHIPPED_TABLE)
    assert table.sim_version == SIM_VERSION, (
        f"data/robustness.json was made with {table.sim_version}, the simulator is {SIM_VERSION}: run `{REGENERATE}`")
    check_current(table)
    assert [f["key"] for f in table.findings] == [f.key for f in HEADLINE_FINDINGS], f"stale registry: run `{REGENERATE}`"
    for row, finding in zip(table.findings, HEADLINE_FINDINGS, strict=True):
        assert (row["metric"], row["candidate"], row["reference"], row["direction"]) == (
            finding.metric, dict(finding.candidate), dict(finding.reference), finding.direction), row["key"]
        assert [(c["dataset"], c["seed"]) for c in row["cells"]] == [(d, s) for d in finding.datasets for s in SEEDS]
        assert row["datasets"] == list(finding.datasets), row["key"]
    assert (SHIPPED_TABLE.parent / "robustness.md").read_text() == markdown(table)
    # every notebook finding can be quoted from it
    for finding in HEADLINE_FINDINGS:
        assert finding.notebook in quote(finding.key)


@pytest.mark.slow
def test_check_current_refuses_another_simulator(small_table):
    check_current(small_table)
    small_table.sim_version = "sim-0"
    with pytest.raises(ConfigError, match="made with simulator sim-0.*python -m tools.course robustness"):
        check_current(small_table)
    small_table.sim_version = SIM_VERSION


@pytest.mark.slow
def test_the_cli_writes_both_files(tmp_path, capsys):
    from tools.course.__main__ import main

    out, md = tmp_path / "r.json", tmp_path / "r.md"
    assert main(["robustness", "--findings", "crag_abstention", "--datasets", "world", "--seeds", "0",
                 "--work-dir", str(tmp_path / "w"), "--out", str(out), "--markdown", str(md), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "crag_abstention" in printed and f"wrote {out} and {md}" in printed
    table = load_table(out)
    assert table.sim_version == SIM_VERSION and len(table.findings[0]["cells"]) == 1
    assert not np.isnan(table.findings[0]["cells"][0]["p"])
    assert main(["robustness", "--findings", "nope", "--out", str(out)]) == 2


def test_a_claim_on_unanswerable_questions_has_no_real_model_cell_on_a_recording_of_none(tmp_path):
    """A recording on answerable data, or of the world's other types, holds none of a guard row's questions: its
    cell is 'not applicable' (no replay); a world recording that holds some is replayed on those alone."""
    import yaml

    from rag_lab.paths import SWEEPS_DIR
    from tools.course.robustness_recorded import outside, recorded_cell, recorded_spec

    rows = {f.key: f for f in HEADLINE_FINDINGS}
    guard, lesson = rows["guard_citation_rule"], rows["round_cap_calls"]
    hotpotqa, world = SWEEPS_DIR / "real_qwen_hotpotqa_v2.yaml", SWEEPS_DIR / "real_qwen_world_v2.yaml"
    assert "the recording is on hotpotqa_sample" in outside(guard, hotpotqa)
    assert "the world's unanswerable questions; the recording holds bridge, comparison" in outside(guard, world)
    assert outside(lesson, hotpotqa) is None and outside(lesson, world) is None
    cell = recorded_cell(guard, "label", hotpotqa, tmp_path)
    assert cell["status"] == "not applicable" and not list(tmp_path.iterdir())   # nothing replayed
    mixed = yaml.safe_load(world.read_text())
    mixed["types"] = ["bridge", "unanswerable"]
    mixed["backend"]["cassette"] = str(world.parent / mixed["backend"]["cassette"])
    (tmp_path / "mixed.yaml").write_text(yaml.safe_dump(mixed))
    assert outside(guard, tmp_path / "mixed.yaml") is None
    assert recorded_spec(guard, tmp_path / "mixed.yaml")["types"] == ["unanswerable"]
    assert recorded_spec(lesson, tmp_path / "mixed.yaml")["types"] == ["bridge", "unanswerable"]
