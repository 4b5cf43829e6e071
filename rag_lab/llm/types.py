"""The value types of an LLM call: the request (messages, sampling parameters), what a backend generated, the validated
response, and :class:`CallRecord`, the one record of a call that the cost ledger (:mod:`rag_lab.llm.ledger`, priced) and
the question's trace (:mod:`rag_lab.pipeline.trace`, with the prompt and raw output) derive their views from."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from rag_lab.llm.structured import Outcome

#: The roles a chat message may have (the lab server refuses any other).
MessageRole = Literal["system", "user", "assistant"]
MESSAGE_ROLES: tuple[str, ...] = get_args(MessageRole)


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: MessageRole
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
        """The response schema's JSON schema, a fresh copy (pydantic builds it once a class: it took a third of a
        simulated sweep's time when built for every call)."""
        return None if self.response_schema is None else json.loads(_schema_text(self.response_schema))

    def cache_key(self, backend: str, model: str) -> str:
        """A digest of everything that determines the response: backend, model, messages,
        schema and sampling parameters (the role is a label and is left out)."""
        payload = {"backend": backend, "model": model, "messages": [m.model_dump() for m in self.messages],
                   "schema": self.schema_json(), "params": self.params.model_dump()}
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@lru_cache(maxsize=256)
def _schema_text(schema: type[BaseModel]) -> str:
    return json.dumps(schema.model_json_schema())


class Usage(BaseModel):
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Completion(BaseModel):
    """What a backend produced for one request, before validation. ``knobs``: for a simulated
    backend, every behaviour knob drawn where it applied (``{"knob", "rate", "draw", "fired"}``);
    stored with it, so a cached response reports the knobs that shaped it. The response cache and the
    cassettes store it under the name ``generation`` (the class's name is not stored)."""

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
    knobs: list[dict[str, Any]] = Field(default_factory=list, description="simulator knobs drawn (see Completion)")


class CallRecord(BaseModel):
    """One LLM call, as every view of it keeps it: who asked (``role``), who answered (``backend``, ``model``), the
    validation ``outcome`` and its ``reason``, token usage, wall latency as served (a cache hit is fast), the backend's
    modelled latency (None when it has no speed model), whether the cache answered, and the simulator knobs drawn. The
    ledger adds the price (:class:`~rag_lab.llm.ledger.PricedCall`), the trace the prompt and raw output
    (:class:`~rag_lab.pipeline.trace.LLMCall`); both are built by :meth:`from_response`."""

    model_config = ConfigDict(extra="forbid")

    role: str
    backend: str = ""
    model: str = ""
    outcome: Outcome | str
    reason: str = ""
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    latency_s: float = Field(ge=0.0)
    modelled_latency_s: float | None = Field(default=None, ge=0.0)
    cached: bool = False
    knobs: list[dict[str, Any]] = Field(
        default_factory=list,
        description="simulator behaviour knobs drawn where they applied: knob, rate, draw, fired (every one "
                    "that fired is listed, not only the first)")

    @classmethod
    def from_response(cls, response: LLMResponse, **extra: Any) -> CallRecord:
        """The record (of this class: a view adds its own ``extra`` fields) of ``response``: the one place its
        fields are copied."""
        return cls(role=response.role, backend=response.backend, model=response.model, outcome=response.outcome,
                   reason=response.reason, prompt_tokens=response.usage.prompt_tokens,
                   completion_tokens=response.usage.completion_tokens, latency_s=response.latency_s,
                   modelled_latency_s=response.modelled_latency_s, cached=response.cached,
                   knobs=list(response.knobs), **extra)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def fired(self) -> list[str]:
        """The knobs that fired on this call, in the order drawn."""
        return [k["knob"] for k in self.knobs if k.get("fired")]
