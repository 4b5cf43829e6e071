"""The one LLM backend interface every role goes through.

A backend turns an :class:`LLMRequest` (chat messages, the role asking, an optional pydantic
response schema, sampling parameters) into an :class:`LLMResponse` (text, the validated object
or the fallback with its reason, token usage, wall latency and, for simulated backends, modelled
latency). Subclasses implement :meth:`LLMBackend._generate`; :meth:`LLMBackend.complete` adds
validation and records the call in every active cost ledger (:mod:`rag_lab.llm.ledger`).
"""

from __future__ import annotations

import hashlib
import json
import time
from abc import ABC, abstractmethod
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rag_lab.llm.structured import Fallback, Outcome, validate_output


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


class SamplingParams(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=512, ge=1, le=32768)
    seed: int | None = 0


class LLMRequest(BaseModel):
    """One call. ``role`` names the pipeline role (route, rewrite, hyde, controller, answer,
    judge, grade); ``response_schema`` asks for structured output validated against it."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    role: str
    messages: tuple[Message, ...] = Field(min_length=1)
    response_schema: type[BaseModel] | None = None
    params: SamplingParams = SamplingParams()

    def schema_json(self) -> dict[str, Any] | None:
        return None if self.response_schema is None else self.response_schema.model_json_schema()

    def cache_key(self, backend: str, model: str) -> str:
        """A digest of everything that determines the response: backend, model, messages,
        schema and sampling parameters (the role is a label and is left out)."""
        payload = {
            "backend": backend,
            "model": model,
            "messages": [m.model_dump() for m in self.messages],
            "schema": self.schema_json(),
            "params": self.params.model_dump(),
        }
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Usage(BaseModel):
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Generation(BaseModel):
    """What a backend produced for one request, before validation. ``knobs``: for a simulated
    backend, every behaviour knob drawn where it applied (``{"knob", "rate", "draw", "fired"}``);
    stored with the generation, so a cached response reports the knobs that shaped it."""

    text: str
    usage: Usage
    modelled_latency_s: float | None = None
    cached: bool = False
    knobs: list[dict[str, Any]] = Field(default_factory=list)


class LLMResponse(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    role: str
    text: str
    parsed: BaseModel | None = None
    outcome: Outcome
    reason: str = ""
    usage: Usage
    latency_s: float = Field(ge=0.0, description="wall-clock seconds of this call as served (a cache hit is fast)")
    modelled_latency_s: float | None = Field(default=None, description="latency the backend's speed model assigns")
    backend: str
    model: str
    cached: bool = False
    knobs: list[dict[str, Any]] = Field(default_factory=list, description="simulator knobs drawn (see Generation)")


class LLMBackend(ABC):
    """Base of every backend. ``name`` identifies the backend kind, ``model`` the model."""

    name: str = "backend"

    def __init__(self, model: str) -> None:
        self.model = model

    @abstractmethod
    def _generate(self, request: LLMRequest) -> Generation:
        """Produce the raw text and usage for ``request``."""

    def cache_identity(self) -> tuple[str, str]:
        """(backend, model) as they enter cache keys; backends whose output depends on more
        (e.g. the simulator's seed and profile) fold that into the model string."""
        return self.name, self.model

    def complete(self, request: LLMRequest, fallback: Fallback = None) -> LLMResponse:
        """Generate, validate against ``request.response_schema`` (repair, else ``fallback``),
        record the call in the active ledgers, and return the response."""
        from rag_lab.llm.ledger import record_call

        start = time.perf_counter()
        gen = self._generate(request)
        latency = time.perf_counter() - start
        check = validate_output(gen.text, request.response_schema, fallback)
        response = LLMResponse(
            role=request.role,
            text=gen.text,
            parsed=check.parsed,
            outcome=check.outcome,
            reason=check.reason,
            usage=gen.usage,
            latency_s=latency,
            modelled_latency_s=gen.modelled_latency_s,
            backend=self.name,
            model=self.model,
            cached=gen.cached,
            knobs=gen.knobs,
        )
        record_call(response)
        return response
