"""Hybrid search: a dense and a BM25 index fused by Reciprocal Rank Fusion."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np

from rag_lab.embedding import Embedder
from rag_lab.errors import ConfigError, DataFormatError
from rag_lab.index.base import (
    META_FILE,
    DenseIndex,
    Hits,
    SearchIndex,
    check_params,
    dense_kinds,
    param_names,
    pick,
    read_meta,
    reciprocal_rank_fusion,
)
from rag_lab.index.bm25 import BM25Index
from rag_lab.index.dense import HNSWIndex
from rag_lab.records import Chunk


class HybridIndex(SearchIndex):
    """Asks a dense and a BM25 index for their ``max(k, depth)`` best chunks each and fuses the two rankings with
    :func:`reciprocal_rank_fusion` (constant ``k_rrf``). Scores are RRF scores. Both components are built from the same
    chunks and saved in the subfolders ``dense/`` and ``bm25/``."""

    name: ClassVar[str] = "hybrid"
    needs_embedder: ClassVar[bool] = True

    @classmethod
    def create(cls, embedder: Embedder | str | None = None, **params: Any) -> Self:
        """A hybrid from ``params`` that may mix its own (``k_rrf``, ``depth``), ``dense_kind`` (a registered dense
        kind, default "dense") and the parameters of its dense and BM25 components, e.g. ``M=32, k1=1.2, k_rrf=60``."""
        params = dict(params)
        dense_kind = params.pop("dense_kind", HNSWIndex.name)
        dense = dense_kinds()
        if dense_kind not in dense:
            raise ConfigError(f"unknown dense_kind {dense_kind!r}; choose one of {sorted(dense)}")
        dense_cls = dense[dense_kind]
        own, dense_names, bm25_names = param_names(cls), param_names(dense_cls), param_names(BM25Index)
        check_params(cls.name, params, own | dense_names | bm25_names | {"dense_kind"})
        return cls(dense_cls.create(embedder, **pick(params, dense_names)),
                   BM25Index.create(None, **pick(params, bm25_names)), **pick(params, own))

    def __init__(self, dense: DenseIndex, bm25: BM25Index, k_rrf: float = 60, depth: int = 100) -> None:
        if k_rrf <= 0:
            raise ConfigError(f"k_rrf must be > 0, got {k_rrf}")
        if depth < 1:
            raise ConfigError(f"depth must be >= 1, got {depth}")
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
        dense = dense_kinds()
        if meta.get("dense_kind") not in dense:
            raise DataFormatError(
                Path(folder) / META_FILE, f"unknown dense_kind {meta.get('dense_kind')!r}", field="dense_kind"
            )
        dense_cls = dense[meta["dense_kind"]]
        index = cls(dense_cls.load(Path(folder) / "dense", embedder), BM25Index.load(Path(folder) / "bm25"),
                    k_rrf=meta["k_rrf"], depth=meta["depth"])
        index._restore(meta)
        return index
