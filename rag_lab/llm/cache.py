"""A response cache on sqlite (:class:`ResponseCache`, keyed by :meth:`LLMRequest.cache_key`: no API key, base URL
or role), and a backend wrapper that consults it (:class:`CachedBackend`).

A hit is marked ``cached=True`` with the usage and modelled latency of the call that produced it, so the ledger
counts the cost while ``spent`` leaves it out (:mod:`rag_lab.llm.ledger`). Every generation is stored, valid or
not; a call that raised stores nothing. The file is shared by processes (WAL); a full disk stops storing after
one :class:`~rag_lab.paths.CacheFullWarning`."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from pydantic import ValidationError

from rag_lab.errors import ConfigError
from rag_lab.llm.base import Completion, LLMBackend, LLMRequest, WrappedBackend
from rag_lab.paths import cache_dir, warn_cache_full
from rag_lab.sqlite_files import connect, on_failure

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key        TEXT PRIMARY KEY,
    backend    TEXT NOT NULL,
    model      TEXT NOT NULL,
    generation TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


def default_cache_path() -> Path:
    """``cache_dir()/llm_responses.sqlite``."""
    return cache_dir() / "llm_responses.sqlite"


class ResponseCache:
    """Stored generations keyed by request digest, in one sqlite file.

    ``hits`` and ``misses`` count this instance's lookups (not other processes'). ``full``: its disk filled up, so
    it stores nothing more (and answers nothing when it could not be opened at all)."""

    def __init__(self, path: str | Path | None = None, timeout_s: float = 30.0) -> None:
        if timeout_s <= 0:
            raise ConfigError(f"timeout_s must be positive, got {timeout_s}")
        self.path = Path(path) if path is not None else default_cache_path()
        if self.path.is_dir():
            raise IsADirectoryError(f"response cache path {self.path} is a directory; give a file path")
        self.hits = 0
        self.misses = 0
        self.full = False
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        with on_failure(self.path, self._give_up):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = connect(self.path, timeout_s, _SCHEMA)

    def _give_up(self, exc: BaseException) -> None:
        """The disk is full: store nothing more (answer nothing if the file cannot be read), and say so once."""
        self.full = True
        if self._conn is not None:
            try:
                self._conn.execute("SELECT 1 FROM responses LIMIT 1").fetchall()
            except sqlite3.Error:
                self._conn.close()
                self._conn = None
        warn_cache_full(self.path, exc)

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r}, hits={self.hits}, misses={self.misses})"

    def get(self, key: str) -> Completion | None:
        """The stored generation for ``key`` (marked ``cached=True``), or None. An entry that no
        longer parses is dropped and counts as a miss."""
        with self._lock:
            row = None
            if self._conn is not None:   # None on a full disk
                with on_failure(self.path, self._give_up):
                    row = self._conn.execute("SELECT generation FROM responses WHERE key = ?", (key,)).fetchone()
            if row is not None:
                try:
                    gen = Completion.model_validate_json(row[0]).model_copy(update={"cached": True})
                except ValidationError:
                    self._write("DELETE FROM responses WHERE key = ?", (key,))
                else:
                    self.hits += 1
                    return gen
            self.misses += 1
            return None

    def put(self, key: str, backend: str, model: str, generation: Completion) -> None:
        """Store ``generation`` under ``key`` (replacing any earlier entry)."""
        blob = generation.model_dump_json(exclude={"cached"})
        with self._lock:
            self._write("INSERT OR REPLACE INTO responses (key, backend, model, generation, created_at) "
                        "VALUES (?, ?, ?, ?, ?)", (key, backend, model, blob, time.time()))

    def _write(self, sql: str, args: tuple = ()) -> None:
        """One write (the caller holds the lock); nothing on a full disk."""
        if not self.full and self._conn is not None:
            with on_failure(self.path, self._give_up):
                self._conn.execute(sql, args)

    def __len__(self) -> int:
        with self._lock:
            return 0 if self._conn is None else self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def clear(self) -> None:
        """Delete every entry and reset the counters."""
        with self._lock:
            self._write("DELETE FROM responses")
            self.hits = 0
            self.misses = 0

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()


class CachedBackend(WrappedBackend):
    """``inner`` behind a :class:`ResponseCache` (a :class:`~rag_lab.llm.base.WrappedBackend`)."""

    def __init__(self, inner: LLMBackend, cache: ResponseCache | None = None) -> None:
        if not isinstance(inner, LLMBackend):
            raise TypeError(f"inner must be an LLMBackend, not {type(inner).__name__}")
        if cache is not None and not isinstance(cache, ResponseCache):
            raise TypeError(f"cache must be a ResponseCache, not {type(cache).__name__}")
        super().__init__(inner)
        self.cache = cache if cache is not None else ResponseCache()

    def __repr__(self) -> str:
        return f"CachedBackend({self.inner!r}, {self.cache!r})"

    def _generate(self, request: LLMRequest) -> Completion:
        backend, model = self.inner.cache_identity()
        key = request.cache_key(backend, model)
        gen = self.cache.get(key)
        if gen is None:
            gen = self.inner._generate(request)
            self.cache.put(key, backend, model, gen)
        return gen
