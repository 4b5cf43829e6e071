"""One test per claim: the robustness table's cell, the notebook's finding (``paired_finding``), ``rag-lab sweep``
and the HTML report compute the same p for the same claim — one-sided in the claimed direction — because a
sweep that states the claim (``findings:``) is what each of them tests."""

from __future__ import annotations

import json

import pytest

from lessons.robustness import HeadlineFinding
from rag_lab.experiments import load_sweep, paired_finding
from rag_lab.llm.simulator import SIM_VERSION
from rag_lab.stats.significance import p_clause, paired_test
from tools.course.robustness_run import _cells

#: Notebook 01's two-hop claim on 20 world bridge questions (seconds, not minutes).
CLAIM = HeadlineFinding("round_cap_bridge_small", "01_round_cap", "capping at one round loses two-hop answers",
                        "quality_answer_containment_strict", {"round_cap.max_rounds": 1}, {"round_cap.max_rounds": 2},
                        "below", world_types=("bridge",), world_per_type=20)


def test_table_lesson_sweep_and_report_print_the_same_p_for_one_claim(tmp_path, capsys):
    from rag_lab.cli import main
    from rag_lab.report import write_report

    (cell,) = _cells(CLAIM, ["world"], [0], 60, tmp_path / "rob")                      # (1) the robustness table
    spec = CLAIM.spec("world", 0, 60)
    run_dir = tmp_path / "rob" / SIM_VERSION / spec["name"]
    result = load_sweep(run_dir)
    lesson = paired_finding(result, CLAIM.metric, dict(CLAIM.candidate), dict(CLAIM.reference),  # (2) the notebook
                            direction="below")
    spec_file = tmp_path / "claim.json"
    spec_file.write_text(json.dumps(spec))
    assert main(["sweep", str(spec_file), "--out", str(run_dir), "--quiet", "--json"]) == 0    # (3) rag-lab sweep
    (printed,) = json.loads(capsys.readouterr().out)["findings"]
    html = write_report(run_dir, tmp_path / "report.html").read_text(encoding="utf-8")         # (4) the report
    assert cell["p"] == lesson.p == printed["p"]
    assert f"{p_clause(lesson.p)} ({lesson.method})" in html and "<h2>Declared claims</h2>" in html
    # and it is the one-sided test: half the two-sided p of the same difference when it lies the claimed way
    values, reference = result.paired_values(CLAIM.metric, dict(CLAIM.candidate), dict(CLAIM.reference))
    two_sided = paired_test(values, reference).p
    assert lesson.delta < 0 and lesson.p == pytest.approx(min(1.0, two_sided / 2)) and lesson.p < two_sided
    assert lesson.n == 20 and lesson.p < 0.05   # a claim with something to say
    assert main(["sweep", str(spec_file), "--out", str(run_dir), "--quiet"]) == 0
    assert f"{p_clause(lesson.p)} ({lesson.method})" in capsys.readouterr().out
