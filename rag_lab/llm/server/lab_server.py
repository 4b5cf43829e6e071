"""The lab server (:class:`LabServer`, ``rag-lab serve``): an OpenAI-compatible endpoint (``POST
/v1/chat/completions``, ``GET /v1/models``) in front of any lab :class:`LLMBackend`, on the standard library's
:class:`http.server.ThreadingHTTPServer`, loopback only and bounded. The method: docs/backends.md, "The lab server"."""

from __future__ import annotations

import json
import logging
import random
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, get_args

from pydantic import ValidationError

from rag_lab.errors import ConfigError
from rag_lab.llm.base import LLMBackend, LLMRequest, Message, SamplingParams
from rag_lab.llm.server.chat_requests import ROLE_HEADER, ChatRequest, HTTPError, check_loopback
from rag_lab.llm.server.faults import INVALID_JSON_TEXT, SCHEMA_VIOLATION_TEXT, FaultPlan, FaultState, Latency
from rag_lab.llm.types import MESSAGE_ROLES

__all__ = ["FaultPlan", "LabServer", "Latency", "check_loopback", "serve_in_thread"]

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20
DEFAULT_ROLE = "chat"
_ROLE_LABEL = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
ResponseFormatType = Literal["json_schema", "json_object", "text"]
ALL_RESPONSE_FORMATS: tuple[ResponseFormatType, ...] = get_args(ResponseFormatType)


class LabServer:
    """An OpenAI-compatible server fronting ``backend`` on a loopback address.

    Use it as a context manager to serve from a background thread (``with LabServer(b) as s: s.url``), or call
    :meth:`serve_forever` in the foreground. ``port=0`` picks a free port. ``models`` is the model-name whitelist
    (default: ``backend.model``). A response format not in ``response_formats`` is refused with ``format_status``
    (llama-cpp-python's server: 500). ``faults`` may be replaced at any time with :meth:`set_faults`. ``status_counts``
    counts answers by HTTP status. ``latency`` (a :class:`Latency`, its text form, or seconds) delays every chat
    completion. ``peak_concurrency`` is the most chat completions that ran at once."""

    def __init__(self, backend: LLMBackend, host: str = "127.0.0.1", port: int = 0, *,
                 models: Sequence[str] | None = None, max_concurrency: int = 1, max_body_bytes: int = MAX_BODY_BYTES,
                 response_formats: Collection[ResponseFormatType] = ALL_RESPONSE_FORMATS, format_status: int = 400,
                 faults: FaultPlan | None = None, socket_timeout_s: float = 30.0,
                 latency: Latency | str | float | None = None) -> None:
        bind = check_loopback(host)
        if max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if max_body_bytes < 1:
            raise ConfigError(f"max_body_bytes must be >= 1, got {max_body_bytes}")
        unknown = set(response_formats) - set(ALL_RESPONSE_FORMATS)
        if unknown:
            raise ConfigError(f"unknown response formats {sorted(unknown)}; choose from {list(ALL_RESPONSE_FORMATS)}")
        self.backend = backend
        self.models: tuple[str, ...] = tuple(models) if models else (backend.model,)
        self.max_concurrency = max_concurrency
        self.max_body_bytes = max_body_bytes
        self.response_formats = frozenset(response_formats)
        self.format_status = format_status
        self.status_counts: Counter[int] = Counter()
        self._faults = FaultState(faults or FaultPlan())
        if isinstance(latency, str):
            latency = Latency.parse(latency)
        elif isinstance(latency, (int, float)):
            latency = Latency(kind="fixed", a=float(latency))
        self.latency: Latency | None = latency
        self._latency_rng = random.Random(latency.seed if latency else 0)
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._ids = 0
        self._running = 0
        self.peak_concurrency = 0
        self._thread: threading.Thread | None = None
        self._httpd = _make_httpd(self, bind, port, socket_timeout_s)

    @property
    def address(self) -> tuple[str, int]:
        """The bound (host, port)."""
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        """The OpenAI base URL, e.g. ``http://127.0.0.1:8765/v1``."""
        host, port = self.address
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}/v1"

    @property
    def faults(self) -> FaultPlan:
        return self._faults.plan

    def set_faults(self, plan: FaultPlan | None) -> None:
        """Replace the fault plan (its counters start afresh)."""
        self._faults = FaultState(plan or FaultPlan())

    def __repr__(self) -> str:
        return f"LabServer(url={self.url!r}, backend={self.backend.name!r}, models={list(self.models)})"

    def serve_forever(self) -> None:
        """Serve until :meth:`shutdown` (or KeyboardInterrupt in the foreground)."""
        self._httpd.serve_forever(poll_interval=0.1)

    def shutdown(self) -> None:
        """Stop serving, wake delayed requests, and close the socket."""
        self._stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> LabServer:
        self._thread = threading.Thread(target=self.serve_forever, name=f"lab-server-{self.address[1]}", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # --- request handling (called from handler threads) -------------------------------------

    def _count(self, status: int) -> None:
        with self._lock:
            self.status_counts[status] += 1

    @contextmanager
    def _admitted(self) -> Iterator[None]:
        """Hold one of the ``max_concurrency`` slots (429 when none is free), counted in ``peak_concurrency``."""
        if not self._slots.acquire(blocking=False):
            raise HTTPError(429, f"server busy: at most {self.max_concurrency} concurrent request(s)",
                            "rate_limit_error", code="busy", headers={"Retry-After": "1"})
        with self._lock:
            self._running += 1
            self.peak_concurrency = max(self.peak_concurrency, self._running)
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
            self._slots.release()

    def _next_id(self) -> str:
        with self._lock:
            self._ids += 1
            return f"chatcmpl-lab-{self._ids}"

    def models_body(self) -> dict[str, Any]:
        return {"object": "list",
                "data": [{"id": m, "object": "model", "created": 0, "owned_by": "rag_lab"} for m in self.models]}

    def parse_chat(self, raw: bytes, role_header: str | None) -> tuple[LLMRequest, str]:
        """Validate a chat-completion body into an LLMRequest and the model name (raises HTTPError)."""
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise HTTPError(400, f"request body is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise HTTPError(400, "request body must be a JSON object")
        try:
            req = ChatRequest.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise HTTPError(400, f"invalid request at {where}: {err['msg']}", param=where) from None
        if req.model not in self.models:
            raise HTTPError(404, f"The model {req.model!r} does not exist on this server; served: {list(self.models)}",
                             param="model", code="model_not_found")
        if req.stream:
            raise HTTPError(400, "streaming is not supported by the lab server", param="stream")
        if req.n not in (None, 1):
            raise HTTPError(400, "only n=1 is supported", param="n")
        bad = [m.role for m in req.messages if m.role not in MESSAGE_ROLES]
        if bad:
            raise HTTPError(400, f"unsupported message role {bad[0]!r}; allowed: {', '.join(MESSAGE_ROLES)}",
                             param="messages")
        if req.response_format is not None:
            kind = req.response_format.get("type")
            if kind not in ALL_RESPONSE_FORMATS:
                raise HTTPError(400, f"unknown response_format type {kind!r}", param="response_format")
            if kind not in self.response_formats:
                raise HTTPError(self.format_status, f"response_format type {kind!r} is not supported by this server",
                                 param="response_format")
        role = role_header if role_header and _ROLE_LABEL.match(role_header) else DEFAULT_ROLE
        try:
            params = SamplingParams(temperature=req.temperature if req.temperature is not None else 0.0,
                                    max_tokens=req.max_completion_tokens or req.max_tokens or 512, seed=req.seed)
            messages = tuple(Message(role=m.role, content=m.text()) for m in req.messages)  # type: ignore[arg-type]
        except ValidationError as exc:
            err = exc.errors()[0]
            raise HTTPError(400, f"invalid sampling parameter {err['loc'][0]}: {err['msg']}",
                             param=str(err["loc"][0])) from None
        return LLMRequest(role=role, messages=messages, params=params), req.model

    def complete(self, request: LLMRequest, model: str) -> bytes:
        """Run the faults and the backend for a validated request; the JSON body to send."""
        faults = self._faults
        if faults.fires("rate_limit"):
            retry = faults.plan.retry_after_s
            raise HTTPError(429, "injected fault: rate limit", "rate_limit_error",
                             headers={"Retry-After": f"{retry:g}"})
        if faults.fires("server_error"):
            raise HTTPError(500, "injected fault: internal server error", "server_error")
        if faults.fires("delay") and self._stopping.wait(faults.plan.delay_s):
            raise HTTPError(503, "server is shutting down", "server_error")
        if self.latency is not None:
            with self._lock:
                wait_s = self.latency.sample(self._latency_rng)
            if self._stopping.wait(wait_s):
                raise HTTPError(503, "server is shutting down", "server_error")
        try:
            response = self.backend.complete(request)
        except Exception as exc:  # the backend's failure becomes the client's 500
            log.exception("lab server backend %s failed", self.backend.name)
            raise HTTPError(500, f"backend error: {type(exc).__name__}: {exc}", "server_error") from None
        text, finish = response.text, "stop"
        if faults.fires("content"):
            kind = faults.plan.content_fault
            if kind == "truncated_json":
                text, finish = text[: len(text) // 2], "length"
            elif kind == "invalid_json":
                text = INVALID_JSON_TEXT
            else:
                text = SCHEMA_VIOLATION_TEXT
        body = json.dumps({
            "id": self._next_id(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": response.usage.prompt_tokens,
                "completion_tokens": response.usage.completion_tokens,
                "total_tokens": response.usage.total_tokens,
            },
        }).encode("utf-8")
        if faults.fires("malformed_body"):
            body = body[: len(body) // 2]
        return body


def _make_httpd(lab: LabServer, bind: str, port: int, socket_timeout_s: float) -> ThreadingHTTPServer:
    class Handler(_Handler):
        server_ref = lab
        timeout = socket_timeout_s

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True
        address_family = socket.AF_INET6 if ":" in bind else socket.AF_INET

    return Server((bind, port), Handler)


class _Handler(BaseHTTPRequestHandler):
    """One HTTP request. Every answer is JSON; a connection closes after each answer."""

    server_ref: LabServer
    server_version = "rag-lab-server"
    sys_version = ""
    _unread = 0  # bytes of a refused body to read and drop after the answer (see _discard_unread_body)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("lab server %s - %s", self.address_string(), format % args)

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.server_ref._count(status)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            log.debug("lab server: client went away before the answer was sent")
        self.close_connection = True

    def _send_error(self, err: HTTPError) -> None:
        self._send(err.status, json.dumps(err.body).encode("utf-8"), err.headers)

    def _discard_unread_body(self, limit: int) -> None:
        """Read (and drop) up to ``limit`` bytes of a body we refused, so the client sees our
        answer instead of a connection reset."""
        try:
            self.connection.settimeout(0.5)
            left = limit
            while left > 0:
                chunk = self.rfile.read1(min(left, 65536))
                if not chunk:
                    break
                left -= len(chunk)
        except (OSError, ValueError):
            return  # the client went away while we drained its body; nothing left to answer

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._send(200, json.dumps(self.server_ref.models_body()).encode("utf-8"))
        else:
            self._send_error(HTTPError(404, f"no route GET {self.path}", code="not_found"))

    def do_POST(self) -> None:
        lab = self.server_ref
        try:
            if self.path.rstrip("/") != "/v1/chat/completions":
                raise HTTPError(404, f"no route POST {self.path}", code="not_found")
            request, model = lab.parse_chat(self._read_body(lab.max_body_bytes), self.headers.get(ROLE_HEADER))
            with lab._admitted():
                body = lab.complete(request, model)
        except HTTPError as err:
            self._send_error(err)
            if self._unread:
                self._discard_unread_body(self._unread)
            return
        self._send(200, body)

    def _read_body(self, limit: int) -> bytes:
        """The request body, of the declared Content-Length, at most ``limit`` bytes (raises HTTPError)."""
        length_header = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding") or length_header is None:
            raise HTTPError(411, "a Content-Length header is required (chunked bodies are refused)")
        try:
            length = int(length_header)
        except ValueError:
            length = -1
        if length < 0:
            raise HTTPError(400, f"invalid Content-Length {length_header[:40]!r}")
        if length > limit:
            self._unread = min(length, 4 * limit)
            raise HTTPError(413, f"request body of {length} bytes exceeds the limit of {limit} bytes",
                            code="request_too_large")
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            raise HTTPError(408, "timed out reading the request body") from None
        if len(raw) < length:
            raise HTTPError(400, f"request body ended after {len(raw)} of {length} bytes")
        return raw


@contextmanager
def serve_in_thread(backend: LLMBackend, host: str = "127.0.0.1", port: int = 0, **kwargs: Any) -> Iterator[str]:
    """Serve ``backend`` from a background thread; yields the base URL (``http://127.0.0.1:P/v1``).
    Keyword arguments go to :class:`LabServer`."""
    with LabServer(backend, host, port, **kwargs) as server:
        yield server.url
