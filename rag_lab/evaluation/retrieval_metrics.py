"""Retrieval metrics over BEIR-shaped qrels (``{qid: {doc_id: grade}}``, grade > 0 relevant) and runs
(``{qid: {doc_id: score}}``, ties broken by ``doc_id``). nDCG gains are the grades, discounted by
``log2(rank + 1)`` (trec_eval's ``ndcg_cut``)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from rag_lab.errors import ConfigError
from rag_lab.index.base import check_k
from rag_lab.records import Qrels, Run, relevant_docs


def rank_docs(scores: Mapping[str, float], k: int | None = None) -> list[str]:
    """Doc ids by descending score, ties by id; the first ``k`` if given."""
    ranked = sorted(scores, key=lambda d: (-scores[d], d))
    return ranked if k is None else ranked[:k]


def _relevant(judged: Mapping[str, int]) -> set[str]:
    return set(relevant_docs(judged))


def recall_at_k(judged: Mapping[str, int], scores: Mapping[str, float], k: int) -> float:
    relevant = _relevant(judged)
    if not relevant:
        raise ConfigError("recall is undefined for a query without relevant documents")
    return len(relevant.intersection(rank_docs(scores, k))) / len(relevant)


def mrr_at_k(judged: Mapping[str, int], scores: Mapping[str, float], k: int) -> float:
    relevant = _relevant(judged)
    for rank, doc in enumerate(rank_docs(scores, k), start=1):
        if doc in relevant:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(judged: Mapping[str, int], scores: Mapping[str, float], k: int) -> float:
    dcg = sum(
        max(judged.get(doc, 0), 0) / math.log2(rank + 1)
        for rank, doc in enumerate(rank_docs(scores, k), start=1)
    )
    ideal = sorted((judged[d] for d in relevant_docs(judged)), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    if idcg == 0:
        raise ConfigError("nDCG is undefined for a query without relevant documents")
    return dcg / idcg


def retrieval_scores(qrels: Qrels, run: Run, k: int) -> dict[str, dict[str, float]]:
    """``{qid: {"recall": ..., "mrr": ..., "ndcg": ...}}`` at cut-off ``k``."""
    check_k(k)
    out: dict[str, dict[str, float]] = {}
    for qid, judged in qrels.items():
        if not _relevant(judged):
            continue
        scores = run.get(qid, {})
        out[qid] = {"recall": recall_at_k(judged, scores, k), "mrr": mrr_at_k(judged, scores, k),
                    "ndcg": ndcg_at_k(judged, scores, k)}
    return out
