"""One writer per run directory: :class:`RunLock` holds an exclusive ``flock`` on ``RUN_DIR/run.lock`` for as long
as a sweep writes there, and writes who holds it (pid, host, command, start) into that file. A second writer is
refused with :class:`~rag_lab.errors.RunDirectoryBusy` naming the holder, or waits for it (``wait=True``). The kernel
drops the lock when its holder exits, however it exits (SIGKILL included), so a lock is never stale; the file stays
(deleting a lock file races with a process that has just opened it). Why ``flock``: docs/decisions.md, "One writer
per run directory"."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import socket
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from rag_lab.errors import RunDirectoryBusy, StorageFull
from rag_lab.sqlite_files import on_failure

LOCK_FILE = "run.lock"
#: How long a refused writer waits for the holder's record to appear (the holder writes it just after locking).
_RECORD_GRACE_S = 2.0


class WaitingForWriter(UserWarning):
    """A writer with ``wait=True`` found the run directory locked and waits for its holder (named in the message)."""


class RunLock:
    """The lock of one run directory. :meth:`acquire` (or ``with``) takes it; :meth:`release` gives it back."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_FILE
        self._fd: int | None = None

    def __repr__(self) -> str:
        return f"RunLock({str(self.run_dir)!r}, held={self.held})"

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, wait: bool = False) -> RunLock:
        """Take the lock (creating the directory). Held by another process: :class:`RunDirectoryBusy` naming it, or,
        with ``wait``, one warning naming it and then block until it is released (Ctrl-C stops the wait)."""
        if self._fd is not None:
            raise RuntimeError(f"{self!r} is already held by this object")
        with on_failure(self.path, self._full):
            self.run_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = describe_holder(self._holder_record(fd))
                if not wait:
                    raise RunDirectoryBusy(self.run_dir, holder) from None
                warnings.warn(f"{self.run_dir} is being written by another sweep ({holder}); waiting for it to "
                              "finish", WaitingForWriter, stacklevel=2)
                fcntl.flock(fd, fcntl.LOCK_EX)
            self._write_record(fd)
        except BaseException:
            os.close(fd)  # closing the descriptor drops the lock, if it was taken
            raise
        self._fd = fd
        return self

    def release(self) -> None:
        """Give the lock back (its record is cleared first); nothing when it is not held."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            with contextlib.suppress(OSError):   # the record is only a courtesy to the next writer
                os.ftruncate(fd, 0)
        finally:
            os.close(fd)                         # the lock goes with the descriptor

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _write_record(self, fd: int) -> None:
        record = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S"),
                  "command": safe_command(sys.argv)[:200]}
        with on_failure(self.path, self._full):
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(record).encode("utf-8"), 0)

    def _full(self, exc: BaseException) -> None:
        """A full disk while the lock file is made or written: a :class:`~rag_lab.errors.StorageFull` naming it."""
        raise StorageFull(self.path, str(exc)) from None

    @staticmethod
    def _holder_record(fd: int) -> dict[str, Any]:
        """The holder's record, read through our own descriptor (waiting briefly while the holder writes it)."""
        deadline = time.monotonic() + _RECORD_GRACE_S
        while True:
            try:
                return json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
            except (ValueError, OSError):
                if time.monotonic() >= deadline:
                    return {}
                time.sleep(0.05)


#: What a URL may carry that is a secret: its user and password, and its query string (``?key=…``).
_URL_SECRETS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?:[^\s/@]*@)?(?P<rest>[^\s?#]*)(?:[?#]\S*)?", re.I)


def safe_command(argv: list[str]) -> str:
    """The command line a lock's record names, with every URL's user, password and query string left out (a
    server's address may carry a key)."""
    return _URL_SECRETS.sub(lambda m: m["scheme"] + m["rest"], " ".join(argv))


def describe_holder(record: dict[str, Any]) -> str:
    """``pid 4242 on host h since 2025-01-01 12:00:00: rag-lab sweep …`` (what is known of a lock's holder)."""
    if "pid" not in record:
        return "a process that has not yet said which: it is starting"
    where = f" on host {record['host']}" if record.get("host") and record["host"] != socket.gethostname() else ""
    since = f" since {record['since']}" if record.get("since") else ""
    command = f": {record['command']}" if record.get("command") else ""
    return f"pid {record['pid']}{where}{since}{command}"
