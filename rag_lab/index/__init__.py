"""Search indexes over chunks: exact and HNSW dense search, BM25, and their RRF hybrid.

``build_index(kind, chunks, embedder, **params)`` makes and builds one;
``load_index(folder)`` reads back any saved index.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rag_lab.embedding import Embedder
from rag_lab.errors import DataFormatError
from rag_lab.index.base import (
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
from rag_lab.index.hybrid import DENSE_KINDS, HybridIndex
from rag_lab.records import Chunk
from rag_lab.registry import Registry

#: Index classes by kind: the one list of index kinds. The retrieval policy's ``retriever`` field,
#: ``rag-lab retrieval-eval --retriever`` and the index contract test derive theirs from it; a new kind is
#: one :class:`SearchIndex` subclass and one line here.
INDEX_KINDS: Registry[type[SearchIndex]] = Registry("index kind")
INDEX_KINDS.add(HNSWIndex.name, HNSWIndex)
INDEX_KINDS.add(ExactIndex.name, ExactIndex)
INDEX_KINDS.add(BM25Index.name, BM25Index)
INDEX_KINDS.add(HybridIndex.name, HybridIndex)
#: The type of a field that names an index kind (checked against :data:`INDEX_KINDS` when validated).
IndexKind = INDEX_KINDS.field()

__all__ = [
    "INDEX_KINDS",
    "IndexKind",
    "BM25Index",
    "DenseIndex",
    "ExactIndex",
    "HNSWIndex",
    "Hits",
    "HybridIndex",
    "SearchIndex",
    "build_index",
    "doc_run",
    "load_index",
    "make_index",
    "reciprocal_rank_fusion",
    "top_k",
]


def make_index(kind: str, embedder: Embedder | str | None = None, **params: Any) -> SearchIndex:
    """An unbuilt index of ``kind`` (a name in :data:`INDEX_KINDS`: "dense", "exact", "bm25", "hybrid", ...).

    ``params`` go to the index class. For "hybrid" they may mix the hybrid's own
    (``k_rrf``, ``depth``), ``dense_kind`` ("dense" or "exact", default "dense"), and the
    parameters of its dense and BM25 components, e.g. ``M=32, k1=1.2, k_rrf=60``.
    """
    cls = INDEX_KINDS[kind]  # UnknownName (a ConfigError, so a ValueError) lists the kinds
    if cls is HybridIndex:
        return _make_hybrid(embedder, params)
    _check_params(kind, params, _param_names(cls))
    if issubclass(cls, DenseIndex):
        return cls(embedder, **params)
    return cls(**params)


def build_index(
    kind: str, chunks: Sequence[Chunk], embedder: Embedder | str | None = None, **params: Any
) -> SearchIndex:
    """An index of ``kind`` built over ``chunks`` (see :func:`make_index` for ``params``).
    Dense kinds embed with ``embedder``, by default the cached packaged MiniLM."""
    index = make_index(kind, embedder, **params)
    index.build(chunks)
    return index


def load_index(folder: str | Path, embedder: Embedder | str | None = None) -> SearchIndex:
    """Any index saved with ``save``, of whatever kind its folder records."""
    meta = read_meta(folder)
    if meta["kind"] not in INDEX_KINDS:
        raise DataFormatError(
            Path(folder) / META_FILE, f"unknown index kind {meta['kind']!r}", field="kind"
        )
    return INDEX_KINDS[meta["kind"]].load(folder, embedder)


def _make_hybrid(embedder: Embedder | str | None, params: dict[str, Any]) -> HybridIndex:
    dense_kind = params.pop("dense_kind", HNSWIndex.name)
    if dense_kind not in DENSE_KINDS:
        raise ValueError(f"unknown dense_kind {dense_kind!r}; choose one of {sorted(DENSE_KINDS)}")
    dense_cls = DENSE_KINDS[dense_kind]
    own, dense_names, bm25_names = _param_names(HybridIndex), _param_names(dense_cls), _param_names(BM25Index)
    _check_params("hybrid", params, own | dense_names | bm25_names | {"dense_kind"})
    return HybridIndex(
        dense_cls(embedder, **_pick(params, dense_names)),
        BM25Index(**_pick(params, bm25_names)),
        **_pick(params, own),
    )


def _pick(params: dict[str, Any], names: set[str]) -> dict[str, Any]:
    return {key: value for key, value in params.items() if key in names}


def _param_names(cls: type) -> set[str]:
    skip = {"self", "embedder", "dense", "bm25"}
    return {name for name in inspect.signature(cls.__init__).parameters if name not in skip}


def _check_params(kind: str, params: dict[str, Any], accepted: set[str]) -> None:
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for a {kind!r} index; accepted: {sorted(accepted)}")
