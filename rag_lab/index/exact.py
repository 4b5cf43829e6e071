"""Exact (brute-force) dense search: the ground truth that approximate indexes are measured against."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Self

import numpy as np

from rag_lab.embedding import Embedder
from rag_lab.errors import DataFormatError
from rag_lab.index.base import DenseIndex, Hits, read_meta, require_files, saved_embedder, top_k

_VECTORS = "vectors.npy"
#: Queries scored per matrix product, bounding memory to block x chunks floats.
_QUERY_BLOCK = 64


class ExactIndex(DenseIndex):
    """All chunk embeddings in one matrix; a query scores every chunk by inner product
    (cosine, as embeddings are unit length) and keeps the top k."""

    name: ClassVar[str] = "exact"

    def __init__(self, embedder: Embedder | str | None = None) -> None:
        super().__init__(embedder)
        self.vectors = np.zeros((0, 0), dtype=np.float32)

    def _build_vectors(self, vectors: np.ndarray) -> None:
        self.vectors = vectors

    def _search_vectors(self, vectors: np.ndarray, k: int) -> list[Hits]:
        hits = []
        for start in range(0, len(vectors), _QUERY_BLOCK):
            for row in vectors[start : start + _QUERY_BLOCK] @ self.vectors.T:
                best = top_k(row, k)
                hits.append(self._hits(best, row[best]))
        return hits

    def save(self, folder: str | Path) -> Path:
        self._require_built()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / _VECTORS, self.vectors, allow_pickle=False)
        return self._write_meta(folder)

    @classmethod
    def load(cls, folder: str | Path, embedder: Embedder | str | None = None) -> Self:
        meta = read_meta(folder, cls.name)
        require_files(folder, _VECTORS)
        index = cls(saved_embedder(meta, embedder))
        index._restore(meta)
        path = Path(folder) / _VECTORS
        index.vectors = np.load(path, allow_pickle=False)
        if index.vectors.shape != (len(index), index.dim):
            raise DataFormatError(
                path, f"shape {index.vectors.shape} does not match {len(index)} chunks of dimension {index.dim}")
        return index
