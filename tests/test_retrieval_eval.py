"""The retrieval report on the shipped world and through the CLI."""

import json
import subprocess
import sys

import pytest

from rag_lab.cli import main
from rag_lab.evaluation.retrieval_eval import evaluate_retrieval, format_report


@pytest.mark.slow
def test_dense_on_world_meets_the_issue_targets(world):
    report = evaluate_retrieval(world, "dense", k=10, split="test")
    assert report.by_type["single"].recall >= 0.9
    assert report.ann_recall_vs_exact >= 0.98
    # the gaps later policies must close stay visible
    assert report.by_type["mismatch"].recall < report.by_type["single"].recall
    assert report.by_hop["hop2"].recall < report.by_hop["hop1"].recall
    assert "unanswerable" not in report.by_type  # no gold docs, so no retrieval score
    assert report.judged == report.questions - 30


def test_bm25_report_shape_and_text(world):
    report = evaluate_retrieval(world, "bm25", k=5, split="dev", limit=40)
    assert report.questions == 40 and report.k == 5 and report.ann_recall_vs_exact is None
    assert set(report.per_question) <= {q.qid for q in world.evalset.select(split="dev")}
    assert 0.0 <= report.overall.recall <= 1.0
    text = format_report([report])
    assert "bm25 on world" in text and "overall" in text


def test_unknown_retriever_and_empty_selection(world):
    with pytest.raises(ValueError, match="unknown retriever"):
        evaluate_retrieval(world, "tfidf")
    with pytest.raises(ValueError, match="split"):
        evaluate_retrieval(world, "bm25", split="train")


def test_cli_data_info_json(capsys):
    assert main(["data", "info", "--dataset", "world", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["documents"] == 726 and info["questions"] == 400
    assert info["questions_by_split"] == {"dev": 160, "test": 240}


def test_cli_retrieval_eval_writes_report(tmp_path, capsys):
    code = main(["retrieval-eval", "--dataset", "world", "--retriever", "bm25", "--limit", "30",
                 "--out", str(tmp_path), "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reports"][0]["retriever"] == "bm25" and "per_question" not in out["reports"][0]
    saved = json.loads((tmp_path / "retrieval_report.json").read_text())
    assert saved["reports"][0]["per_question"]
    assert "Recall@k" in (tmp_path / "retrieval_report.txt").read_text()


def test_cli_bad_input_exits_2_with_a_message(tmp_path, capsys):
    assert main(["data", "info", "--dataset", str(tmp_path / "nope")]) == 2
    assert "no such dataset" in capsys.readouterr().err
    assert main(["retrieval-eval", "--dataset", "world", "--retriever", "grep"]) == 2
    assert main(["retrieval-eval", "--dataset", "world", "--param", "novalue"]) == 2


def test_hotpotqa_export_loads_and_evaluates_through_the_cli(tmp_path, capsys):
    path = tmp_path / "hotpot.json"
    assert main(["world", "export-hotpotqa", "--out", str(path), "--questions-per-type", "100"]) == 0
    capsys.readouterr()
    assert main(["data", "info", "--dataset", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["questions_by_type"] == {"bridge": 100, "comparison": 100}
    assert main(["retrieval-eval", "--dataset", str(path), "--retriever", "bm25", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["reports"][0]
    assert report["judged"] == 200 and set(report["by_type"]) == {"bridge", "comparison"}


def test_console_script_runs():
    result = subprocess.run([sys.executable, "-m", "rag_lab.cli", "data", "info", "--dataset", "world"],
                            capture_output=True, text=True, check=True)
    assert "documents: 726" in result.stdout
