"""BEIR SciFact: dense (all-MiniLM-L6-v2), BM25 and hybrid nDCG@10 / Recall@100 next to published figures.

A check that the retrieval stack and its metrics are right on a real BEIR folder as published,
not a target to tune toward. Run by hand (the first dense run embeds ~9.8k chunks: about 8-9
minutes on two CPU cores; the vectors are cached in $RAG_LAB_CACHE, so later runs take seconds):

    nice -n 10 python benchmarks/bench_scifact.py --beir ../shared/data/scifact [--out reports/scifact]

Published reference figures (SciFact test split, 300 queries, 5,183 abstracts):

* BM25 — BEIR paper (Thakur et al., 2021, "BEIR: A Heterogeneous Benchmark for Zero-shot
  Evaluation of Information Retrieval Models", arXiv:2104.08663), Elasticsearch BM25 over title +
  abstract: nDCG@10 0.665 (Table 2), Recall@100 0.908 (appendix, Recall@100 table).
* all-MiniLM-L6-v2 — MTEB leaderboard (Muennighoff et al., 2022; results in the
  embeddings-benchmark/results repository), SciFact nDCG@10 0.645 for
  sentence-transformers/all-MiniLM-L6-v2 (MTEB's SciFact task is BEIR's test split).
* Hybrid — no published figure for this exact fusion (reciprocal-rank fusion of the two, k=60).

Differences to expect: the lab retrieves *chunks* (default chunking) and scores a document by its
best chunk, where the references embed or index whole abstracts (MiniLM truncates at 256 word
pieces); the BM25 implementation (bm25s) and its tokenisation differ from Elasticsearch's.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rag_lab.evaluation.retrieval_eval import evaluate_retrieval
from rag_lab.loaders import load_beir

#: (retriever, metric) -> (published value, where from)
PUBLISHED: dict[tuple[str, str], tuple[float, str]] = {
    ("bm25", "ndcg@10"): (0.665, "BEIR paper, Table 2 (BM25)"),
    ("bm25", "recall@100"): (0.908, "BEIR paper, Recall@100 table (BM25)"),
    ("dense", "ndcg@10"): (0.645, "MTEB leaderboard, all-MiniLM-L6-v2"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--beir", type=Path, required=True, help="the SciFact BEIR folder (corpus.jsonl, queries.jsonl, qrels/)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--retrievers", nargs="+", default=["bm25", "dense", "hybrid"])
    parser.add_argument("--out", type=Path, default=None, help="folder to write scifact.json into")
    args = parser.parse_args()

    dataset = load_beir(args.beir, split=args.split)
    print(f"{dataset.name}: {len(dataset.corpus)} documents, {len(dataset.evalset)} judged {args.split} queries")
    rows = []
    for kind in args.retrievers:
        start = time.perf_counter()
        report = evaluate_retrieval(dataset, kind, k=10, cutoffs=(100,))
        seconds = time.perf_counter() - start
        measured = {"ndcg@10": report.overall.ndcg, "recall@100": report.overall_at[100].recall}
        for metric, value in measured.items():
            published = PUBLISHED.get((kind, metric))
            rows.append({"retriever": kind, "metric": metric, "measured": value,
                         "published": published[0] if published else None,
                         "source": published[1] if published else "-",
                         "chunks": report.chunks, "seconds": seconds})
    print(f"\n{'retriever':9s} {'metric':11s} {'measured':>8s} {'published':>9s}  source")
    for r in rows:
        pub = f"{r['published']:.3f}" if r["published"] is not None else "-"
        print(f"{r['retriever']:9s} {r['metric']:11s} {r['measured']:8.3f} {pub:>9s}  {r['source']}")
    print("\nseconds per retriever (index build incl. embedding, unless cached): "
          + ", ".join(f"{r['retriever']} {r['seconds']:.0f}" for r in rows[::2]))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "scifact.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
