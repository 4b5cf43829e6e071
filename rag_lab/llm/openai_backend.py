"""The OpenAI-compatible backend (:class:`OpenAIBackend`): the official ``openai`` client against any base URL (OpenAI,
vLLM, Ollama, llama-cpp-python's server, the lab server), with negotiated structured output, the client's own retries
(watched by :class:`_Watched`), bounded concurrency and the API key kept out of every repr, cache key, log line and
error. The method: docs/backends.md, "The OpenAI-compatible backend in detail"."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal, get_args

import httpx2
import openai

from rag_lab.errors import BackendProcessDied, ConfigError, LLMBackendError, ServerWentAway
from rag_lab.llm.base import Completion, LLMBackend, LLMRequest, LLMResponse, Usage
from rag_lab.llm.openai_wire import (
    MAX_SERVER_MESSAGE,
    NO_KEY,
    SK_TOKEN,
    attempt_of,
    display_url,
    merged_messages,
    refused_connection,
    rejects_format,
    retried,
)
from rag_lab.llm.prompts import question_of
from rag_lab.llm.server.chat_requests import ROLE_HEADER
from rag_lab.llm.structured import Fallback

log = logging.getLogger(__name__)

__all__ = ["NO_KEY", "BackendStats", "OpenAIBackend", "display_url", "rejects_format"]

StructuredMode = Literal["auto", "json_schema", "json_object_schema", "text"]
#: The modes ``auto`` tries, in this order: every other mode.
_NEGOTIATION_ORDER: tuple[str, ...] = get_args(StructuredMode)[1:]


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
    """What a server's refusal of ``request`` says: the role and question of the call (which of a sweep's thousand calls
    it was), the server's own words, and for a prompt longer than the model's context what to change."""
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

    ``model``, ``base_url`` and ``api_key`` default to ``RAG_LAB_MODEL``, ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` (a
    server that needs no key gets :data:`NO_KEY`). ``timeout_s`` bounds each HTTP attempt and ``max_retries`` counts the
    client's retries after the first. ``cache_label`` names the server in cache keys (default: the base URL without
    credentials); give servers on changing ports a stable label. ``send_role_header`` adds ``X-Rag-Lab-Role: <role>`` so
    a lab server knows which role to play (other servers ignore it). ``merge_system`` folds the system message into the
    first user message (``system + "\n\n" + user``) for servers whose chat format drops system messages
    (llama-cpp-python's ``gemma``); it is part of the cache identity. ``liveness(wait_s=...)`` asks whether the server
    process behind the backend died: None while it runs, else a :class:`~rag_lab.llm.local.process.ProcessDeath`.
    """

    name = "openai"
    #: (base URL, model) → the structured mode that worked; shared by every instance in the process.
    _negotiated: ClassVar[dict[tuple[str, str], str]] = {}
    _negotiated_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, model: str | None = None, *, base_url: str | None = None, api_key: str | None = None,
                 structured_mode: StructuredMode = "auto", timeout_s: float = 60.0, max_retries: int = 3,
                 max_concurrency: int = 4, cache_label: str | None = None, send_role_header: bool = True,
                 merge_system: bool = False, liveness: Callable[..., Any] | None = None) -> None:
        model = model or os.environ.get("RAG_LAB_MODEL")
        if model is not None and not model.strip():
            raise ConfigError("OpenAIBackend needs a model name, got an empty one")
        if structured_mode not in get_args(StructuredMode):
            raise ConfigError(f"structured_mode must be one of auto, {', '.join(_NEGOTIATION_ORDER)}; got {structured_mode!r}")
        if timeout_s <= 0:
            raise ConfigError(f"need timeout_s > 0, got {timeout_s}")
        if max_retries < 0 or max_concurrency < 1:
            raise ConfigError(f"need max_retries >= 0 and max_concurrency >= 1, got {max_retries}, {max_concurrency}")
        self._key = api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY
        self._client = openai.OpenAI(api_key=self._key, base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
                                     timeout=timeout_s, max_retries=max_retries, http_client=_Watched(self))
        self.base_url = display_url(str(self._client.base_url))
        self.structured_mode: StructuredMode = structured_mode
        self.timeout_s = timeout_s
        self.max_concurrency = max_concurrency
        self.liveness = liveness
        self._answered = False  # the server answered once: a refused connection now means it went away
        self.stats = BackendStats()
        self._stats_lock = threading.Lock()
        super().__init__(model or self._only_model())
        self.cache_label = cache_label or self.base_url
        self.send_role_header = send_role_header
        self.merge_system = merge_system
        self._slots = threading.BoundedSemaphore(max_concurrency)

    def __repr__(self) -> str:
        return (f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r}, "
                f"structured_mode={self.structured_mode!r}, max_concurrency={self.max_concurrency}"
                + (", merge_system=True)" if self.merge_system else ")"))

    @property
    def max_retries(self) -> int:
        """How many times the client retries a failed attempt of a call (set when the backend is made)."""
        return self._client.max_retries

    def cache_identity(self) -> tuple[str, str]:
        """("openai", "model@server label"): the same model name on two servers is two models."""
        return self.name, f"{self.model}@{self.cache_label}" + ("|merge_system" if self.merge_system else "")

    def _only_model(self) -> str:
        """The one model the server lists at ``/v1/models`` (no model was given)."""
        given = "no model given (pass --model / model=... or set RAG_LAB_MODEL)"
        try:
            models = sorted(m.id for m in self._client.with_options(max_retries=0).models.list())
        except openai.APIStatusError as exc:
            raise ConfigError(f"{given}, and {self.base_url} did not list its models: HTTP {exc.status_code}: "
                              f"{self._server_message(exc)}") from None
        except (openai.APIConnectionError, openai.APIResponseValidationError, _Stop) as exc:
            what = _what(exc.__cause__ or exc, self.timeout_s) if isinstance(exc, openai.APIConnectionError) else str(exc)
            raise ConfigError(f"{given}, and {self.base_url} could not be asked for its models: {self._scrub(what)}") from None
        if len(models) != 1:
            raise ConfigError(f"{given} and {self.base_url} serves {len(models)} models, not exactly one: "
                              f"{', '.join(models[:20]) or 'none'}")
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

    def _count(self, **added: int) -> None:
        """Add to the :attr:`stats` counters named."""
        with self._stats_lock:
            for name, n in added.items():
                setattr(self.stats, name, getattr(self.stats, name) + n)

    # --- calls ---------------------------------------------------------------------------------

    def complete_many(self, requests: Sequence[LLMRequest], fallbacks: Sequence[Fallback] | None = None,
                      max_workers: int | None = None) -> list[LLMResponse]:
        """:meth:`complete` every request on a thread pool (``max_workers`` defaults to
        ``max_concurrency``) and return the responses in the order of ``requests``. The first
        error (in request order) is raised after every call has finished."""
        if fallbacks is not None and len(fallbacks) != len(requests):
            raise ConfigError(f"got {len(fallbacks)} fallbacks for {len(requests)} requests")
        fbs = list(fallbacks) if fallbacks is not None else [None] * len(requests)
        workers = max(1, min(max_workers or self.max_concurrency, len(requests)))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openai-backend") as pool:
            responses = pool.map(self.complete, requests, fbs)  # every call submitted now, all finished on exit
        return list(responses)

    def _generate(self, request: LLMRequest) -> Completion:
        self._count(calls=1)
        with self._slots:
            modes = self._modes_for(request)
            for mode, following in zip(modes, [*modes[1:], None], strict=True):
                try:
                    chat = self._call(request, mode)
                    break
                except _ModeRejected as exc:
                    if following is None:
                        self._count(errors=1)
                        raise LLMBackendError(self.base_url, f"rejected the request: {exc}", exc.status) from None
                    self._count(mode_fallbacks=1)
                    log.info("server %s rejected structured mode %s (HTTP %s); trying %s",
                             self.base_url, mode, exc.status, following)
            if request.response_schema is not None and self.structured_mode == "auto":
                with self._negotiated_lock:
                    self._negotiated[(self.base_url, self.model)] = mode
            return self._completion(chat)

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

    def _call(self, request: LLMRequest, mode: str) -> Any:
        """One chat completion, retried by the client; raises LLMBackendError or _ModeRejected."""
        kwargs = self._call_kwargs(request, mode)
        try:
            return self._client.chat.completions.create(**kwargs)
        except _Stop as exc:
            self._count(errors=1)
            raise exc.error from None
        except openai.APIStatusError as exc:
            status, message = exc.status_code, self._server_message(exc)
            if "response_format" in kwargs and rejects_format(status, exc.body, exc.message):
                raise _ModeRejected(status, f"HTTP {status}: {message}") from None
            self._count(errors=1)
            what = f"gave up; last failure: HTTP {status}: {message}" if retried(status) else refusal(request, message)
            raise LLMBackendError(self.base_url, what, status, attempt_of(exc.request)) from None
        except openai.APIConnectionError as exc:  # a timeout too; the HTTP client asked whether the process died
            self._count(errors=1)
            what = self._scrub(_what(exc.__cause__ or exc, self.timeout_s))
            raise LLMBackendError(self.base_url, f"gave up; last failure: {what}", None, attempt_of(exc.request)) from None

    def _failed(self, attempt: int, what: str) -> None:
        """Say that an attempt failed in a way the client retries, unless it was the last."""
        if attempt <= self.max_retries:
            log.warning("LLM server %s: attempt %d/%d failed (%s); retrying", self.base_url, attempt,
                        self.max_retries + 1, self._scrub(what))

    def _gone(self, request: httpx2.Request, exc: httpx2.TransportError) -> LLMBackendError | None:
        """The error that ends a call at once when an attempt could not reach the server: the server process behind
        this backend has exited, or a server that answered earlier now refuses connections; else None."""
        attempt = attempt_of(request)
        death = self.liveness(wait_s=1.0) if self.liveness is not None else None
        if death is not None:
            return BackendProcessDied(self.base_url, death, attempt)
        if self._answered and refused_connection(exc):
            return ServerWentAway(self.base_url, "the server went away: it answered earlier in this process and now "
                                                 "refuses connections (stopped, crashed, or moved to another port); not "
                                                 "retried. Restart it, or check the base URL", None, attempt)
        return None

    def _completion(self, chat: Any) -> Completion:
        """Text and usage of the server's chat completion ``chat`` (an empty text when it sent no content)."""
        choices = getattr(chat, "choices", None)
        if not choices:
            self._count(errors=1)
            raise LLMBackendError(self.base_url, "answered a chat completion without choices", 200)
        usage = getattr(chat, "usage", None)
        return Completion(text=choices[0].message.content or "",
                          usage=Usage(prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                                      completion_tokens=getattr(usage, "completion_tokens", 0) or 0))

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


class _Stop(openai.OpenAIError):
    """Raised by :class:`_Watched` to end a call at once: the openai client re-raises its own errors unretried.
    ``error`` is what the backend raises."""

    def __init__(self, error: LLMBackendError) -> None:
        super().__init__(error.reason)
        self.error = error


class _Unreadable(httpx2.DecodingError):
    """A 2xx body that is not JSON (cut short, not UTF-8): a request error, so that the openai client retries it like
    a dropped connection (it does not retry a body it cannot parse)."""


def _what(exc: BaseException, timeout_s: float) -> str:
    """An attempt's failure in words: no answer in time, an unreadable body, or a failed connection."""
    if isinstance(exc, httpx2.TimeoutException):
        return f"no answer within {timeout_s:g} s"
    return str(exc) if isinstance(exc, _Unreadable) else f"connection failed: {exc}"


class _Watched(openai.DefaultHttpxClient):
    """The HTTP client of an :class:`OpenAIBackend`'s ``openai`` client, under its retries: each attempt is counted, an
    unreadable 2xx body is raised as :class:`_Unreadable` (retried), a 5xx that refuses the response format is marked
    ``x-should-retry: false`` (the next format is tried at once), and when a server cannot be reached it asks whether
    its process died or it went away (:meth:`OpenAIBackend._gone`), ending the call at once if so."""

    def __init__(self, backend: OpenAIBackend) -> None:
        super().__init__()
        self._backend = backend

    def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        backend, attempt = self._backend, attempt_of(request)
        if request.method == "POST":  # a chat completion, the backend's only POST
            backend._count(attempts=1, retries=int(attempt > 1))
        try:
            response = super().send(request, **kwargs)
            response.read()
        except httpx2.TransportError as exc:
            gone = backend._gone(request, exc)
            if gone is not None:
                raise _Stop(gone) from None
            backend._failed(attempt, _what(exc, backend.timeout_s))
            raise
        backend._answered = True
        status = response.status_code
        if 200 <= status < 300 and (unreadable := _unreadable(response.content)):
            backend._failed(attempt, unreadable)
            raise _Unreadable(unreadable, request=request)
        if status >= 500 and b'"response_format"' in request.content and rejects_format(status, None, response.text):
            response.headers["x-should-retry"] = "false"
        elif retried(status):
            backend._failed(attempt, f"HTTP {status}")
        return response


def _unreadable(body: bytes) -> str | None:
    """Why a 2xx ``body`` cannot be read as JSON, or None when it can."""
    try:
        json.loads(body)
    except UnicodeDecodeError as err:
        return f"unreadable response body: not UTF-8 (byte 0x{err.object[err.start]:02x} at position {err.start})"
    except ValueError as err:
        return f"unreadable response body: not JSON ({err})"
    return None

