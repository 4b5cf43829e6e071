"""Embedding: PyTorch vs ONNX Runtime (fp32 and int8) throughput on the same chunks, their Recall@10 /
nDCG@10 on the world's test split, and the embedding cache cold vs warm.

    python -m benchmarks --sections embedding [--quick]

Each backend embeds the same chunks of the shipped world, uncached, one after the other (after a
warm-up that loads the model, and exports the ONNX graph the first time, outside the clock); with
``repeats`` > 1 the order rotates and the best time counts. The vectors just timed are put in a
temporary embedding cache, so the exact-search evaluation reuses them.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks import Measure, Ratio, Section
from rag_lab.chunking import chunk_corpus, chunk_text_for_embedding
from rag_lab.embedding import CachedEmbedder, EmbeddingCache, SentenceTransformerEmbedder
from rag_lab.evaluation.retrieval_eval import evaluate_retrieval
from rag_lab.loaders import load_dataset

K = 10


def backends() -> dict[str, object]:
    found: dict[str, object] = {"torch": SentenceTransformerEmbedder()}
    try:
        from rag_lab.embedding.onnx_runtime import OnnxEmbedder

        found["onnx"] = OnnxEmbedder()
        found["onnx-int8"] = OnnxEmbedder(quantize=True)
    except Exception as exc:  # the onnx extra is missing: measure PyTorch alone and say why
        print(f"embedding: no ONNX backend ({exc})")
    return found


def run(quick: bool, work: Path) -> Section:
    section = Section("embedding")
    dataset = load_dataset("world")
    chunks = chunk_corpus(dataset.corpus)
    texts = [chunk_text_for_embedding(c) for c in chunks]
    sample = texts[:256] if quick else texts
    repeats = 1 if quick else 2
    models = backends()
    for name, model in models.items():
        start = time.perf_counter()
        model.embed(["warm up: load the model (and export it the first time)"])
        section.notes.append(f"{name}: first load {time.perf_counter() - start:.1f} s (ONNX: includes the one-time "
                             "export when the graph was not cached yet)")
    best: dict[str, float] = {}
    vectors: dict[str, object] = {}
    names = list(models)
    for rep in range(repeats):
        for name in names[rep % len(names):] + names[: rep % len(names)]:
            start = time.perf_counter()
            vectors[name] = models[name].embed(sample)
            best[name] = min(best.get(name, float("inf")), time.perf_counter() - start)
    rate = {name: len(sample) / seconds for name, seconds in best.items()}
    section.notes.append(f"{len(sample)} chunks of the shipped world, best of {repeats} (order rotated)")
    for name in names[1:]:
        section.ratios.append(Ratio(f"embedding throughput, {name} vs torch", "torch", name, rate["torch"], rate[name],
                                    "chunks/s", target=1.5))

    if not quick or len(sample) == len(texts):
        with tempfile.TemporaryDirectory() as tmp:
            cache = EmbeddingCache(Path(tmp) / "embeddings.sqlite")
            scores = {}
            for name in names:
                cached = CachedEmbedder(models[name], cache)
                cache.put(cached.model_id, sample, vectors[name])
                report = evaluate_retrieval(dataset, "exact", k=K, split="test", embedder=cached)
                scores[name] = report.overall
            for name in names:
                section.measures.append(Measure(f"Recall@{K} exact, world test, {name}", scores[name].recall, ""))
                section.measures.append(Measure(f"nDCG@{K} exact, world test, {name}", scores[name].ndcg, ""))
            for name in names[1:]:
                for metric in ("recall", "ndcg"):
                    diff = abs(getattr(scores[name], metric) - getattr(scores["torch"], metric))
                    section.measures.append(Measure(f"|Δ {metric}@{K}| {name} vs torch", diff, "", at_most=0.005))

    with tempfile.TemporaryDirectory() as tmp:
        fastest = max(rate, key=rate.get)
        cached = CachedEmbedder(models[fastest], EmbeddingCache(Path(tmp) / "embeddings.sqlite"))
        start = time.perf_counter()
        cached.embed(sample)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        cached.embed(sample)
        warm = time.perf_counter() - start
        section.ratios.append(Ratio(f"embedding cache, warm vs cold ({fastest})", "cold", "warm", cold, warm, "s",
                                    higher_is_better=False))
    return section
