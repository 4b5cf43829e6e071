"""A server process the lab started, watched: when it dies, the error says so, with how and why
(:meth:`ServerProcess.death`, asked by :class:`~rag_lab.llm.openai_backend.OpenAIBackend`'s ``liveness`` hook).
The process gets only the environment it is given, and on Linux dies with its parent (``PR_SET_PDEATHSIG``).
The method: docs/backends.md, "A dead server is named"."""

from __future__ import annotations

import contextlib
import functools
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from rag_lab.errors import LLMBackendError

#: What to do when a server died of a signal, by signal.
_SIGNAL_ADVICE = {
    signal.SIGILL: "the server ran a CPU instruction this machine does not have: its native code was compiled for "
                   "another CPU (e.g. with AVX-512 or AMX). Rebuild it portable: bash scripts/install.sh local "
                   "(python -m rag_lab.native_build tells what the installed build was compiled for)",
    signal.SIGKILL: "something killed the server: the kernel's out-of-memory killer (see dmesg), a time limit, or "
                    "another process. Check free memory, or use a smaller model or context (n_ctx)",
    signal.SIGSEGV: "the server crashed (segmentation fault): see its log; a corrupt model file or a library bug",
    signal.SIGBUS: "the server crashed (bus error): often a model file that was truncated or changed while mapped",
    signal.SIGABRT: "the server aborted (an assertion failed inside it): see its log",
}


def _signal_of(returncode: int) -> int | None:
    """The signal a process died of: ``-4`` (Popen's convention) or ``132`` from a shell (128 + 4) → 4."""
    return -returncode if returncode < 0 else returncode - 128 if 128 < returncode < 160 else None


def describe_exit(returncode: int) -> str:
    """``0`` → "exited with status 0"; ``-4`` or ``132`` → "killed by SIGILL (illegal instruction)"."""
    number = _signal_of(returncode)
    if number is not None:
        try:
            sig = signal.Signals(number)
        except ValueError:
            return f"killed by signal {number}"
        text = signal.strsignal(sig) or sig.name
        return f"killed by {sig.name} ({text.split(':')[0].lower()})"
    return f"exited with status {returncode}"


def advice(returncode: int) -> str:
    """What a user should do about a server that ended with ``returncode``."""
    number = _signal_of(returncode)
    if number is not None:
        return _SIGNAL_ADVICE.get(number, "the server was stopped by a signal: see its log")
    if returncode == 0:
        return "the server stopped by itself: was it shut down by another process?"
    return "the server failed: the last lines of its log above say why"


@dataclass(frozen=True)
class ProcessDeath:
    """How a watched server process ended."""

    name: str
    pid: int
    returncode: int
    log_path: Path
    log_tail: str

    def message(self) -> str:
        return (f"the {self.name} process (pid {self.pid}) {describe_exit(self.returncode)}. "
                f"What to do: {advice(self.returncode)}. Last lines of its log {self.log_path}:\n{self.log_tail}")


def _die_with_parent() -> Callable[[], None] | None:
    """On Linux, a ``Popen(preexec_fn=...)`` function asking the kernel to SIGKILL the server when the thread that
    started it dies, so a killed sweep leaves no model server behind (SIGKILL, as on SIGTERM uvicorn waits for the
    request in flight); None elsewhere. It makes one libc call, resolved before the fork."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return functools.partial(prctl, 1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG


def read_tail(path: Path, lines: int = 20, chars: int = 2000) -> str:
    """The last ``lines`` lines of ``path`` (at most ``chars`` characters)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"(log unreadable: {exc})"
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])[-chars:]


class ServerProcess:
    """One server process: started with its output to ``log_path``, ready when ``ready_url`` answers
    200, watched by :meth:`death`, stopped by :meth:`stop` (terminate → wait → kill)."""

    def __init__(self, name: str, log_path: Path) -> None:
        self.name = name
        self.log_path = log_path
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._death: ProcessDeath | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self, command: Sequence[str], env: dict[str, str]) -> None:
        self._death = None
        self._log = self.log_path.open("ab")
        self._proc = subprocess.Popen(list(command), stdin=subprocess.DEVNULL, stdout=self._log,
                                      stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent())

    def wait_ready(self, ready_url: str, timeout_s: float, server_label: str) -> None:
        """Poll ``ready_url`` until it answers 200; raise LLMBackendError (with how the process ended, or
        the log tail after ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        while True:
            dead = self.death()
            if dead is not None:
                raise LLMBackendError(server_label, f"{dead.message()}\n(it died while starting)", None)
            with contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError):  # not up yet: poll again
                with urllib.request.urlopen(ready_url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            if time.monotonic() > deadline:
                raise LLMBackendError(server_label, f"the {self.name} did not answer {ready_url} within {timeout_s:g} s; "
                                                    f"log {self.log_path}:\n{self.log_tail()}", None)
            time.sleep(0.25)

    def death(self, wait_s: float = 0.0) -> ProcessDeath | None:
        """How the process ended, or None while it runs (after waiting up to ``wait_s`` for it to end:
        a server that just dropped a connection may be a few milliseconds from being reaped)."""
        if self._death is not None:
            return self._death
        proc = self._proc
        if proc is None:
            return None
        code = proc.poll()
        if code is None and wait_s > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = proc.wait(timeout=wait_s)
        if code is None:
            return None
        if self._log is not None:
            self._log.flush()
        self._death = ProcessDeath(self.name, proc.pid, code, self.log_path, self.log_tail())
        return self._death

    def stop(self, timeout_s: float = 10.0) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout_s)
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self) -> str:
        return read_tail(self.log_path)
