"""Errors that tell the user exactly what is wrong and where."""

from __future__ import annotations

import errno
import math
import os
from pathlib import Path


class RagLabError(Exception):
    """Base class of rag_lab's own errors."""


class DataFormatError(RagLabError, ValueError):
    """A data file is malformed. The message names the file, the line (if any) and the field."""

    def __init__(self, path: str | Path, message: str, line: int | None = None, field: str | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.reason = message
        where = self.path if line is None else f"{self.path}:{line}"
        what = f"field {field!r}: " if field else ""
        super().__init__(f"{where}: {what}{message}")


class DamagedRunStore(DataFormatError):
    """A run directory's ``run.sqlite`` is damaged (truncated, overwritten, corrupt pages): the message names
    the file, what sqlite found and what to do (``--force`` replaces it)."""

    def __init__(self, path: str | Path, reason: str) -> None:
        run_dir = Path(path).parent
        super().__init__(path, f"the run store is damaged ({reason}), so the questions it holds cannot be read; to "
                               f"start over, run its sweep again with --force (rag-lab sweep SWEEP_FILE --out {run_dir} "
                               "--force; what it held is lost), or restore the file from a copy")


class ConfigError(RagLabError, ValueError):
    """A configuration value or file, or an argument a user passes, is invalid (a ``ValueError``, so
    ``except ValueError`` catches it too)."""


class NotFound(ConfigError, KeyError):
    """A name, id or set of settings that picks nothing (or, where one thing must be picked, several) of what it
    chooses from: a :class:`ConfigError` and a ``KeyError``, whose message says what there is."""

    def __str__(self) -> str:  # KeyError would quote the message again
        return str(self.args[0]) if self.args else ""


class LLMBackendError(RagLabError, RuntimeError):
    """An LLM server could not produce a response: it refused the request, kept failing after
    bounded retries, or answered with something that is not a chat completion. The message names
    the server, the last HTTP status (if any) and the number of attempts; never a credential."""

    def __init__(self, server: str, message: str, status: int | None = None, attempts: int = 1) -> None:
        self.server = server
        self.status = status
        self.attempts = attempts
        self.reason = message
        status_part = f"HTTP {status}" if status is not None else "no HTTP status"
        plural = "attempt" if attempts == 1 else "attempts"
        super().__init__(f"LLM server {server}: {message} ({status_part}, {attempts} {plural})")


class BackendProcessDied(LLMBackendError):
    """The server process the lab started for a backend has exited: the message says how (exit status
    or signal, e.g. "killed by SIGILL (illegal instruction)"), what to do, and the last lines of its
    log. Raised at once, not after retrying a server that is no longer there. ``death`` is the
    :class:`rag_lab.llm.local.process.ProcessDeath` record."""

    def __init__(self, server: str, death: object, attempts: int = 1) -> None:
        self.death = death
        super().__init__(server, death.message(), None, attempts)  # type: ignore[attr-defined]


class ServerWentAway(LLMBackendError):
    """A server that answered earlier in this process now refuses connections: it was stopped, crashed
    or moved; retrying it as if the network had a hiccup would only delay the error."""


class CassetteMiss(RagLabError, LookupError):
    """A replayed run asked for a request its cassette does not hold: the message names the cassette, the
    role, the question and the nearest recorded request. Never answered by a fall-back."""

    def __init__(self, path: str | Path, role: str, question: str, key: str, nearest: str) -> None:
        self.path = str(path)
        self.role = role
        self.question = question
        self.key = key
        super().__init__(f"cassette {self.path} has no recorded response for the {role} call of question "
                         f"{question[:160]!r} (request {key[:12]}…): {nearest}. The cassette was recorded with "
                         "other prompts, policies or questions; record the missing calls with the real backend "
                         "(a recording resumes) or replay a sweep the cassette covers")


class RunDirectoryBusy(RagLabError):
    """Another process is writing a sweep into this run directory (it holds the directory's lock): the message names
    that process's pid, command and start, and what to do (wait for it, ``--wait``, or another ``--out``)."""

    def __init__(self, run_dir: str | Path, holder: str) -> None:
        self.run_dir = str(run_dir)
        self.holder = holder
        super().__init__(f"{run_dir} is being written by another sweep ({holder}); two writers would mix their rows: "
                         "wait for it to finish (or run with --wait to wait for it), or choose another --out")


class StorageFull(RagLabError, OSError):
    """A file a run writes could not grow because its disk is full: the message names the file's full path and says
    that everything committed is kept, so the same command resumes once there is space."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = str(Path(path).resolve())
        self.reason = reason
        super().__init__(f"the disk holding {self.path} is full ({reason}); every finished question is kept: free "
                         "some space, then run the same command again and it resumes where it stopped")


#: Free bytes below which a disk counts as full when sqlite reports only an I/O error (its shared-memory index or
#: journal could not grow), not ``SQLITE_FULL``.
NEARLY_FULL_BYTES = 1 << 20


def is_disk_full(exc: BaseException, path: str | Path | None = None) -> bool:
    """Whether ``exc`` says a disk (or a quota) is full: sqlite's ``SQLITE_FULL`` ("database or disk is full"), an
    ``OSError`` with ``ENOSPC`` / ``EDQUOT``, or, for a file at ``path``, a sqlite I/O error while the disk holding it
    has less than :data:`NEARLY_FULL_BYTES` free (sqlite then reports "disk I/O error": a write that could not
    grow its files)."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    if name.startswith("SQLITE_FULL"):
        return True
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return name.startswith("SQLITE_IOERR") and path is not None and _free_bytes(Path(path)) < NEARLY_FULL_BYTES


def _free_bytes(path: Path) -> float:
    """Bytes free to this user on the disk holding ``path`` (its nearest existing folder); infinite if unknown."""
    for folder in (path, *path.parents):
        if folder.exists():
            try:
                stat = os.statvfs(folder)
            except OSError:
                return math.inf
            return stat.f_bavail * stat.f_frsize
    return math.inf
