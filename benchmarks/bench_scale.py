"""Scale: the 100k-document world (``rag-lab world generate --scale 150``): embedding throughput
(PyTorch vs ONNX on a sample, extrapolated), the full corpus embedded once with the fastest backend
(cached), HNSW build time and peak RSS, HNSW Recall@10 against exact search on 1,000 queries at
several ``ef_search`` values and at the default (``auto_ef_search`` of the index size, whose factor
was fitted on the 160 dev questions, so the default's recall is reported on the 840 test ones),
recall at a fixed and the default breadth on 10k and 30k random subsets (recall against size),
single-query latency p50/p99 (HNSW vs exact), BM25 build and query time, and the full pipeline on
100 questions over that corpus.

    nice -n 10 python -m benchmarks --sections scale            # --quick: scale 2 (~1.4k documents)

Expensive parts are cached under ``--work`` (default ``$RAG_LAB_CACHE/bench``): the generated world
and every chunk's vector (an embedding cache filled in slices, so an interrupted run resumes). The
HNSW build runs in a child process, so its peak RSS is the index's own (vectors + graph), not this
process's. On a shared 2-core machine a full PyTorch pass over 100k chunks takes the better part of an
hour, so its time is extrapolated from the sample; the note says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks import Measure, Ratio, Section, peak_rss_mb
from rag_lab.chunking import chunk_corpus, chunk_text_for_embedding
from rag_lab.embedding import CachedEmbedder, EmbeddingCache, SentenceTransformerEmbedder

K = 10
EF_SEARCH = (16, 32, 64, 128, 256, 384, 512)
#: The child's name for the default breadth (HNSWIndex(ef_search=None): auto_ef_search of the size).
AUTO = "auto"
N_QUERIES = 1000
#: Random subsets of the corpus on which recall is measured against size (when the corpus is larger).
SUBSET_SIZES = (10_000, 30_000)
SLICE = 2048


def world(work: Path, scale: float) -> tuple[Path, float]:
    """The cached world folder at ``scale`` (1,000 questions, 125 per type, from scale 10 up; 50 per type below, as
    a small world has too few distinct ones); seconds to generate (0 if cached)."""
    from rag_lab.world import WorldConfig, generate_world, write_world

    folder = work / f"world_scale{scale:g}"
    if (folder / "world.json").is_file():
        return folder, 0.0
    start = time.perf_counter()
    config = WorldConfig(scale=scale, questions_per_type=125 if scale >= 10 else 50, dev_per_type=20)
    write_world(generate_world(config), config, folder)
    return folder, time.perf_counter() - start


def models() -> dict[str, object]:
    found: dict[str, object] = {"torch": SentenceTransformerEmbedder()}
    try:
        from rag_lab.embedding.onnx_runtime import OnnxEmbedder

        found["onnx"] = OnnxEmbedder()
        found["onnx-int8"] = OnnxEmbedder(quantize=True)
    except Exception as exc:
        print(f"scale: no ONNX backend ({exc})")
    return found


def embed_all(model: object, texts: list[str], cache_path: Path) -> tuple[np.ndarray, float, int]:
    """Every text's vector through an on-disk cache, in slices (resumable); (vectors, seconds, misses)."""
    cached = CachedEmbedder(model, EmbeddingCache(cache_path), batch_size=SLICE)
    start = time.perf_counter()
    parts = []
    for i in range(0, len(texts), SLICE):
        parts.append(cached.embed(texts[i : i + SLICE]))
        if cached.misses and (i // SLICE) % 5 == 0:
            print(f"  embedded {i + len(parts[-1])}/{len(texts)} ({cached.misses} computed)", flush=True)
    return np.concatenate(parts), time.perf_counter() - start, cached.misses


def percentiles(seconds: list[float]) -> tuple[float, float]:
    ms = np.asarray(seconds) * 1000
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 99))


def hnsw_child(vectors_path: str, queries_path: str, ids_path: str, model_id: str, out_path: str,
               index_dir: str) -> None:
    """In a child process: build HNSW over the saved vectors, search the queries at every ef_search;
    write build seconds, peak RSS and the hits (row numbers) to ``out_path``, and save the index
    (for the full-pipeline run, which then need not build it again) to ``index_dir``."""
    vectors = np.load(vectors_path)
    queries = np.load(queries_path)
    start = time.perf_counter()
    index = hnsw_over(vectors, json.loads(Path(ids_path).read_text(encoding="utf-8")), model_id)
    build = time.perf_counter() - start
    index.build_seconds = build
    row = {chunk_id: i for i, chunk_id in enumerate(index.chunk_ids)}
    rss_after_build = peak_rss_mb()
    result: dict = {"build_seconds": build, "peak_rss_mb_build": rss_after_build, "ef": {}}
    for ef in (*EF_SEARCH, None):
        index.ef_search = ef
        index.search_vectors(queries[:5], K)  # warm
        hits, seconds = [], []
        for q in queries:
            start = time.perf_counter()
            found = index.search_vectors(q[None, :], K)[0]
            seconds.append(time.perf_counter() - start)
            hits.append([row[c] for c, _ in found])
        result["ef"][AUTO if ef is None else str(ef)] = {"hits": hits, "seconds": seconds}
    result["auto_ef"] = index.search_breadth
    result["peak_rss_mb"] = peak_rss_mb()
    index.save(index_dir)  # ef_search None: the default the pipeline run then uses
    Path(out_path).write_text(json.dumps(result), encoding="utf-8")


def hnsw_over(vectors: np.ndarray, chunk_ids: list[str], model_id: str) -> object:
    """An :class:`HNSWIndex` (default parameters) built over ready vectors, one per chunk id."""
    from rag_lab.index import HNSWIndex

    index = HNSWIndex(embedder=_NoEmbedder(vectors.shape[1], model_id))
    index.dim = vectors.shape[1]
    index._build_vectors(np.ascontiguousarray(vectors, dtype=np.float32))
    index.chunk_ids = chunk_ids
    return index


def recalls_at_k(found: list[list[int]], exact: list[set[int]]) -> np.ndarray:
    """Each query's Recall@K of the rows ``found`` against the exact top-K rows."""
    return np.array([len(set(f) & e) / K for f, e in zip(found, exact, strict=True)])


class _NoEmbedder:
    """The child searches with ready vectors only."""

    def __init__(self, dim: int, model_id: str) -> None:
        self.dim = dim
        self.model_id = model_id

    def embed(self, texts: object) -> np.ndarray:
        raise RuntimeError("the HNSW child process searches with precomputed vectors only")


def run(quick: bool, work: Path) -> Section:
    from rag_lab.index import BM25Index
    from rag_lab.loaders import load_dataset

    section = Section("scale")
    # $RAG_LAB_BENCH_SCALE overrides the world's scale (e.g. a smaller world on a busy machine); the notes say which.
    scale = float(os.environ.get("RAG_LAB_BENCH_SCALE") or (2 if quick else 150))
    folder, gen_seconds = world(work, scale)
    start = time.perf_counter()
    dataset = load_dataset(str(folder))
    chunks = chunk_corpus(dataset.corpus)
    texts = [chunk_text_for_embedding(c) for c in chunks]
    load_seconds = time.perf_counter() - start
    section.notes.append(f"world scale {scale:g}: {len(dataset.corpus):,} documents, {len(chunks):,} chunks, "
                         f"{len(dataset.evalset)} questions; generated in {gen_seconds:.0f} s (0 = cached), "
                         f"loaded + chunked in {load_seconds:.0f} s")
    section.measures.append(Measure("documents", len(dataset.corpus), ""))
    section.measures.append(Measure("chunks", len(chunks), ""))

    # Embedding throughput, side by side on the same sample (uncached), extrapolated to the corpus.
    found = models()
    for model in found.values():
        model.embed(["warm up"])
    rng = np.random.default_rng(0)
    sample = [texts[i] for i in rng.choice(len(texts), size=min(len(texts), 300 if quick else 2000), replace=False)]
    rate = {}
    for name, model in found.items():
        start = time.perf_counter()
        model.embed(sample)
        rate[name] = len(sample) / (time.perf_counter() - start)
        section.measures.append(Measure(f"embedding {name}, extrapolated to all chunks", len(texts) / rate[name] / 60,
                                        "min", note=f"{rate[name]:.0f} chunks/s on a {len(sample)}-chunk sample"))
    for name in list(found)[1:]:
        section.ratios.append(Ratio(f"world scale {scale:g} embedding throughput, {name} vs torch", "torch", name, rate["torch"],
                                    rate[name], "chunks/s", target=1.5))
    # The full pass uses int8 ONNX when there is one (the fastest backend on this kind of CPU; its accuracy
    # against PyTorch is measured by the embedding section), so the cached vectors stay valid between runs.
    fastest = "onnx-int8" if "onnx-int8" in found else max(rate, key=rate.get)
    cache_path = work / f"embeddings_scale{scale:g}.sqlite"
    vectors, seconds, computed = embed_all(found[fastest], texts, cache_path)
    section.notes.append(f"full corpus embedded with {fastest}: {computed:,} chunks "
                         f"computed in this run, {seconds / 60:.1f} min (0 computed = all from the cache "
                         f"{cache_path.name})")
    if computed == len(texts):
        section.measures.append(Measure(f"embedding {fastest}, full corpus (measured)", seconds / 60, "min"))

    questions = list(dataset.evalset)[:N_QUERIES]
    query_vectors = CachedEmbedder(found[fastest], EmbeddingCache(cache_path)).embed([q.text for q in questions])

    # Exact search: ground truth and its latency.
    exact_hits, exact_seconds = [], []
    for q in query_vectors:
        start = time.perf_counter()
        scores = vectors @ q
        top = np.argpartition(-scores, K)[:K]
        exact_seconds.append(time.perf_counter() - start)
        exact_hits.append(set(top[np.argsort(-scores[top])].tolist()))
    exact_p50, exact_p99 = percentiles(exact_seconds)

    # HNSW in a child process (its own peak RSS).
    vec_path, q_path, out_path = work / "_vectors.npy", work / "_queries.npy", work / "_hnsw.json"
    ids_path, index_dir = work / "_chunk_ids.json", work / f"hnsw_scale{scale:g}"
    np.save(vec_path, vectors)
    np.save(q_path, query_vectors)
    ids_path.write_text(json.dumps([c.chunk_id for c in chunks]), encoding="utf-8")
    model_id = CachedEmbedder(found[fastest], EmbeddingCache(cache_path)).model_id
    del vectors
    subprocess.run([sys.executable, "-c", "import sys; from benchmarks.bench_scale import hnsw_child; "
                    "hnsw_child(*sys.argv[1:])", str(vec_path), str(q_path), str(ids_path), model_id, str(out_path),
                    str(index_dir)], check=True)
    child = json.loads(out_path.read_text(encoding="utf-8"))
    test = np.array([q.split == "test" for q in questions])  # the others are dev questions
    if len(chunks) > 2 * SUBSET_SIZES[-1]:
        _recall_by_size(np.load(vec_path), query_vectors, test, model_id, section)
    for path in (vec_path, q_path, out_path, ids_path):
        path.unlink()
    section.measures.append(Measure("HNSW build (M=16, ef_construction=200, 1 thread)", child["build_seconds"], "s"))
    section.measures.append(Measure("HNSW peak RSS (child: vectors + graph + searches)", child["peak_rss_mb"], "MB",
                                    at_most=1536))
    for ef in (*EF_SEARCH, AUTO):
        entry = child["ef"][str(ef)]
        recalls = recalls_at_k(entry["hits"], exact_hits)
        p50, p99 = percentiles(entry["seconds"])
        default = ef == AUTO
        name = f"ef_search={child['auto_ef']} (default: auto for this size)" if default else f"ef_search={ef}"
        section.measures.append(Measure(f"HNSW Recall@{K} vs exact, {name}", float(recalls.mean()), "",
                                        note=f"{len(questions)} queries"))
        if default:
            section.measures.append(Measure(f"HNSW Recall@{K} vs exact, {name}, test questions only",
                                            float(recalls[test].mean()), "", at_least=0.97,
                                            note=f"{int(test.sum())} queries; the auto factor was fitted on the "
                                                 f"{int((~test).sum())} dev ones"))
        section.measures.append(Measure(f"HNSW query p50, {name}", p50, "ms"))
        section.measures.append(Measure(f"HNSW query p99, {name}", p99, "ms", at_most=5.0 if default else None))
        if default:
            section.ratios.append(Ratio("vector search p50 latency, HNSW (default ef) vs exact", "exact", "hnsw",
                                        exact_p50, p50, "ms", higher_is_better=False))
    section.measures.append(Measure("exact query p50 / p99", exact_p50, "ms", note=f"p99 {exact_p99:.2f} ms"))

    # BM25.
    bm25 = BM25Index()
    start = time.perf_counter()
    bm25.build(chunks)
    section.measures.append(Measure("BM25 build", time.perf_counter() - start, "s"))
    bm_seconds = []
    for q in questions:
        start = time.perf_counter()
        bm25.search([q.text], K)
        bm_seconds.append(time.perf_counter() - start)
    p50, p99 = percentiles(bm_seconds)
    section.measures.append(Measure("BM25 query p50", p50, "ms", note=f"p99 {p99:.1f} ms"))

    # The full pipeline on 100 questions (default config: hybrid retrieval over the HNSW index built above
    # and this BM25 index, simulated LLM).
    section.measures.append(_full_pipeline(dataset, found[fastest], cache_path, index_dir, bm25,
                                           20 if quick else 100, section))
    section.measures.append(Measure("peak RSS of the benchmark process", peak_rss_mb(), "MB",
                                    note="world + chunks + vectors + BM25 + pipeline"))
    return section


def _recall_by_size(vectors: np.ndarray, queries: np.ndarray, test: np.ndarray, model_id: str,
                    section: Section) -> None:
    """Recall@10 vs exact at a fixed ef_search=64 and at the index's default, on random subsets of the
    corpus (the data behind :func:`auto_ef_search`: a fixed breadth loses recall as the graph grows),
    for the test questions and the dev ones (which fitted its factor)."""
    rng = np.random.default_rng(0)
    for size in SUBSET_SIZES:
        subset = vectors[np.sort(rng.choice(len(vectors), size, replace=False))]
        index = hnsw_over(subset, [str(i) for i in range(size)], model_id)
        scores = queries @ subset.T
        exact = [set(row.tolist()) for row in np.argpartition(-scores, K, axis=1)[:, :K]]
        for ef in (64, None):
            index.ef_search = ef
            found = [[int(c) for c, _ in hits] for hits in index.search_vectors(queries, K)]
            recalls = recalls_at_k(found, exact)
            section.measures.append(Measure(
                f"HNSW Recall@{K} vs exact on a random {size:,}-vector subset, ef_search={index.search_breadth}"
                f"{' (its default)' if ef is None else ''}", float(recalls[test].mean()), "",
                note=f"test questions; dev questions {recalls[~test].mean():.3f}"))


def _full_pipeline(dataset: object, model: object, cache_path: Path, index_dir: Path, bm25: object, n: int,
                   section: Section) -> Measure:
    from rag_lab.evaluation import evaluate_pipeline, summarize
    from rag_lab.index import HNSWIndex, HybridIndex
    from rag_lab.llm.factory import make_backend
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

    evalset = dataset.evalset.select(split="test", limit=n)
    start = time.perf_counter()
    embedder = CachedEmbedder(model, EmbeddingCache(cache_path))
    resources = CorpusResources(dataset.corpus, embedder=embedder)
    # The pipeline's hybrid index, made of the indexes measured above instead of building them again.
    hybrid = HybridIndex(HNSWIndex.load(index_dir, embedder), bm25)
    hybrid.chunk_ids = list(bm25.chunk_ids)
    resources._indexes["hybrid"] = hybrid
    pipeline = Pipeline(PipelineConfig(), resources, make_backend("sim", cache=False))
    pipeline.run(evalset.questions[0])  # warm: loads the models
    setup = time.perf_counter() - start
    start = time.perf_counter()
    run = evaluate_pipeline(pipeline, evalset)
    seconds = time.perf_counter() - start
    overall = summarize(run.rows)["overall"]
    section.notes.append(f"full pipeline on {len(evalset)} test questions: set-up {setup:.0f} s (hybrid over the HNSW "
                         f"and BM25 indexes measured above), then {seconds:.0f} s; answer containment "
                         f"{overall.get('quality_answer_containment', float('nan')):.3f}, has-answer in context "
                         f"{overall.get('quality_has_answer_in_context', float('nan')):.3f}, "
                         f"LLM calls/question {overall.get('cost_llm_calls', float('nan')):.2f}")
    return Measure(f"full pipeline, {len(evalset)} questions (after index set-up)", seconds / len(evalset), "s/question")
