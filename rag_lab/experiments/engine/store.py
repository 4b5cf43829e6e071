"""The run directory's store: one sqlite file, ``run.sqlite``, in WAL mode (:class:`RunStore`). Each finished
(run, question) is committed in one transaction with ``INSERT OR IGNORE`` on ``(candidate_id, qid)``, so a
process killed at any point leaves whole rows only and a re-run skips every committed pair; only a sweep's parent
process writes, and it holds the directory's lock (:class:`~rag_lab.experiments.engine.run_lock.RunLock`) from
before it reads the stored fingerprint until :meth:`RunStore.close`, so two sweeps never mix in one directory. A full
disk is a :class:`~rag_lab.errors.StorageFull` naming the file (what was committed stays). Its tables (the resolved
sweep and code version, candidates, rows, sessions, a search's trials and race) are in ``store.sql`` beside this
module, each described there. Why sqlite: docs/cli.md, "Run directories"."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from rag_lab.errors import ConfigError, DamagedRunStore, StorageFull
from rag_lab.experiments.engine.provenance import code_version
from rag_lab.experiments.engine.resolved_sweep import CandidateRun, ResolvedSweep
from rag_lab.experiments.engine.run_lock import RunLock
from rag_lab.experiments.engine.worker import QuestionOutcome
from rag_lab.paths import package_text
from rag_lab.sqlite_files import connect, on_failure, prepare, transaction

RUN_FILE = "run.sqlite"
#: The meta key the resolved sweep's :meth:`~rag_lab.experiments.engine.resolved_sweep.ResolvedSweep.describe` is
#: stored under (the name it had when it was called a plan; every stored run directory holds it).
DESCRIPTION_KEY = "plan"

#: The tables of ``run.sqlite`` (``store.sql`` beside this module), created where missing on every open.
_SCHEMA = package_text(__package__, "store.sql")


class RunStore:
    """A run directory's ``run.sqlite``. Open with :meth:`create` (to run a sweep) or :meth:`read`."""

    def __init__(self, run_dir: str | Path, *, new: bool = True) -> None:
        """Open ``run_dir``'s store; unless ``new``, a file that holds no sweep is left as it was (no tables added)."""
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / RUN_FILE
        self._lock = threading.Lock()
        self._run_lock: RunLock | None = None
        with _damage_named(self.path):
            self._conn = connect(self.path, 30.0, plain=True)
            try:  # a file sqlite finds damaged (its quick integrity check included) is refused before any write
                problems = [line for (line,) in self._conn.execute("PRAGMA quick_check") if line != "ok"]
                if problems:
                    raise DamagedRunStore(self.path, f"integrity check: {problems[0].splitlines()[0]}")
                found = None
                with contextlib.suppress(sqlite3.OperationalError):  # no meta table: a new file, or not a run store
                    found = self._conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
                if found or new:
                    prepare(self._conn, _SCHEMA)
            except BaseException:
                self._conn.close()
                raise
        self._opened_fingerprint: str | None = found[0] if found else None  # None: it held no sweep when opened

    # --- opening -------------------------------------------------------------------------------

    @classmethod
    def create(cls, run_dir: str | Path, resolved: ResolvedSweep, overwrite: bool = False, wait: bool = False) -> RunStore:
        """Open ``run_dir`` to write ``resolved``: a new store, or the existing one of the same sweep (to resume).
        First the directory's lock is taken (another writer: :class:`~rag_lab.errors.RunDirectoryBusy`, or with
        ``wait`` wait for it); under it, a store of a different sweep, or a damaged one
        (:class:`~rag_lab.errors.DamagedRunStore`), is an error unless ``overwrite``, which deletes it first. The
        store holds the lock until :meth:`close` (use it in a ``with``)."""
        run_dir = Path(run_dir)
        if run_dir.exists() and not run_dir.is_dir():
            raise ConfigError(f"run directory {run_dir} is a file")
        lock = RunLock(run_dir).acquire(wait=wait)
        try:
            store = cls._open_locked(run_dir, resolved, overwrite)
        except BaseException:
            lock.release()
            raise
        store._run_lock = lock
        return store

    @classmethod
    def _open_locked(cls, run_dir: Path, resolved: ResolvedSweep, overwrite: bool) -> RunStore:
        """:meth:`create`'s steps under the lock: open, check the stored fingerprint, initialise."""
        try:
            store = cls(run_dir)
            stored = store._opened_fingerprint
        except DamagedRunStore:
            if not overwrite:
                raise
            store, stored = None, "damaged"
        try:
            if stored is not None and stored != resolved.fingerprint:
                if not overwrite:
                    raise ConfigError(
                        f"{run_dir} holds another sweep (fingerprint {stored}, this one is {resolved.fingerprint}): "
                        "choose a new run directory, or overwrite it (--force / overwrite=True)")
                if store is not None:
                    store.close()
                for suffix in ("", "-wal", "-shm"):
                    (run_dir / (RUN_FILE + suffix)).unlink(missing_ok=True)
                store = cls(run_dir)
            store._initialise(resolved)
        except BaseException:
            if store is not None:
                store.close()
            raise
        return store

    @classmethod
    def read(cls, run_dir: str | Path) -> RunStore:
        """Open an existing run directory (to read results); a damaged store is a
        :class:`~rag_lab.errors.DamagedRunStore`."""
        if (Path(run_dir) / RUN_FILE).is_file():
            store = cls(run_dir, new=False)
            if store._opened_fingerprint is not None:
                return store
            store.close()
        raise ConfigError(f"{run_dir} is not a sweep run directory (no {RUN_FILE} with a sweep in it)")

    def _initialise(self, resolved: ResolvedSweep) -> None:
        """Write meta and candidates in one transaction, unless they are there already."""
        stored, described = self.meta(), json.dumps(resolved.describe())
        if stored.get("fingerprint") == resolved.fingerprint:
            if stored.get(DESCRIPTION_KEY) != described:   # the same sweep, restated (e.g. its findings): keep the latest
                self._write("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (DESCRIPTION_KEY, described))
            return
        meta = {"fingerprint": resolved.fingerprint, DESCRIPTION_KEY: described, "created_at": str(time.time()),
                "code": json.dumps(code_version())}
        with self._transaction() as conn:  # meta and candidates together: a store with a fingerprint has its runs
            conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", meta.items())
            _insert_runs(conn, resolved.runs)

    def add_runs(self, runs: Sequence[CandidateRun]) -> None:
        """Add runs to ``candidates`` in one transaction (a run already there keeps its first entry)."""
        with self._transaction() as conn:
            _insert_runs(conn, runs)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One transaction (:func:`~rag_lab.sqlite_files.transaction`), its errors named by :func:`_damage_named`."""
        with self._lock, _damage_named(self.path), transaction(self._conn) as conn:
            yield conn

    def _write(self, sql: str, args: Sequence[Any]) -> sqlite3.Cursor:
        """One statement in its own transaction."""
        with self._transaction() as conn:
            return conn.execute(sql, args)

    def close(self) -> None:
        """Close the file and, for a store opened with :meth:`create`, release the run directory's lock."""
        try:
            with self._lock:
                self._conn.close()
        finally:
            if self._run_lock is not None:
                self._run_lock.release()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing -------------------------------------------------------------------------------

    def write(self, outcome: QuestionOutcome) -> bool:
        """Commit one finished (run, question) in one transaction; False if it was already stored."""
        cursor = self._write(
            "INSERT OR IGNORE INTO rows (candidate_id, qid, row, trace, result, finished_at) VALUES (?, ?, ?, ?, ?, ?)",
            (outcome.candidate_id, outcome.qid, json.dumps(outcome.row), outcome.trace_z, outcome.result_z, time.time()))
        return cursor.rowcount == 1

    def record_trial(self, number: int, candidate_id: str, params: Mapping[str, Any], state: str,
                     objectives: Mapping[str, float | None], n_questions: int) -> None:
        """Write (or rewrite) one search trial."""
        self._write("INSERT OR REPLACE INTO trials (number, candidate_id, params, state, objectives, n_questions) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (number, candidate_id, json.dumps(params), state, json.dumps(objectives), n_questions))

    def record_race(self, candidate_id: str, status: str, n_questions: int, rival: str | None, reason: str,
                    detail: Mapping[str, Any]) -> None:
        """Write (or rewrite) one raced run's status."""
        self._write("INSERT OR REPLACE INTO race (candidate_id, status, n_questions, rival, reason, detail) "
                    "VALUES (?, ?, ?, ?, ?, ?)", (candidate_id, status, n_questions, rival, reason, json.dumps(detail)))

    def trials(self) -> list[dict[str, Any]]:
        """Every search trial in order: ``number``, ``candidate_id``, ``params``, ``state``, ``objectives``,
        ``n_questions``."""
        rows = self._query("SELECT number, candidate_id, params, state, objectives, n_questions FROM trials ORDER BY number")
        return [{"number": n, "candidate_id": c, "params": json.loads(p), "state": s, "objectives": json.loads(o),
                 "n_questions": q} for n, c, p, s, o, q in rows]

    def race(self) -> dict[str, dict[str, Any]]:
        """Each raced run by candidate id: ``status``, ``n_questions``, ``rival``, ``reason``, ``detail``."""
        rows = self._query("SELECT candidate_id, status, n_questions, rival, reason, detail FROM race")
        return {c: {"status": s, "n_questions": q, "rival": r, "reason": w, "detail": json.loads(d)}
                for c, s, q, r, w, d in rows}

    def write_provenance(self, record: str) -> None:
        """Store the run's provenance (a :class:`~rag_lab.experiments.engine.provenance.Provenance` as JSON) once:
        a run directory keeps the record of its first run."""
        self._write("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", ("provenance", record))

    def begin_session(self, executor: str, workers: int) -> int:
        cursor = self._write("INSERT INTO sessions (started_at, code, executor, workers) VALUES (?, ?, ?, ?)",
                             (time.time(), json.dumps(code_version()), executor, workers))
        return int(cursor.lastrowid)

    def end_session(self, session: int, computed: int) -> None:
        self._write("UPDATE sessions SET finished_at = ?, computed = ? WHERE id = ?", (time.time(), computed, session))

    # --- reading -------------------------------------------------------------------------------

    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock, _damage_named(self.path):
            return self._conn.execute(sql, args).fetchall()

    def meta(self) -> dict[str, str]:
        return dict(self._query("SELECT key, value FROM meta"))

    def sweep_description(self) -> dict[str, Any]:
        """The stored :meth:`ResolvedSweep.describe` of this run."""
        return json.loads(self.meta()[DESCRIPTION_KEY])

    def candidates(self) -> list[dict[str, Any]]:
        """Every run in table order: ``candidate_id``, ``config_id``, ``position``, ``seed``, ``params``, ``config``."""
        rows = self._query("SELECT candidate_id, config_id, position, seed, params, config FROM candidates ORDER BY position")
        return [{"candidate_id": c, "config_id": k, "position": p, "seed": s, "params": json.loads(a),
                 "config": json.loads(f)} for c, k, p, s, a, f in rows]

    def done_pairs(self) -> set[tuple[str, str]]:
        """Every committed (candidate_id, qid)."""
        return set(self._query("SELECT candidate_id, qid FROM rows"))

    def count_rows(self) -> int:
        return self._query("SELECT COUNT(*) FROM rows")[0][0]

    def rows(self, candidate_id: str) -> dict[str, dict[str, Any]]:
        """``{qid: metrics row}`` of one run."""
        return {q: json.loads(r) for q, r in self._query("SELECT qid, row FROM rows WHERE candidate_id = ?", (candidate_id,))}

    def qids(self, candidate_id: str) -> list[str]:
        return [q for (q,) in self._query("SELECT qid FROM rows WHERE candidate_id = ?", (candidate_id,))]

    def blob(self, candidate_id: str, qid: str, column: str) -> bytes:
        """The compressed ``trace`` or ``result`` of one (run, question)."""
        if column not in ("trace", "result"):
            raise ConfigError(f"column must be 'trace' or 'result', got {column!r}")
        found = self._query(f"SELECT {column} FROM rows WHERE candidate_id = ? AND qid = ?", (candidate_id, qid))
        if not found:
            raise KeyError(f"no stored row for candidate {candidate_id!r}, question {qid!r}")
        return found[0][0]

    def sessions(self) -> list[dict[str, Any]]:
        rows = self._query("SELECT id, started_at, finished_at, code, executor, workers, computed FROM sessions ORDER BY id")
        return [{"id": i, "started_at": s, "finished_at": f, "code": json.loads(c), "executor": e, "workers": w,
                 "computed": n} for i, s, f, c, e, w, n in rows]

    def sizes(self) -> dict[str, int]:
        """Bytes stored: metrics rows (JSON), traces and results (zlib-compressed JSON)."""
        row, trace, result = self._query("SELECT COALESCE(SUM(LENGTH(row)), 0), COALESCE(SUM(LENGTH(trace)), 0), "
                                         "COALESCE(SUM(LENGTH(result)), 0) FROM rows")[0]
        return {"rows": row, "traces": trace, "results": result}


def _insert_runs(conn: sqlite3.Connection, runs: Sequence[CandidateRun]) -> None:
    """Insert ``runs`` into ``candidates`` inside the caller's transaction (a run already there keeps its entry)."""
    conn.executemany(
        "INSERT OR IGNORE INTO candidates (candidate_id, config_id, position, seed, params, config) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(r.candidate_id, r.config_id, r.position, r.seed, json.dumps(r.params), json.dumps(r.flat)) for r in runs],
    )


def _damage_named(path: Path) -> AbstractContextManager[None]:
    """sqlite's errors about a damaged file, raised as a :class:`~rag_lab.errors.DamagedRunStore` naming ``path``, and
    about a full disk, as a :class:`~rag_lab.errors.StorageFull` naming it (the transaction was rolled back)."""
    def damaged(exc: BaseException) -> None:
        raise DamagedRunStore(path, f"sqlite: {exc}") from None

    def full(exc: BaseException) -> None:
        raise StorageFull(path, f"sqlite: {exc}" if isinstance(exc, sqlite3.Error) else str(exc)) from None
    return on_failure(path, full, damaged)
