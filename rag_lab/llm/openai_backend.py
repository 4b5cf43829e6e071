"""The OpenAI-compatible backend (:class:`OpenAIBackend`): the official ``openai`` client against any base URL
(OpenAI, vLLM, Ollama, llama-cpp-python's server, the lab server). It negotiates how a response schema is asked
for (``structured_mode``: ``json_schema``, ``json_object_schema``, ``text`` or ``auto``) and always validates the
text; retries 429, 408, 5xx, timeouts, connection errors and unreadable bodies (not JSON, not UTF-8) with bounded,
jittered backoff, the last error naming the server; names a dead server
process at once instead of retrying; admits at most ``max_concurrency`` calls from any number of threads; and
keeps the API key inside the client, out of every repr, cache key, log line and error. The method:
docs/backends.md, "The OpenAI-compatible backend in detail"."""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal, Protocol

import openai

from rag_lab.errors import BackendProcessDied, ConfigError, LLMBackendError, ServerWentAway
from rag_lab.llm.base import Generation, LLMBackend, LLMRequest, LLMResponse, Usage
from rag_lab.llm.openai_wire import (
    MAX_SERVER_MESSAGE,
    NO_KEY,
    RETRY_STATUSES,
    SK_TOKEN,
    display_url,
    merged_messages,
    refused_connection,
    rejects_format,
    retry_after_seconds,
)
from rag_lab.llm.prompts import question_of
from rag_lab.llm.server.chat_requests import ROLE_HEADER
from rag_lab.llm.structured import Fallback

log = logging.getLogger(__name__)

__all__ = ["NO_KEY", "BackendStats", "OpenAIBackend", "display_url", "rejects_format"]

StructuredMode = Literal["auto", "json_schema", "json_object_schema", "text"]


class Liveness(Protocol):
    """How a backend asks whether its server process is still there: None while it runs, else a record
    with ``message()`` (a :class:`rag_lab.llm.local.process.ProcessDeath`). ``wait_s``: how long to wait for a
    process that just dropped a connection to finish exiting."""

    def __call__(self, wait_s: float = ...) -> Any: ...
_NEGOTIATION_ORDER: tuple[str, ...] = ("json_schema", "json_object_schema", "text")
@dataclass
class BackendStats:
    """Counters of one backend instance: calls made, HTTP attempts, retries, calls that ended in
    an error, and structured-mode fallbacks (a server rejected a mode and the next was tried)."""

    calls: int = 0
    attempts: int = 0
    retries: int = 0
    errors: int = 0
    mode_fallbacks: int = 0


def refusal(request: LLMRequest, message: str) -> str:
    """What a server's refusal of ``request`` says: the role and question of the call (which of a sweep's
    thousand calls it was), the server's own words, and for a prompt longer than the model's context what
    to change."""
    question = question_of(request)
    which = f"the {request.role} call" + (f" for question {question[:160]!r}" if question else "")
    hint = ""
    if "context window" in message or "context length" in message or "n_ctx" in message:
        hint = (" — the prompt and its max_tokens do not fit the model's context: start the server with a larger "
                "n_ctx (LocalModelServer(n_ctx=...)), or show less evidence (truncation.max_tokens, "
                "retrieval.controller_evidence)")
    return f"refused {which}: {message}{hint}"


class _ModeRejected(Exception):
    """The server refused the structured-output mode (see :func:`rejects_format`); the next mode may be tried."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class OpenAIBackend(LLMBackend):
    """Chat completions from an OpenAI-compatible server (see the module doc).

    ``model``, ``base_url`` and ``api_key`` default to ``RAG_LAB_MODEL``, ``OPENAI_BASE_URL`` and
    ``OPENAI_API_KEY`` (a server that needs no key gets :data:`NO_KEY`). ``timeout_s`` bounds each
    HTTP attempt. ``jitter_seed`` makes the backoff jitter reproducible. ``cache_label`` names the
    server in cache keys (default: the base URL without credentials); give servers on changing
    ports a stable label. ``send_role_header`` adds ``X-Rag-Lab-Role: <role>`` so a lab server
    knows which role to play (other servers ignore it). ``merge_system`` folds the system message
    into the first user message (``system + "\n\n" + user``) for servers whose chat format drops
    system messages (llama-cpp-python's ``gemma``); it is part of the cache identity.
    """

    name = "openai"
    #: (base URL, model) → the structured mode that worked; shared by every instance in the process.
    _negotiated: ClassVar[dict[tuple[str, str], str]] = {}
    _negotiated_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        structured_mode: StructuredMode = "auto",
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
        jitter_seed: int | None = None,
        max_concurrency: int = 4,
        cache_label: str | None = None,
        send_role_header: bool = True,
        merge_system: bool = False,
        liveness: Liveness | None = None,
    ) -> None:
        model = model or os.environ.get("RAG_LAB_MODEL")
        if model is not None and not model.strip():
            raise ConfigError("OpenAIBackend needs a model name, got an empty one")
        if structured_mode not in ("auto", *_NEGOTIATION_ORDER):
            raise ConfigError(f"structured_mode must be one of auto, {', '.join(_NEGOTIATION_ORDER)}; got {structured_mode!r}")
        if timeout_s <= 0 or backoff_base_s < 0 or backoff_max_s < backoff_base_s:
            raise ConfigError("need timeout_s > 0 and 0 <= backoff_base_s <= backoff_max_s")
        if max_retries < 0 or max_concurrency < 1:
            raise ConfigError(f"need max_retries >= 0 and max_concurrency >= 1, got {max_retries}, {max_concurrency}")
        self._key = api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY
        self._client = openai.OpenAI(
            api_key=self._key,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
            timeout=timeout_s,
            max_retries=0,
        )
        self.base_url = display_url(str(self._client.base_url))
        super().__init__(model or self._only_model())
        self.structured_mode: StructuredMode = structured_mode
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.max_concurrency = max_concurrency
        self.cache_label = cache_label or self.base_url
        self.send_role_header = send_role_header
        self.merge_system = merge_system
        self.liveness = liveness
        self._answered = False  # the server answered once: a refused connection now means it went away
        self.stats = BackendStats()
        self._stats_lock = threading.Lock()
        self._rng = random.Random(jitter_seed)
        self._rng_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max_concurrency)

    def __repr__(self) -> str:
        return (f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r}, "
                f"structured_mode={self.structured_mode!r}, max_concurrency={self.max_concurrency}"
                + (", merge_system=True)" if self.merge_system else ")"))

    def cache_identity(self) -> tuple[str, str]:
        """("openai", "model@server label"): the same model name on two servers is two models."""
        return self.name, f"{self.model}@{self.cache_label}" + ("|merge_system" if self.merge_system else "")

    def _only_model(self) -> str:
        """The one model the server lists at ``/v1/models`` (no model was given)."""
        try:
            models = sorted(m.id for m in self._client.models.list())
        except openai.APIStatusError as exc:
            raise ConfigError(f"no model given (pass --model / model=... or set RAG_LAB_MODEL), and {self.base_url} "
                              f"did not list its models: HTTP {exc.status_code}: {self._server_message(exc)}") from None
        except (openai.APIConnectionError, openai.APIResponseValidationError) as exc:
            raise ConfigError(f"no model given (pass --model / model=... or set RAG_LAB_MODEL), and {self.base_url} "
                              f"could not be asked for its models: {self._scrub(str(exc))}") from None
        if len(models) != 1:
            listed = ", ".join(models[:20]) or "none"
            raise ConfigError(f"no model given (pass --model / model=... or set RAG_LAB_MODEL) and {self.base_url} "
                              f"serves {len(models)} models, not exactly one: {listed}")
        log.info("server %s serves one model, %s: using it", self.base_url, models[0])
        return models[0]

    @classmethod
    def forget_negotiated(cls) -> None:
        """Forget every remembered structured mode (e.g. after a server was upgraded)."""
        with cls._negotiated_lock:
            cls._negotiated.clear()

    def negotiated_mode(self) -> str | None:
        """The structured mode remembered for this (base URL, model), if any."""
        with self._negotiated_lock:
            return self._negotiated.get((self.base_url, self.model))

    def stats_dict(self) -> dict[str, int]:
        """A snapshot of :attr:`stats`."""
        with self._stats_lock:
            return asdict(self.stats)

    # --- calls ---------------------------------------------------------------------------------

    def complete_many(
        self,
        requests: Sequence[LLMRequest],
        fallbacks: Sequence[Fallback] | None = None,
        max_workers: int | None = None,
    ) -> list[LLMResponse]:
        """:meth:`complete` every request on a thread pool (``max_workers`` defaults to
        ``max_concurrency``) and return the responses in the order of ``requests``. The first
        error (in request order) is raised after every call has finished."""
        if fallbacks is not None and len(fallbacks) != len(requests):
            raise ConfigError(f"got {len(fallbacks)} fallbacks for {len(requests)} requests")
        if not requests:
            return []
        fbs = list(fallbacks) if fallbacks is not None else [None] * len(requests)
        workers = max(1, min(max_workers or self.max_concurrency, len(requests)))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openai-backend") as pool:
            futures = [
                pool.submit(self.complete, request, fallback)
                for request, fallback in zip(requests, fbs, strict=True)
            ]
        return [f.result() for f in futures]

    def _generate(self, request: LLMRequest) -> Generation:
        with self._stats_lock:
            self.stats.calls += 1
        with self._slots:
            modes = self._modes_for(request)
            for i, mode in enumerate(modes):
                try:
                    completion = self._call_with_retries(request, mode)
                except _ModeRejected as exc:
                    if i + 1 == len(modes):
                        self._count_error()
                        raise LLMBackendError(self.base_url, f"rejected the request: {exc}", exc.status) from None
                    with self._stats_lock:
                        self.stats.mode_fallbacks += 1
                    log.info("server %s rejected structured mode %s (HTTP %s); trying %s",
                             self.base_url, mode, exc.status, modes[i + 1])
                    continue
                if request.response_schema is not None and self.structured_mode == "auto":
                    with self._negotiated_lock:
                        self._negotiated[(self.base_url, self.model)] = mode
                return self._generation(completion)
        raise AssertionError("unreachable: the mode list is never empty")

    def _modes_for(self, request: LLMRequest) -> list[str]:
        if request.response_schema is None:
            return ["text"]
        if self.structured_mode != "auto":
            return [self.structured_mode]
        remembered = self.negotiated_mode()
        if remembered is not None:
            return list(_NEGOTIATION_ORDER[_NEGOTIATION_ORDER.index(remembered):])
        return list(_NEGOTIATION_ORDER)

    def _call_kwargs(self, request: LLMRequest, mode: str) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": merged_messages(request.messages) if self.merge_system else [m.model_dump() for m in request.messages],
            "temperature": request.params.temperature,
            "max_tokens": request.params.max_tokens,
        }
        if request.params.seed is not None:
            kwargs["seed"] = request.params.seed
        if self.send_role_header:
            kwargs["extra_headers"] = {ROLE_HEADER: request.role}
        schema = request.schema_json()
        if schema is not None and mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": request.response_schema.__name__, "schema": schema, "strict": False},  # type: ignore[union-attr]
            }
        elif schema is not None and mode == "json_object_schema":
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        return kwargs

    def _call_with_retries(self, request: LLMRequest, mode: str) -> Any:
        """One chat completion with bounded retries; raises LLMBackendError or _ModeRejected."""
        kwargs = self._call_kwargs(request, mode)
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            with self._stats_lock:
                self.stats.attempts += 1
            retry_after: float | None = None
            try:
                completion = self._client.chat.completions.create(**kwargs)
                self._answered = True
                return completion
            except openai.APIStatusError as exc:
                self._answered = True
                status = exc.status_code
                what = f"HTTP {status}: {self._server_message(exc)}"
                if "response_format" in kwargs and rejects_format(status, exc.body, exc.message):
                    raise _ModeRejected(status, what) from None
                if status not in RETRY_STATUSES and status < 500:
                    self._count_error()
                    raise LLMBackendError(self.base_url, refusal(request, self._server_message(exc)),
                                          status, attempt) from None
                retry_after = retry_after_seconds(exc)
                last_status: int | None = status
            except openai.APITimeoutError:
                self._raise_if_dead(attempt)
                what, last_status = f"no answer within {self.timeout_s:g} s", None
            except openai.APIConnectionError as exc:
                self._raise_if_dead(attempt)
                if self._answered and refused_connection(exc):
                    self._count_error()
                    raise ServerWentAway(self.base_url, "the server went away: it answered earlier in this process and "
                                                        "now refuses connections (stopped, crashed, or moved to another "
                                                        "port); not retried. Restart it, or check the base URL",
                                         None, attempt) from None
                what, last_status = f"connection failed: {self._scrub(str(exc))}", None
            except UnicodeDecodeError as exc:   # a body that is not UTF-8 (e.g. a byte 0xff): retried like garbage
                what, last_status = (f"unreadable response body: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at "
                                     f"position {exc.start})"), None
            except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
                what, last_status = f"unreadable response body ({type(exc).__name__})", None
            if attempt == attempts:
                self._count_error()
                raise LLMBackendError(self.base_url, f"gave up; last failure: {what}",
                                      last_status, attempt) from None
            delay = self._backoff(attempt, retry_after)
            with self._stats_lock:
                self.stats.retries += 1
            log.warning("LLM server %s: attempt %d/%d failed (%s); retrying in %.2f s",
                        self.base_url, attempt, attempts, what, delay)
            time.sleep(delay)
        raise AssertionError("unreachable: the loop returns or raises")

    def _raise_if_dead(self, attempt: int) -> None:
        """Raise BackendProcessDied when the server process behind this backend has exited."""
        if self.liveness is None:
            return
        death = self.liveness(wait_s=1.0)
        if death is not None:
            self._count_error()
            raise BackendProcessDied(self.base_url, death, attempt) from None

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1))
        with self._rng_lock:
            delay = ceiling / 2 + self._rng.random() * ceiling / 2
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.backoff_max_s))
        return delay

    def _generation(self, completion: Any) -> Generation:
        """Text and usage of a chat completion (an empty text when the server sent no content)."""
        choices = getattr(completion, "choices", None)
        if not choices:
            self._count_error()
            raise LLMBackendError(self.base_url, "answered a chat completion without choices", 200)
        text = choices[0].message.content or ""
        usage = getattr(completion, "usage", None)
        return Generation(
            text=text,
            usage=Usage(
                prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            ),
        )

    def _count_error(self) -> None:
        with self._stats_lock:
            self.stats.errors += 1

    def _scrub(self, text: str) -> str:
        """``text`` without the API key or anything that looks like one, shortened."""
        if self._key and self._key != NO_KEY:
            text = text.replace(self._key, "[redacted]")
        text = SK_TOKEN.sub("sk-[redacted]", text)
        return text if len(text) <= MAX_SERVER_MESSAGE else text[:MAX_SERVER_MESSAGE] + "…"

    def _server_message(self, exc: openai.APIStatusError) -> str:
        body = exc.body
        if isinstance(body, dict):
            inner = body.get("error", body)
            message = inner.get("message") if isinstance(inner, dict) else None
            if message:
                return self._scrub(str(message))
        return self._scrub(exc.message)
