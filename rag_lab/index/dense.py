"""Approximate dense search with an HNSW graph (hnswlib)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import ClassVar, Self

import hnswlib
import numpy as np

from rag_lab.embedding import Embedder
from rag_lab.errors import ConfigError
from rag_lab.index.base import DenseIndex, Hits, read_meta, require_files, saved_embedder

_GRAPH = "hnsw.bin"


def auto_ef_search(size: int) -> int:
    """The default search breadth for a graph of ``size`` vectors: ``max(64, ceil(1.2 * sqrt(size)))`` (64 for every
    shipped dataset; at a fixed breadth recall against exact search falls as the graph grows). The factor was fitted
    on the 100k-document world's dev questions (docs/benchmarks.md, ``benchmarks/bench_scale.py``)."""
    return max(64, math.ceil(1.2 * math.sqrt(size)))


class HNSWIndex(DenseIndex):
    """Chunk embeddings in an hnswlib graph over inner product (cosine for unit vectors). ``M``: the graph degree;
    ``ef_construction`` / ``ef_search``: the candidate list size while building / searching (``ef_search`` is raised
    to ``k`` when smaller; None sizes it with :func:`auto_ef_search`); ``seed``: the graph's seed. A build with
    several threads is not reproducible, so ``num_threads`` is 1 unless told otherwise (``-1``: all cores); searching
    uses all cores and is reproducible."""

    name: ClassVar[str] = "dense"

    def __init__(self, embedder: Embedder | str | None = None, M: int = 16, ef_construction: int = 200,
                 ef_search: int | None = None, seed: int = 100, num_threads: int = 1) -> None:
        if not 2 <= M <= 128:
            raise ConfigError(f"M must be in 2..128, got {M}")
        if ef_construction < 1:
            raise ConfigError(f"ef_construction must be >= 1, got {ef_construction}")
        if ef_search is not None and ef_search < 1:
            raise ConfigError(f"ef_search must be >= 1, got {ef_search}")
        if seed < 0:
            raise ConfigError(f"seed must be >= 0, got {seed}")
        if num_threads < 1 and num_threads != -1:
            raise ConfigError(f"num_threads must be >= 1 or -1 (all cores), got {num_threads}")
        super().__init__(embedder)
        self.M = M
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.seed = seed
        self.num_threads = num_threads
        self._graph: hnswlib.Index | None = None

    @property
    def search_breadth(self) -> int:
        """The ``ef`` searches use: ``ef_search``, or :func:`auto_ef_search` of the index size."""
        return self.ef_search if self.ef_search is not None else auto_ef_search(len(self))

    def _build_vectors(self, vectors: np.ndarray) -> None:
        graph = hnswlib.Index(space="ip", dim=vectors.shape[1])
        graph.init_index(
            max_elements=len(vectors), M=self.M, ef_construction=self.ef_construction, random_seed=self.seed
        )
        graph.add_items(vectors, np.arange(len(vectors)), num_threads=self.num_threads)
        self._graph = graph

    def _search_vectors(self, vectors: np.ndarray, k: int) -> list[Hits]:
        assert self._graph is not None
        self._graph.set_ef(max(self.search_breadth, k))
        labels, distances = self._graph.knn_query(vectors, k=k)
        # hnswlib's "ip" distance is 1 - <a, b>.
        return [self._hits(row, 1.0 - dist) for row, dist in zip(labels, distances, strict=True)]

    def save(self, folder: str | Path) -> Path:
        self._require_built()
        assert self._graph is not None
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self._graph.save_index(str(folder / _GRAPH))
        return self._write_meta(folder, params=self.params)

    @classmethod
    def load(cls, folder: str | Path, embedder: Embedder | str | None = None) -> Self:
        meta = read_meta(folder, cls.name)
        require_files(folder, _GRAPH)
        index = cls(saved_embedder(meta, embedder), **meta["params"])
        index._restore(meta)
        graph = hnswlib.Index(space="ip", dim=index.dim)
        graph.load_index(str(Path(folder) / _GRAPH), max_elements=len(index))
        index._graph = graph
        return index
