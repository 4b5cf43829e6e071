"""What the lab server (:mod:`rag_lab.llm.server.lab_server`) accepts and refuses: the loopback-only bind address,
the chat-completion request body it parses, and its OpenAI-style error answer."""

from __future__ import annotations

import ipaddress
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rag_lab.errors import ConfigError

#: The header that names the pipeline role of a chat completion (the simulator plays that role).
ROLE_HEADER = "X-Rag-Lab-Role"


def check_loopback(host: str) -> str:
    """Return the address to bind for ``host`` if it is a loopback host; raise ConfigError otherwise."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        raise ConfigError(
            f"refusing to bind {host!r}: the lab server binds only loopback addresses "
            "(127.0.0.0/8, ::1 or localhost)"
        ) from None
    if not address.is_loopback:
        raise ConfigError(
            f"refusing to bind {host!r}: it is not a loopback address; the lab server binds only "
            "127.0.0.0/8, ::1 or localhost"
        )
    return str(address)


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        """The message text (text parts of a multi-part content joined)."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(str(part.get("text", "")) for part in self.content if part.get("type") == "text")


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    temperature: float | None = None
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    seed: int | None = None
    stream: bool | None = False
    n: int | None = 1
    response_format: dict[str, Any] | None = None


class HTTPError(Exception):
    """An error answer: status, OpenAI-style error body, extra headers."""

    def __init__(self, status: int, message: str, err_type: str = "invalid_request_error", param: str | None = None,
                 code: str | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": {"message": message, "type": err_type, "param": param, "code": code}}
        self.headers = headers or {}
