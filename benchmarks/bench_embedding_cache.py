"""Time embedding N synthetic texts with the packaged MiniLM: cold (all misses), warm
(all hits from the SQLite cache) and warm through a fresh cache object (a new process
would see the same).

    HF_HUB_OFFLINE=1 python benchmarks/bench_embedding_cache.py --texts 500
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from rag_lab.embedding import CachedEmbedder, EmbeddingCache, SentenceTransformerEmbedder, packaged_model_path


def synthetic_texts(n: int, words: int, seed: int) -> list[str]:
    """``n`` distinct texts of ``words`` random whole words from the model's vocabulary."""
    vocab = (packaged_model_path() / "vocab.txt").read_text(encoding="utf-8").split()
    whole_words = [w for w in vocab if w.isalpha() and w.islower() and len(w) > 3]
    rng = np.random.default_rng(seed)
    return [f"{i} " + " ".join(rng.choice(whole_words, size=words)) for i in range(n)]


def timed(embedder: CachedEmbedder, texts: list[str]) -> float:
    start = time.perf_counter()
    embedder.embed(texts)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--texts", type=int, default=500, help="number of texts (default 500)")
    parser.add_argument("--words", type=int, default=60, help="words per text (default 60)")
    args = parser.parse_args()

    texts = synthetic_texts(args.texts, args.words, seed=0)
    model = SentenceTransformerEmbedder()
    model.embed(["warm up"])  # load the model outside the timings
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "embeddings.sqlite"
        cached = CachedEmbedder(model, EmbeddingCache(path))
        cold = timed(cached, texts)
        warm = timed(cached, texts)
        reopened = CachedEmbedder(model, EmbeddingCache(path))
        fresh = timed(reopened, texts)
        size_mb = path.stat().st_size / 1e6
    print(f"{args.texts} texts x {args.words} words, model {model.model_id}")
    print(f"cold  (embed + store): {cold:8.3f} s  ({args.texts / cold:8.0f} texts/s)")
    print(f"warm  (cache hits):    {warm:8.3f} s  ({args.texts / warm:8.0f} texts/s)  hits={cached.hits}")
    print(f"fresh cache object:    {fresh:8.3f} s  hits={reopened.hits} misses={reopened.misses}")
    print(f"cache file: {size_mb:.1f} MB")


if __name__ == "__main__":
    main()
