"""Retrieval evaluation: chunk a dataset, build an index, search every question, score the run (Recall, MRR and
nDCG at k overall and by type, recall by hop position, the corpus's recall ceiling, timings, and for HNSW its
recall against exact search)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

from rag_lab.chunking import chunk_corpus
from rag_lab.embedding import Embedder, default_embedder
from rag_lab.errors import ConfigError
from rag_lab.evaluation.retrieval_metrics import rank_docs, retrieval_scores
from rag_lab.index import INDEX_KINDS, ExactIndex, HNSWIndex, SearchIndex, doc_run, make_index
from rag_lab.records import UNLABELED, Dataset, EvalSet, GoldCoverage, gold_coverage

#: The scores of a retrieval run, each a field of :class:`MetricSummary` (not the metric registry, which is
#: :data:`rag_lab.evaluation.metric_table.METRICS`).
RETRIEVAL_SCORES = ("recall", "mrr", "ndcg")


class MetricSummary(BaseModel):
    """Mean metrics over ``n`` judged questions (None when no question has gold documents)."""

    n: int
    recall: float | None
    mrr: float | None
    ndcg: float | None


class RetrievalReport(BaseModel):
    dataset: str
    retriever: str
    k: int
    split: str | None
    questions: int
    judged: int
    overall: MetricSummary
    #: One row per question type; no row when every question is unlabeled (it would repeat ``overall``).
    by_type: dict[str, MetricSummary]
    #: For questions whose hop order is known (``Question.hop_doc_ids``, at least two hops):
    #: recall@k of the document of the i-th hop.
    by_hop: dict[str, MetricSummary]
    gold_coverage: GoldCoverage
    #: Overall metrics at the extra cut-offs asked for (``cutoffs=``), from the same run.
    overall_at: dict[int, MetricSummary] = {}
    index_params: dict[str, Any]
    chunks: int
    timings: dict[str, float]
    #: HNSW only: share of exact top-k chunk ids that the approximate search also returns.
    ann_recall_vs_exact: float | None = None
    per_question: dict[str, dict[str, float]]


def _summary(values: list[dict[str, float]]) -> MetricSummary:
    if not values:
        return MetricSummary(n=0, recall=None, mrr=None, ndcg=None)
    return MetricSummary(n=len(values), **{m: float(np.mean([v[m] for v in values])) for m in RETRIEVAL_SCORES})


def _hop_recall(evalset: EvalSet, run: dict[str, dict[str, float]], k: int) -> dict[str, MetricSummary]:
    found: dict[int, list[float]] = defaultdict(list)
    for q in evalset:
        if len(q.hop_doc_ids) < 2:
            continue
        top = set(rank_docs(run.get(q.qid, {}), k))
        for hop, doc_id in enumerate(q.hop_doc_ids, start=1):
            found[hop].append(1.0 if doc_id in top else 0.0)
    return {
        f"hop{hop}": MetricSummary(n=len(v), recall=float(np.mean(v)), mrr=None, ndcg=None)
        for hop, v in sorted(found.items())
    }


def ann_recall(approx: SearchIndex, exact: SearchIndex, queries: Sequence[str], k: int) -> float:
    """Share of the exact top-``k`` chunk ids that ``approx`` also returns, over ``queries``."""
    truth = exact.search(queries, k)
    got = approx.search(queries, k)
    hits = sum(len({c for c, _ in t} & {c for c, _ in g}) for t, g in zip(truth, got, strict=True))
    total = sum(len(t) for t in truth)
    return hits / total if total else 1.0


def evaluate_retrieval(dataset: Dataset, retriever: str = "dense", k: int = 10, split: str | None = None,
                       limit: int | None = None, index_params: dict[str, Any] | None = None,
                       embedder: Embedder | None = None, cutoffs: Sequence[int] = ()) -> RetrievalReport:
    """Evaluate one retriever on ``dataset`` (optionally one split, the first ``limit`` questions).

    ``max(100, 3k)`` chunks are fetched per question (``k`` the largest cut-off) and folded into documents by
    their best chunk before the top ``k`` documents are scored. ``cutoffs`` adds overall scores at other cut-offs
    from the same run (e.g. nDCG@10 with ``k=10`` and Recall@100 with ``cutoffs=(100,)``)."""
    if retriever not in INDEX_KINDS:
        raise ConfigError(f"unknown retriever {retriever!r}; choose one of {list(INDEX_KINDS)}")
    if min((k, *cutoffs)) < 1:
        raise ConfigError(f"k and cutoffs must be >= 1, got {k} and {list(cutoffs)}")
    deepest = max((k, *cutoffs))
    evalset = dataset.evalset.select(split=split, limit=limit)
    if not len(evalset):
        raise ConfigError(f"no questions to evaluate in {dataset.name!r} (split={split!r}, limit={limit})")
    index_params = dict(index_params or {})
    needs_embedder = INDEX_KINDS[retriever].needs_embedder
    embedder = embedder if embedder is not None or not needs_embedder else default_embedder()

    start = time.perf_counter()
    chunks = chunk_corpus(dataset.corpus)
    chunk_seconds = time.perf_counter() - start
    index = make_index(retriever, embedder, **index_params)
    index.build(chunks)

    queries = evalset.queries()
    depth = max(100, 3 * deepest)
    start = time.perf_counter()
    hits = index.search(list(queries.values()), depth)
    query_seconds = time.perf_counter() - start
    chunk_to_doc = {c.chunk_id: c.doc_id for c in chunks}
    run = doc_run(dict(zip(queries, hits, strict=True)), chunk_to_doc, deepest)

    per_question = retrieval_scores(evalset.qrels(), run, k)
    by_type: dict[str, list[dict[str, float]]] = defaultdict(list)
    for q in evalset:
        if q.qid in per_question:
            by_type[q.type].append(per_question[q.qid])
    if set(by_type) == {UNLABELED}:
        by_type.clear()

    ann = None
    if isinstance(index, HNSWIndex):
        exact = ExactIndex(index.embedder)
        exact.build(chunks)
        ann = ann_recall(index, exact, list(queries.values()), k)

    return RetrievalReport(
        dataset=dataset.name, retriever=retriever, k=k, split=split, questions=len(evalset), judged=len(per_question),
        overall=_summary(list(per_question.values())), by_type={t: _summary(v) for t, v in sorted(by_type.items())},
        by_hop=_hop_recall(evalset, run, k), gold_coverage=gold_coverage(dataset.corpus, evalset),
        overall_at={c: _summary(list(retrieval_scores(evalset.qrels(), run, c).values())) for c in cutoffs},
        index_params=index_params, chunks=len(chunks),
        timings={
            "chunk_seconds": chunk_seconds,
            "build_seconds": index.build_seconds,
            "query_seconds": query_seconds,
            "queries_per_second": len(queries) / query_seconds if query_seconds > 0 else float("inf"),
        },
        ann_recall_vs_exact=ann, per_question=per_question)


def format_report(reports: Sequence[RetrievalReport]) -> str:
    """A plain-text table: one block per retriever, rows overall / by type / by hop."""
    lines: list[str] = []
    for r in reports:
        lines.append(
            f"{r.retriever} on {r.dataset} (split={r.split or 'all'}, k={r.k}): {r.questions} questions, "
            f"{r.judged} with gold docs, {r.chunks} chunks; build {r.timings['build_seconds']:.2f}s, "
            f"query {r.timings['query_seconds']:.2f}s ({r.timings['queries_per_second']:.0f} q/s)"
            + (f", HNSW recall vs exact {r.ann_recall_vs_exact:.3f}" if r.ann_recall_vs_exact is not None else "")
        )
        if not r.gold_coverage.complete:
            lines.append(f"  {r.gold_coverage.describe()}")
        lines.append(f"  {'':14s} {'n':>4s} {'Recall@k':>9s} {'MRR@k':>7s} {'nDCG@k':>7s}")
        rows = [("overall", r.overall), *((f"overall @{c}", s) for c, s in r.overall_at.items()), *r.by_type.items(),
                *((f"multi-hop {h}", s) for h, s in r.by_hop.items())]
        for label, s in rows:
            def cell(v: float | None, width: int) -> str:
                return f"{v:{width}.3f}" if v is not None else f"{'-':>{width}s}"
            lines.append(f"  {label:14s} {s.n:4d} {cell(s.recall, 9)} {cell(s.mrr, 7)} {cell(s.ndcg, 7)}")
        lines.append("")
    return "\n".join(lines)
