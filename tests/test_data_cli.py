"""`rag-lab data info`, `retrieval-eval` and `eval` on every multi-hop layout, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_lab.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
LAYOUT_FILES = {
    "hotpotqa_original": FIXTURES / "hotpotqa_distractor.json",
    "hotpotqa_fullwiki_partial": FIXTURES / "hotpotqa_fullwiki_partial.json",
    "hotpotqa_hf_noid": FIXTURES / "hotpotqa_hf_noid.jsonl",
    "musique": FIXTURES / "musique_ans.jsonl",
    "2wikimultihopqa": FIXTURES / "2wikimultihopqa_dev.json",
}


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("layout", sorted(LAYOUT_FILES))
def test_data_info_and_retrieval_eval_on_each_layout(layout: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(LAYOUT_FILES[layout])
    info = run_json(capsys, "data", "info", "--dataset", path)
    assert info["questions"] >= 3 and info["gold_coverage"]["questions_with_gold"] >= 2  # MuSiQue: one unanswerable
    reports = run_json(capsys, "retrieval-eval", "--dataset", path, "--retriever", "bm25", "--k", "3")["reports"]
    (report,) = reports
    assert report["gold_coverage"] == info["gold_coverage"]
    assert "unlabeled" not in report["by_type"]
    assert bool(report["by_hop"]) == (info["with_hop_order"] > 0)


def test_data_info_text_states_coverage_and_notes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "info", "--dataset", str(LAYOUT_FILES["hotpotqa_fullwiki_partial"])]) == 0
    text = capsys.readouterr().out
    assert "all for 1, some for 1, none for 1 of 3 questions (recall ceiling 0.500)" in text
    assert main(["data", "info", "--dataset", str(LAYOUT_FILES["hotpotqa_hf_noid"])]) == 0
    assert "note: 3 of 3 question(s) had no '_id' or 'id'" in capsys.readouterr().out


def test_beir_report_has_no_fake_hops_or_unlabeled_row(capsys: pytest.CaptureFixture[str]) -> None:
    (report,) = run_json(capsys, "retrieval-eval", "--dataset", "scifact_sample", "--retriever", "bm25")["reports"]
    assert report["by_hop"] == {} and report["by_type"] == {}
    assert report["gold_coverage"]["recall_ceiling"] == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["hotpotqa_fullwiki_partial", "musique", "hotpotqa_hf_noid"])
def test_eval_runs_the_pipeline_on_real_layouts(layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "eval", "--dataset", str(LAYOUT_FILES[layout]), "--out", str(tmp_path))
    assert out["questions"] == 3 and out["overall"]["n"] == 3
    assert out["gold_coverage"]["questions_with_gold"] >= 2
    rows = [json.loads(line) for line in (tmp_path / "questions.jsonl").read_text().splitlines()]
    assert len(rows) == 3
    if layout == "musique":
        unanswerable = next(r for r in rows if r["type"] == "unanswerable")
        assert unanswerable["answerable"] is False and unanswerable["quality_answer_containment"] is None
