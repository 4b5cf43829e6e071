"""Retrieval metrics against values computed by hand."""

import math

import pytest

from rag_lab.evaluation.retrieval_metrics import mrr_at_k, ndcg_at_k, rank_docs, recall_at_k, retrieval_scores
from rag_lab.index import doc_run
from rag_lab.records import EvalSet, relevant_docs

QRELS = {"q1": {"a": 1, "c": 1}, "q2": {"x": 2, "y": 1}, "q3": {"z": 0}}
RUN = {
    "q1": {"a": 0.2, "b": 0.9, "c": 0.1, "d": 0.5},  # ranking b, d, a, c
    "q2": {"y": 0.8, "x": 0.7, "w": 0.1},  # ranking y, x, w
}


def test_rank_docs_breaks_ties_by_id():
    assert rank_docs({"b": 1.0, "a": 1.0, "c": 2.0}) == ["c", "a", "b"]
    assert rank_docs({"b": 1.0, "a": 1.0, "c": 2.0}, k=2) == ["c", "a"]


def test_recall_by_hand():
    assert recall_at_k(QRELS["q1"], RUN["q1"], 2) == 0.0
    assert recall_at_k(QRELS["q1"], RUN["q1"], 3) == 0.5
    assert recall_at_k(QRELS["q1"], RUN["q1"], 4) == 1.0


def test_mrr_by_hand():
    assert mrr_at_k(QRELS["q1"], RUN["q1"], 2) == 0.0
    assert mrr_at_k(QRELS["q1"], RUN["q1"], 10) == pytest.approx(1 / 3)
    assert mrr_at_k(QRELS["q2"], RUN["q2"], 10) == 1.0


def test_ndcg_by_hand():
    # q1 at 4: relevant at ranks 3 and 4; ideal at ranks 1 and 2
    dcg = 1 / math.log2(4) + 1 / math.log2(5)
    idcg = 1 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at_k(QRELS["q1"], RUN["q1"], 4) == pytest.approx(dcg / idcg)
    # q2 graded: y (1) at rank 1, x (2) at rank 2; ideal puts x first
    dcg2 = 1 / 1 + 2 / math.log2(3)
    idcg2 = 2 / 1 + 1 / math.log2(3)
    assert ndcg_at_k(QRELS["q2"], RUN["q2"], 10) == pytest.approx(dcg2 / idcg2)


def test_retrieval_scores_skips_unjudged_and_scores_missing_runs_zero():
    scores = retrieval_scores({**QRELS, "q4": {"m": 1}}, RUN, k=3)
    assert set(scores) == {"q1", "q2", "q4"}  # q3 has no relevant doc
    assert scores["q4"] == {"recall": 0.0, "mrr": 0.0, "ndcg": 0.0}
    assert scores["q1"]["recall"] == 0.5


def test_undefined_and_bad_k():
    with pytest.raises(ValueError):
        recall_at_k({"a": 0}, {"a": 1.0}, 1)
    for bad_k in (lambda: retrieval_scores(QRELS, RUN, k=0), lambda: doc_run({"q": [("a#0", 1.0)]}, {"a#0": "a"}, 0)):
        with pytest.raises(ValueError, match=r"^k must be >= 1, got 0$"):   # one check of a cut-off, one message
            bad_k()


def test_the_gold_documents_of_a_question_are_the_ones_retrieval_metrics_count_relevant():
    """One rule for qrels: grade > 0 is relevant, whether a question's gold documents are read from them
    (EvalSet.from_beir) or a retrieval metric scores a run against them."""
    judged = {"a": 2, "b": 0, "c": 1, "d": -1}
    [question] = EvalSet.from_beir({"q": "text"}, {"q": judged})
    assert question.gold_doc_ids == relevant_docs(judged) == ("a", "c")
    found = {doc: 1.0 for doc in question.gold_doc_ids}
    assert recall_at_k(judged, found, 4) == ndcg_at_k(judged, found, 4) == 1.0
    assert recall_at_k(judged, {"b": 1.0, "d": 0.5}, 4) == 0.0
