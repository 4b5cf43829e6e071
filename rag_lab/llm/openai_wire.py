"""What the OpenAI-compatible backend (:mod:`rag_lab.llm.openai_backend`) needs to know about the wire and
its servers: URLs safe to print, the key sent to servers that need none, how a server says it refuses a
response format, a refused connection, which statuses the ``openai`` client retries and which attempt a request
is, and Gemma-style message folding."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

import httpx2

from rag_lab.llm.types import Message

#: What is sent as the key to servers that need none (llama-cpp-python, the lab server).
NO_KEY = "no-key"
SK_TOKEN = re.compile(r"\bsk-[A-Za-z0-9_\-\*\.]{2,}")
MAX_SERVER_MESSAGE = 300
#: Statuses below 500 that the ``openai`` client retries: request timeout, lock timeout and rate limiting.
RETRY_STATUSES = frozenset({408, 409, 429})
#: The header in which the ``openai`` client sends how many times it has retried a request.
RETRY_COUNT_HEADER = "x-stainless-retry-count"
#: Statuses with which servers refuse a response format (llama-cpp-python: 500), and the words that say so.
FORMAT_STATUSES = frozenset({400, 415, 422, 500, 501})
FORMAT_WORDS = re.compile(r"response[_ ]?format|json[_ ]schema|json[_ ]object|grammar|structured output", re.IGNORECASE)


def display_url(url: str) -> str:
    """``url`` without user info, query or fragment: safe to print and to put in cache keys."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def merged_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """The messages with the system message(s) folded into the first user message, as Gemma's own
    chat template does (``system + "\n\n" + user``)."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    rest = [m.model_dump() for m in messages if m.role != "system"]
    if system:
        first_user = next((i for i, m in enumerate(rest) if m["role"] == "user"), None)
        if first_user is None:
            rest.insert(0, {"role": "user", "content": system})
        else:
            rest[first_user] = {"role": "user", "content": f"{system}\n\n{rest[first_user]['content']}"}
    return rest


def refused_connection(exc: BaseException) -> bool:
    """Whether a connection error was a refused connection (nothing listens on the port), from its cause chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError) or "Connection refused" in str(current) or "Errno 111" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def retried(status: int) -> bool:
    """Whether the ``openai`` client retries a response with this status (unless it says ``x-should-retry: false``)."""
    return status in RETRY_STATUSES or status >= 500


def attempt_of(request: httpx2.Request) -> int:
    """Which attempt of its call ``request`` is (1 for the first), from the retry count the client sends."""
    return int(request.headers.get(RETRY_COUNT_HEADER, "0")) + 1


def rejects_format(status: int, body: object, message: str = "") -> bool:
    """Whether an error response says the server does not take the request's ``response_format``: a status servers use
    for it (400, 415, 422, 500, 501) and a body that names the format — an OpenAI-style ``param`` of ``response_format``
    anywhere in it, or the words of :data:`FORMAT_WORDS` in its text (llama-cpp-python's 500 carries a pydantic error
    located at ``response_format``: "Input should be 'text' or 'json_object'")."""
    if status not in FORMAT_STATUSES:
        return False
    text = json.dumps(body, default=str) if body is not None else ""
    return bool(FORMAT_WORDS.search(f"{text} {message}"))
