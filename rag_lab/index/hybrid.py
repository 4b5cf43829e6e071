"""Hybrid search: a dense and a BM25 index fused by Reciprocal Rank Fusion."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Self

import numpy as np

from rag_lab.embedding import Embedder
from rag_lab.errors import DataFormatError
from rag_lab.index.base import META_FILE, DenseIndex, Hits, SearchIndex, read_meta, reciprocal_rank_fusion
from rag_lab.index.bm25 import BM25Index
from rag_lab.index.dense import HNSWIndex
from rag_lab.index.exact import ExactIndex
from rag_lab.records import Chunk

#: Dense index classes a hybrid can use, by kind.
DENSE_KINDS: dict[str, type[DenseIndex]] = {HNSWIndex.name: HNSWIndex, ExactIndex.name: ExactIndex}


class HybridIndex(SearchIndex):
    """Asks a dense and a BM25 index for their ``max(k, depth)`` best chunks each and fuses
    the two rankings with :func:`reciprocal_rank_fusion` (constant ``k_rrf``). Scores are
    RRF scores. Both components are built from the same chunks and saved in the
    subfolders ``dense/`` and ``bm25/``."""

    name: ClassVar[str] = "hybrid"

    def __init__(self, dense: DenseIndex, bm25: BM25Index, k_rrf: float = 60, depth: int = 100) -> None:
        if k_rrf <= 0:
            raise ValueError(f"k_rrf must be > 0, got {k_rrf}")
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        super().__init__()
        self.dense = dense
        self.bm25 = bm25
        self.k_rrf = k_rrf
        self.depth = depth

    def _build(self, chunks: Sequence[Chunk]) -> None:
        self.dense.build(chunks)
        self.bm25.build(chunks)

    def _search(self, queries: list[str], k: int) -> list[Hits]:
        depth = max(k, self.depth)
        dense_hits = self.dense.search(queries, depth)
        bm25_hits = self.bm25.search(queries, depth)
        return [self.fuse(d, b, k) for d, b in zip(dense_hits, bm25_hits, strict=True)]

    def search_vector(self, vector: np.ndarray, text: str, k: int) -> Hits:
        """Fuse the dense ranking of a ready unit ``vector`` (e.g. HyDE's mean embedding) with the
        BM25 ranking of ``text``."""
        self._check_search(k)
        depth = max(k, self.depth)
        return self.fuse(self.dense.search_vectors(vector[None, :], depth)[0], self.bm25.search([text], depth)[0], k)

    def fuse(self, dense_hits: Hits, bm25_hits: Hits, k: int) -> Hits:
        """The ``k`` best chunks of two rankings by Reciprocal Rank Fusion (constant ``k_rrf``)."""
        return reciprocal_rank_fusion([[c for c, _ in dense_hits], [c for c, _ in bm25_hits]], k=self.k_rrf)[:k]

    def save(self, folder: str | Path) -> Path:
        self._require_built()
        folder = Path(folder)
        self.dense.save(folder / "dense")
        self.bm25.save(folder / "bm25")
        return self._write_meta(folder, k_rrf=self.k_rrf, depth=self.depth, dense_kind=self.dense.name)

    @classmethod
    def load(cls, folder: str | Path, embedder: Embedder | str | None = None) -> Self:
        meta = read_meta(folder, cls.name)
        if meta.get("dense_kind") not in DENSE_KINDS:
            raise DataFormatError(
                Path(folder) / META_FILE, f"unknown dense_kind {meta.get('dense_kind')!r}", field="dense_kind"
            )
        dense_cls = DENSE_KINDS[meta["dense_kind"]]
        index = cls(
            dense_cls.load(Path(folder) / "dense", embedder),
            BM25Index.load(Path(folder) / "bm25"),
            k_rrf=meta["k_rrf"],
            depth=meta["depth"],
        )
        index._restore(meta)
        return index
