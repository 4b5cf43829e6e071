"""The search-index interface, its dense specialisation, and helpers shared by all indexes:
top-k selection, reciprocal rank fusion, chunk-to-document runs and the on-disk meta file."""

from __future__ import annotations

import inspect
import json
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np

from rag_lab.chunking import chunk_text_for_embedding
from rag_lab.embedding import Embedder, normalize_rows, resolve_embedder
from rag_lab.errors import ConfigError, DataFormatError
from rag_lab.records import Chunk, Run
from rag_lab.registry import Registry

#: One query's hits: ``(chunk_id, score)`` pairs, best first.
Hits = list[tuple[str, float]]

#: Name of the JSON file every saved index folder holds.
META_FILE = "index.json"
#: Version of the saved-index layout; bumped when it changes incompatibly.
FORMAT_VERSION = 1


class SearchIndex(ABC):
    """A searchable collection of chunks. Scores are higher-is-better and comparable only within one index.
    ``build_seconds`` is the wall time of the last ``build`` (embedding included), kept across ``save``/``load``."""

    name: ClassVar[str]
    #: Whether the index embeds text (it is made with an embedder; a retrieval evaluation loads one for it).
    needs_embedder: ClassVar[bool] = False

    @classmethod
    def create(cls, embedder: Embedder | str | None = None, **params: Any) -> Self:
        """An unbuilt index of this class from :func:`rag_lab.index.make_index`'s ``params`` (the
        constructor's; any other is an error naming the accepted ones). ``embedder`` is for indexes that
        embed; this one has no use for it."""
        check_params(cls.name, params, param_names(cls))
        return cls(**params)

    def __init__(self) -> None:
        self.chunk_ids: list[str] = []
        self.build_seconds: float = 0.0

    def build(self, chunks: Sequence[Chunk]) -> None:
        """Index ``chunks``, replacing whatever the index held before."""
        if not chunks:
            raise ConfigError(f"cannot build a {self.name} index from zero chunks")
        ids = [chunk.chunk_id for chunk in chunks]
        dupes = sorted(i for i, n in Counter(ids).items() if n > 1)
        if dupes:
            raise ConfigError(f"{len(dupes)} duplicate chunk id(s), e.g. {dupes[:5]}")
        start = time.perf_counter()
        self._build(chunks)
        self.build_seconds = time.perf_counter() - start
        self.chunk_ids = ids

    def search(self, queries: Sequence[str], k: int) -> list[Hits]:
        """For each query, at most ``k`` ``(chunk_id, score)`` pairs, best first."""
        self._check_search(k)
        if not queries:
            return []
        return self._search(list(queries), k)

    @abstractmethod
    def _build(self, chunks: Sequence[Chunk]) -> None: ...

    @abstractmethod
    def _search(self, queries: list[str], k: int) -> list[Hits]: ...

    @abstractmethod
    def save(self, folder: str | Path) -> Path:
        """Write the index to ``folder`` (created if needed) and return its path."""

    @classmethod
    @abstractmethod
    def load(cls, folder: str | Path, embedder: Embedder | str | None = None) -> Self:
        """Read an index written by ``save``. Dense indexes embed queries with ``embedder`` (default:
        :func:`rag_lab.embedding.default_embedder`), which must be the model and backend the index was built with."""

    @property
    def params(self) -> dict[str, Any]:
        """The construction parameters (:func:`param_names`, in the constructor's order), as saved with the index."""
        return {name: getattr(self, name) for name in inspect.signature(type(self).__init__).parameters
                if name in param_names(type(self))}

    def __len__(self) -> int:
        return len(self.chunk_ids)

    def _require_built(self) -> None:
        if not self.chunk_ids:
            raise RuntimeError(f"the {self.name} index is empty: build or load it first")

    def _check_search(self, k: int) -> None:
        self._require_built()
        check_k(k)

    def _hits(self, rows: np.ndarray, scores: np.ndarray) -> Hits:
        return [(self.chunk_ids[int(i)], float(s)) for i, s in zip(rows, scores, strict=True)]

    def _write_meta(self, folder: str | Path, **fields: Any) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        meta = {"kind": self.name, "format_version": FORMAT_VERSION, "build_seconds": self.build_seconds,
                "chunk_ids": self.chunk_ids, **fields}
        (folder / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
        return folder

    def _restore(self, meta: Mapping[str, Any]) -> None:
        self.chunk_ids = list(meta["chunk_ids"])
        self.build_seconds = float(meta["build_seconds"])


class DenseIndex(SearchIndex):
    """An index over chunk embeddings (inner product of unit vectors = cosine similarity). It embeds chunks and queries
    with ``embedder`` and can also be searched with ready vectors, e.g. the mean embedding of hypothetical documents
    (HyDE). ``embedder`` is an :class:`Embedder`, a backend name of the packaged model (``"torch"``, ``"onnx"``,
    ``"onnx-int8"``, cached on disk) or None for the process default (``$RAG_LAB_EMBEDDER``)."""

    needs_embedder: ClassVar[bool] = True

    @classmethod
    def create(cls, embedder: Embedder | str | None = None, **params: Any) -> Self:
        check_params(cls.name, params, param_names(cls))
        return cls(embedder, **params)

    def __init__(self, embedder: Embedder | str | None = None) -> None:
        super().__init__()
        self.embedder = resolve_embedder(embedder)
        self.model_id = self.embedder.model_id
        self.dim = 0

    def _build(self, chunks: Sequence[Chunk]) -> None:
        vectors = self.embedder.embed([chunk_text_for_embedding(chunk) for chunk in chunks])
        self.dim = int(vectors.shape[1])
        self._build_vectors(np.ascontiguousarray(vectors, dtype=np.float32))

    def _search(self, queries: list[str], k: int) -> list[Hits]:
        return self.search_vectors(self.embedder.embed(queries), k)

    def search_vectors(self, vectors: np.ndarray, k: int) -> list[Hits]:
        """For each row of ``vectors`` (shape ``(n, dim)``), at most ``k`` ``(chunk_id, cosine)`` pairs, best first.
        Rows are normalized first, so a mean of embeddings can be passed as is."""
        self._check_search(k)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ConfigError(f"query vectors must have shape (n, {self.dim}), got {vectors.shape}")
        if len(vectors) == 0:
            return []
        return self._search_vectors(np.ascontiguousarray(normalize_rows(vectors)), min(k, len(self)))

    @abstractmethod
    def _build_vectors(self, vectors: np.ndarray) -> None: ...

    @abstractmethod
    def _search_vectors(self, vectors: np.ndarray, k: int) -> list[Hits]:
        """Search with ``1 <= k <= len(self)``."""

    def _write_meta(self, folder: str | Path, **fields: Any) -> Path:
        return super()._write_meta(folder, model_id=self.model_id, dim=self.dim, **fields)

    def _restore(self, meta: Mapping[str, Any]) -> None:
        if meta["model_id"] != self.model_id:
            raise ConfigError(
                f"the index was built with embedding model {meta['model_id']!r} but the embedder "
                f"is {self.model_id!r}; pass an embedder of the same model to load()"
            )
        super()._restore(meta)
        self.dim = int(meta["dim"])


def saved_embedder(meta: Mapping[str, Any], embedder: Embedder | str | None) -> Embedder | str | None:
    """The embedder to load a saved dense index with: ``embedder`` when given, else the packaged
    model's backend recorded in the index's ``model_id`` (``…#onnx`` → ``"onnx"``), else None."""
    if embedder is not None:
        return embedder
    _, _, backend = str(meta.get("model_id", "")).partition("#")
    return backend or None


def check_k(k: int) -> None:
    """Refuse a cut-off below 1 (a search's, a run's or a retrieval metric's ``k``)."""
    if k < 1:
        raise ConfigError(f"k must be >= 1, got {k}")


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest ``scores``, best first; ties go to the lower position."""
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k < len(scores):
        # The k-th best score, then everything at least as good (ties included) so the
        # tie-break below is exact rather than left to argpartition.
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        candidates = np.flatnonzero(scores >= kth)
    else:
        candidates = np.arange(len(scores))
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order[:k]]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: float = 60) -> list[tuple[str, float]]:
    """Fuse ranked id lists by Reciprocal Rank Fusion: ``score(id) = Σ 1 / (k + rank)`` over the rankings that contain
    ``id`` (rank 1-based; a repeated id counts at its best rank). Returns ``(id, score)`` best first; ties keep the
    order in which ids first appear when the rankings are read rank by rank (round robin)."""
    if k <= 0:
        raise ConfigError(f"RRF constant k must be > 0, got {k}")
    scores: dict[str, float] = {}
    first_seen: dict[str, tuple[int, int]] = {}
    for list_no, ranking in enumerate(rankings):
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
            first_seen[item] = min(first_seen.get(item, (rank, list_no)), (rank, list_no))
    return sorted(scores.items(), key=lambda pair: (-pair[1], first_seen[pair[0]]))


def doc_run(hits_per_query: Mapping[str, Sequence[tuple[str, float]]], chunk_to_doc: Mapping[str, str], k: int) -> Run:
    """Chunk hits turned into a BEIR run ``{qid: {doc_id: score}}``: a document scores its best chunk, and each query
    keeps its ``k`` best documents (in rank order; ties keep hit order)."""
    check_k(k)
    run: Run = {}
    for qid, hits in hits_per_query.items():
        best: dict[str, float] = {}
        for chunk_id, score in hits:
            try:
                doc_id = chunk_to_doc[chunk_id]
            except KeyError:
                raise KeyError(f"query {qid!r}: chunk {chunk_id!r} is not in chunk_to_doc") from None
            if doc_id not in best or score > best[doc_id]:
                best[doc_id] = score
        ranked = sorted(best.items(), key=lambda pair: -pair[1])[:k]
        run[qid] = dict(ranked)
    return run


def read_meta(folder: str | Path, kind: str | None = None) -> dict[str, Any]:
    """The meta data of a saved index folder, checked to be of ``kind`` when given."""
    folder = Path(folder)
    path = folder / META_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no saved index in {folder}: {META_FILE} is missing")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise DataFormatError(path, f"not valid JSON ({err.msg})", line=err.lineno) from None
    if not isinstance(meta, dict) or "kind" not in meta:
        raise DataFormatError(path, "not a saved index (no 'kind')")
    if kind is not None and meta["kind"] != kind:
        raise DataFormatError(path, f"holds a {meta['kind']!r} index, expected {kind!r}", field="kind")
    if meta.get("format_version") != FORMAT_VERSION:
        raise DataFormatError(
            path, f"saved with layout version {meta.get('format_version')!r}; this rag_lab reads {FORMAT_VERSION}",
            field="format_version")
    return meta


def require_files(folder: str | Path, *names: str) -> None:
    """Fail with one clear message if a saved index folder lacks any of ``names``."""
    missing = [name for name in names if not (Path(folder) / name).exists()]
    if missing:
        raise FileNotFoundError(f"incomplete saved index in {folder}: missing {', '.join(missing)}")


#: Index classes by kind: the one list of index kinds (registered in :mod:`rag_lab.index`). The retrieval
#: policy's ``retriever`` field, ``rag-lab retrieval-eval --retriever``, the hybrid's ``dense_kind`` and the
#: index contract test derive theirs from it; a new kind is one :class:`SearchIndex` subclass and one line.
INDEX_KINDS: Registry[type[SearchIndex]] = Registry("index kind")


def dense_kinds() -> dict[str, type[DenseIndex]]:
    """The registered kinds that are :class:`DenseIndex` subclasses (what a hybrid's ``dense_kind`` names)."""
    return {name: cls for name, cls in INDEX_KINDS.items() if issubclass(cls, DenseIndex)}


def param_names(cls: type) -> set[str]:
    """The constructor parameters of an index class that ``make_index`` passes on (not its components)."""
    skip = {"self", "embedder", "dense", "bm25"}
    return {name for name in inspect.signature(cls.__init__).parameters if name not in skip}


def check_params(kind: str, params: Mapping[str, Any], accepted: set[str]) -> None:
    """A :class:`~rag_lab.errors.ConfigError` naming the unknown ``params`` of a ``kind`` index and the accepted ones."""
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise ConfigError(f"unknown parameter(s) {unknown} for a {kind!r} index; accepted: {sorted(accepted)}")


def pick(params: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
    """The ``params`` named in ``names``."""
    return {key: value for key, value in params.items() if key in names}
