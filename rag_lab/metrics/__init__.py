"""Evaluation metrics."""

from rag_lab.metrics.retrieval import mrr_at_k, ndcg_at_k, rank_docs, recall_at_k, retrieval_scores

__all__ = ["mrr_at_k", "ndcg_at_k", "rank_docs", "recall_at_k", "retrieval_scores"]
