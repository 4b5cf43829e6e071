"""Search indexes over chunks: exact and HNSW dense search, BM25, and their RRF hybrid.

``build_index(kind, chunks, embedder, **params)`` makes and builds one;
``load_index(folder)`` reads back any saved index."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rag_lab.embedding import Embedder
from rag_lab.errors import DataFormatError
from rag_lab.index.base import (
    INDEX_KINDS,
    META_FILE,
    DenseIndex,
    Hits,
    SearchIndex,
    doc_run,
    read_meta,
    reciprocal_rank_fusion,
    top_k,
)
from rag_lab.index.bm25 import BM25Index
from rag_lab.index.dense import HNSWIndex
from rag_lab.index.exact import ExactIndex
from rag_lab.index.hybrid import HybridIndex
from rag_lab.records import Chunk

# The index kinds (INDEX_KINDS, defined in rag_lab.index.base): a new kind is one SearchIndex subclass and one line.
INDEX_KINDS.add(HNSWIndex.name, HNSWIndex)
INDEX_KINDS.add(ExactIndex.name, ExactIndex)
INDEX_KINDS.add(BM25Index.name, BM25Index)
INDEX_KINDS.add(HybridIndex.name, HybridIndex)
#: The type of a field that names an index kind (checked against :data:`INDEX_KINDS` when validated).
IndexKind = INDEX_KINDS.field()

__all__ = ["INDEX_KINDS", "IndexKind", "BM25Index", "DenseIndex", "ExactIndex", "HNSWIndex", "Hits", "HybridIndex",
           "SearchIndex", "build_index", "doc_run", "load_index", "make_index", "reciprocal_rank_fusion", "top_k"]


def make_index(kind: str, embedder: Embedder | str | None = None, **params: Any) -> SearchIndex:
    """An unbuilt index of ``kind`` (a name in :data:`INDEX_KINDS`: "dense", "exact", "bm25", "hybrid", ...),
    made by its class's :meth:`~SearchIndex.create` from ``params`` (for "hybrid" see
    :meth:`HybridIndex.create`). Indexes that embed use ``embedder``."""
    return INDEX_KINDS[kind].create(embedder, **params)  # UnknownName (a ConfigError, so a ValueError) lists the kinds


def build_index(kind: str, chunks: Sequence[Chunk], embedder: Embedder | str | None = None,
                **params: Any) -> SearchIndex:
    """An index of ``kind`` built over ``chunks`` (see :func:`make_index` for ``params``).
    Dense kinds embed with ``embedder``, by default the cached packaged MiniLM."""
    index = make_index(kind, embedder, **params)
    index.build(chunks)
    return index


def load_index(folder: str | Path, embedder: Embedder | str | None = None) -> SearchIndex:
    """Any index saved with ``save``, of whatever kind its folder records."""
    meta = read_meta(folder)
    if meta["kind"] not in INDEX_KINDS:
        raise DataFormatError(Path(folder) / META_FILE, f"unknown index kind {meta['kind']!r}", field="kind")
    return INDEX_KINDS[meta["kind"]].load(folder, embedder)
