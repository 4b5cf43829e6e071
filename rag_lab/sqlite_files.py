"""The sqlite files several threads and processes share (the LLM response cache, the embedding cache, a run
directory's store): how one is opened, a transaction, and which of its failures is a damaged file or a full disk.
Each file's schema, and what those failures mean to its user, stay with its own module."""

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rag_lab.errors import is_disk_full


def connect(path: Path, timeout_s: float, schema: str = "", *, plain: bool = False) -> sqlite3.Connection:
    """``path``, its tables created where missing (``schema``), in WAL mode for any thread (the caller serialises
    them), waiting up to ``timeout_s`` for another writer, in autocommit mode (a :func:`transaction` groups writes).
    Synchronous NORMAL: a commit survives the process being killed; only an OS crash or power loss can drop the last
    commits, never half of one. ``plain``: opened as it is, nothing written yet (:func:`prepare` it later)."""
    conn = sqlite3.connect(path, timeout=timeout_s, check_same_thread=False, isolation_level=None)
    return conn if plain else prepare(conn, schema)


def prepare(conn: sqlite3.Connection, schema: str = "") -> sqlite3.Connection:
    """What :func:`connect` does to a file once it is open: WAL mode, synchronous NORMAL, ``schema`` where missing
    (the first writes; a caller that reads a file first, to decide whether it is theirs, opens it plainly)."""
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.executescript(schema)
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error (unless sqlite did, e.g. on a full disk)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


@contextmanager
def on_failure(path: Path, full: Callable[[BaseException], None],
               damaged: Callable[[BaseException], None] | None = None) -> Iterator[None]:
    """Errors of sqlite or the OS inside, on the file at ``path``: a full disk (:func:`~rag_lab.errors.is_disk_full`)
    goes to ``full``, a damaged file (not a database, or corrupt) to ``damaged``; each raises its own error or lets the
    caller go on. Any other error (e.g. a lock held too long) is raised as it is."""
    try:
        yield
    except (sqlite3.Error, OSError) as exc:
        if damaged is not None and str(getattr(exc, "sqlite_errorname", "")).startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
            damaged(exc)
        elif is_disk_full(exc, path):
            full(exc)
        else:
            raise
