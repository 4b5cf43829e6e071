"""Build the vectors a dataset folder ships (``vectors/<model>.npz``, read by
:mod:`rag_lab.embedding.shipped`): every text a run on the dataset embeds, embedded by the packaged model.

    rag-lab data build-vectors data/world"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rag_lab.chunking import chunk_corpus, chunk_text_for_embedding
from rag_lab.embedding import Embedder, EmbeddingCache, model_embedder
from rag_lab.embedding.shipped import vector_file
from rag_lab.llm.sim.text import sentences
from rag_lab.loaders import load_dataset


def dataset_texts(dataset_dir: str | Path) -> list[str]:
    """The texts every run on this dataset embeds, in a fixed order, without repeats: each chunk as the
    indexes see it (default chunking), each sentence of a chunk as the simulator reads it, each question."""
    dataset = load_dataset(str(dataset_dir))
    chunks = chunk_corpus(dataset.corpus)
    texts = [chunk_text_for_embedding(c) for c in chunks]
    texts += [s for c in chunks for s in sentences(c.text)]
    texts += [q.text for q in dataset.evalset]
    return list(dict.fromkeys(t for t in texts if t.strip()))


def write_vector_file(dataset_dir: str | Path, embedder: Embedder | None = None, batch_size: int = 256) -> Path:
    """Embed :func:`dataset_texts` with ``embedder`` (default: the packaged model on PyTorch,
    uncached) and write them to :func:`~rag_lab.embedding.shipped.vector_file`; returns the path."""
    model = embedder if embedder is not None else model_embedder("torch")
    texts = dataset_texts(dataset_dir)
    vectors = np.concatenate([model.embed(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)])
    keys = np.array([EmbeddingCache.key(model.model_id, t) for t in texts], dtype="S64")
    path = vector_file(dataset_dir, model.model_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, keys=keys, vectors=np.asarray(vectors, dtype=np.float32))
    return path
