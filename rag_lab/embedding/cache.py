"""The on-disk embedding cache (SQLite) and the embedder that goes through it, then the shipped vectors,
then the model."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from rag_lab.embedding.base import Embedder
from rag_lab.embedding.shipped import ShippedVectors
from rag_lab.errors import ConfigError
from rag_lab.paths import cache_dir, warn_cache_full
from rag_lab.sqlite_files import connect, on_failure, transaction


class EmbeddingCache:
    """Embeddings stored on disk in SQLite, keyed by ``sha256(model_id + "\\0" + text)``.

    The database runs in WAL mode, so several processes can read and write the same file. Each cache object keeps one
    connection, opened on first use, used by one thread at a time, closed again after any error and left behind when
    the object is pickled (opening one per lookup cost a tenth of a simulated sweep). A full disk never stops a run:
    after one :class:`~rag_lab.paths.CacheFullWarning` the cache stores nothing more (``full``), and answers nothing if
    it could not even be opened."""

    _SCHEMA = (
        "CREATE TABLE IF NOT EXISTS embeddings "
        "(key TEXT PRIMARY KEY, dim INTEGER NOT NULL, vector BLOB NOT NULL)"
    )
    #: Keys per ``SELECT ... IN (...)``; well under SQLite's bound-variable limit.
    _LOOKUP_BATCH = 500

    def __init__(self, path: str | Path | None = None, timeout: float = 60.0) -> None:
        self.path = Path(path) if path is not None else cache_dir() / "embeddings.sqlite"
        self.timeout = timeout
        self.full = False
        self._readable = True
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        with self._unless_full(readable=False):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connect(self.path, self.timeout, self._SCHEMA).close()

    @staticmethod
    def key(model_id: str, text: str) -> str:
        return hashlib.sha256(f"{model_id}\0{text}".encode()).hexdigest()

    def get(self, model_id: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The cached vector of each text (``None`` where absent), in input order."""
        keys = [self.key(model_id, text) for text in texts]
        found: dict[str, np.ndarray] = {}
        if not self._readable:
            return [None] * len(keys)
        with self._unless_full(readable=False), self._connect() as conn:
            for start in range(0, len(keys), self._LOOKUP_BATCH):
                batch = keys[start : start + self._LOOKUP_BATCH]
                marks = ",".join("?" * len(batch))
                rows = conn.execute(f"SELECT key, dim, vector FROM embeddings WHERE key IN ({marks})", batch)
                for key, dim, blob in rows:
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if vector.shape != (dim,):
                        raise ConfigError(f"corrupt embedding cache entry {key} in {self.path}")
                    found[key] = vector
        return [found.get(key) for key in keys]

    def put(self, model_id: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store one vector per text, all in one transaction."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise ConfigError(f"need one vector per text: {len(texts)} texts, array of shape {vectors.shape}")
        rows = [
            (self.key(model_id, text), vectors.shape[1], vector.tobytes())
            for text, vector in zip(texts, vectors, strict=True)
        ]
        if self.full:
            return
        with self._unless_full(readable=True), self._connect() as conn, transaction(conn):
            conn.executemany("INSERT OR REPLACE INTO embeddings (key, dim, vector) VALUES (?, ?, ?)", rows)

    def __len__(self) -> int:
        if not self._readable:
            return 0
        with self._connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    def _unless_full(self, readable: bool) -> AbstractContextManager[None]:
        """A full disk inside: no error, but one warning, and no writes from now on (nor reads, unless
        ``readable``: the file exists and holds its table)."""
        def give_up(exc: BaseException) -> None:
            self.full, self._readable = True, readable
            warn_cache_full(self.path, exc)
        return on_failure(self.path, give_up)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """The cache's connection, for one thread at a time; closed after an error (the next use opens it again)."""
        with self._lock:
            if self._conn is None:
                self._conn = connect(self.path, self.timeout)
            try:
                yield self._conn
            except BaseException:
                conn, self._conn = self._conn, None
                conn.close()
                raise

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_conn": None, "_lock": None}   # a connection stays in its process

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock())

    def __repr__(self) -> str:
        return f"EmbeddingCache(path={str(self.path)!r})"


class CachedEmbedder:
    """An embedder that remembers every vector in an :class:`EmbeddingCache`.

    ``embed`` looks all texts up, then in ``shipped`` (vectors a dataset ships for its own texts,
    see :mod:`rag_lab.embedding.shipped`), sends only the distinct texts still missing to ``inner``
    (in batches of ``batch_size``) and stores the new vectors in one transaction. ``hits`` (found in
    the cache or shipped), ``shipped_hits`` (of those, shipped) and ``misses`` (computed) count
    distinct texts per call, summed over the embedder's lifetime."""

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
                ])
            self.cache.put(self.model_id, missing, fresh)
            vectors.update(zip(missing, fresh, strict=True))
        self.hits += len(unique) - len(missing)
        self.misses += len(missing)
        return np.stack([vectors[text] for text in texts]).astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, {self.cache!r})"
