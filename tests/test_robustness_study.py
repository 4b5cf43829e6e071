"""The robustness table's study rows (tools.course.robustness_study) and the headline cells a recording measured on
other arms (tools.course.robustness_recorded.recorded_arms): every contrast a study declared is a tested cell with
the study's own verdict, no measured contrast shows "?", and lessons 00 and 01 show the study's rows."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from lessons.lesson_text import where_words
from lessons.robustness import HEADLINE_FINDINGS, load_table, quote
from rag_lab.experiments.engine.sweep_file import load_sweep_spec
from rag_lab.figures.where_grid import where_grid_info
from rag_lab.paths import DATA_DIR, SWEEPS_DIR
from rag_lab.stats.significance import holm
from tools.course import robustness_study
from tools.course.robustness_recorded import recorded_arms
from tools.course.robustness_study import STUDIES

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
FINDINGS = {f.key: f for f in HEADLINE_FINDINGS}


def _study_cells(table):
    return {(c["part"], c["index"]): (row, c) for row in table.studies for c in row["recorded"]}


def test_every_part_of_a_study_is_registered():
    """A sweep file whose family names a study is one of that study's parts (a part left out would leave its
    contrasts off the grid)."""
    registered = {Path(p).name for columns in STUDIES.values() for paths in columns.values() for p in paths}
    for path in sorted(SWEEPS_DIR.glob("*.yaml")):
        spec = load_sweep_spec(path)
        if spec.family.study and spec.findings:
            assert spec.family.study in STUDIES, (path.name, spec.family.study)
            assert path.name in registered, f"{path.name} is a part of study {spec.family.study!r}: add it to STUDIES"


def test_every_declared_claim_of_a_study_is_a_tested_cell_of_the_shipped_table():
    table = load_table()
    cells = _study_cells(table)
    for columns in STUDIES.values():
        for label, paths in columns.items():
            for path in paths:
                spec = load_sweep_spec(path)
                for index, claim in enumerate(spec.findings, start=1):
                    row, cell = cells[(spec.name, index)]
                    assert cell["dataset"] == label and cell["claim"] == claim.claim
                    assert cell["status"] == "tested", (spec.name, index, cell.get("why"))
                    assert (row["metric"], row["direction"], row["margin"]) == (claim.metric, claim.direction,
                                                                               claim.margin)
    info = where_grid_info(table, [row["key"] for row in table.studies])
    assert not [c for row in info.cells for c in row if c.status == "not recorded"]   # no "?" on a study's row


@pytest.mark.parametrize("claims", sorted((DATA_DIR / "recorded").glob("*_claims.json")), ids=lambda p: p.stem)
def test_a_study_cell_gives_the_verdict_of_its_claims_file(claims):
    """The grid's cell of a declared claim is the claim as its study page tests it: outside the pilot, the p within
    its declared family, the same verdict (data/recorded/<part>_claims.json)."""
    table = load_table()
    cells = _study_cells(table)
    for claim in json.loads(claims.read_text(encoding="utf-8")):
        _, cell = cells[(claim["part"], claim["index"])]
        assert (cell["n"], cell["holds"]) == (claim["n"], claim["holds"]), (claim["part"], claim["index"])
        for key in ("delta", "lo", "hi", "p", "p_family"):
            assert cell[key] == pytest.approx(claim[key], abs=1e-12), (claim["part"], claim["index"], key)


def test_holm_over_the_study_is_beside_each_cell():
    table = load_table()
    for study in STUDIES:
        tested = [c for row in table.studies if row["study"] == study for c in row["recorded"] if c["status"] == "tested"]
        assert [c["p_study"] for c in tested] == pytest.approx(holm([c["p"] for c in tested]))


def test_a_part_still_being_recorded_says_so(monkeypatch):
    """A part listed in RECORDING (below its declared size) has provisional cells, at its sweep file's per_type,
    which the quote and the where words carry; a part recorded at its declared size has none."""
    table = load_table()
    cells = [c for row in table.studies for c in row["recorded"]]
    assert {c["part"] for c in cells} >= robustness_study.RECORDING
    for cell in cells:
        if cell["part"] in robustness_study.RECORDING:
            per_type = load_sweep_spec(SWEEPS_DIR / f"{cell['part']}.yaml").per_type
            assert f"per_type ({per_type} a type" in cell.get("provisional", ""), (
                f"{cell['part']}: not provisional at the sweep file's per_type: "
                "`python -m tools.course robustness --recorded-only`")
        else:
            assert not cell.get("provisional"), (f"{cell['part']} is recorded but marked provisional: "
                                                 "`python -m tools.course robustness --recorded-only`")
    spec = load_sweep_spec(SWEEPS_DIR / "real_qwen_hotpotqa_twins.yaml")
    finding = SimpleNamespace(claim="a claim", delta=-0.1, direction="below", margin=0.0, n=10, lo=-0.2, hi=-0.05,
                              p=0.01, method="exact", n_better=0, n_worse=2, p_adjusted=0.01, holds=True,
                              detectable=None)
    monkeypatch.setattr(robustness_study, "RECORDING", frozenset())
    assert "provisional" not in robustness_study._cell("label", spec, 1, finding, 20)
    monkeypatch.setattr(robustness_study, "RECORDING", frozenset({spec.name}))
    cell = robustness_study._cell("label", spec, 1, finding, 20)
    assert f"per_type ({spec.per_type} a type, 20 questions)" in cell["provisional"]
    table.studies[-1]["recorded"][0]["provisional"] = cell["provisional"]
    assert "provisional" in quote(table.studies[-1]["key"], table)
    assert "provisional: its study is still being recorded" in where_words(table.studies[-1]["key"], table)


def test_the_round_cap_is_measured_on_the_arms_the_v3_study_ran():
    """The v3 recordings ran the cap at 1 and 3: lesson 01's row (1 vs 2) is measured there as 1 vs 3; a recording
    that ran 2 keeps the row's arms, and a setting the recording never varies is not mapped."""
    calls = FINDINGS["round_cap_calls"]
    mapped = recorded_arms(calls, SWEEPS_DIR / "real_qwen_hotpotqa_v3.yaml")
    assert mapped is not None and dict(mapped.reference) == {"round_cap.max_rounds": 3}
    assert dict(mapped.candidate) == dict(calls.candidate)
    assert recorded_arms(calls, SWEEPS_DIR / "real_qwen_hotpotqa_v2.yaml") is None
    assert recorded_arms(FINDINGS["hyde_recall"], SWEEPS_DIR / "real_qwen_hotpotqa_v3.yaml") is None


def test_a_headline_cell_of_a_declared_contrast_takes_the_study_verdict():
    table = load_table()
    cells = _study_cells(table)
    for row in table.findings:
        for cell in row["recorded"]:
            if cell.get("declared"):
                _, declared = cells[(cell["part"], cell["index"])]
                assert (cell["holds"], cell["p_family"], cell["n"]) == (declared["holds"], declared["p_family"],
                                                                        declared["n"])
    calls = {c["dataset"]: c for c in table.row("round_cap_calls")["recorded"]}
    v3 = [c for label, c in calls.items() if "prompts v3" in label]
    assert v3 and all(c.get("declared") == "v3_max_rounds_1_calls" for c in v3)


@pytest.mark.parametrize("name", ["00_quickstart", "01_round_cap"])
def test_lessons_00_and_01_show_no_unrecorded_v3_cell(name):
    """The lessons replay the v3 study (cap 1 vs 3): their banners show its contrasts, never "v3 ?"."""
    text = (NOTEBOOKS / f"{name}.py").read_text(encoding="utf-8")
    banner = text.split("# %%", 2)[1]
    assert not re.search(r"v3\s+\?", banner.replace("# >", " ")), banner
    assert "measured as" in banner
