"""The one LLM backend interface every role goes through: a backend turns an :class:`LLMRequest` into an
:class:`LLMResponse`. Subclasses implement :meth:`LLMBackend._generate`; :meth:`LLMBackend.complete` adds
validation; the cost ledger is made from the responses (:mod:`rag_lab.llm.ledger`)."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod

from rag_lab.llm.structured import Fallback, validate_output
from rag_lab.llm.types import Completion, LLMRequest, LLMResponse, Message, SamplingParams, Usage

# The value types live in rag_lab.llm.types; they are importable from here too, beside the backend.
__all__ = ["Completion", "LLMBackend", "LLMRequest", "LLMResponse", "Message", "SamplingParams", "Usage", "WrappedBackend"]


class LLMBackend(ABC):
    """Base of every backend. ``name`` identifies the backend kind, ``model`` the model."""

    name: str = "backend"

    def __init__(self, model: str) -> None:
        self.model = model

    @abstractmethod
    def _generate(self, request: LLMRequest) -> Completion:
        """Produce the raw text and usage for ``request``."""

    def cache_identity(self) -> tuple[str, str]:
        """(backend, model) as they enter cache keys; backends whose output depends on more
        (e.g. the simulator's seed and profile) fold that into the model string."""
        return self.name, self.model

    def complete(self, request: LLMRequest, fallback: Fallback = None) -> LLMResponse:
        """Generate, validate against ``request.response_schema`` (repair, else ``fallback``), and return
        the response."""
        start = time.perf_counter()
        gen = self._generate(request)
        latency = time.perf_counter() - start
        check = validate_output(gen.text, request.response_schema, fallback)
        return LLMResponse(role=request.role, text=gen.text, parsed=check.parsed, outcome=check.outcome,
                           reason=check.reason, usage=gen.usage, latency_s=latency,
                           modelled_latency_s=gen.modelled_latency_s, backend=self.name, model=self.model,
                           cached=gen.cached, knobs=gen.knobs)


class WrappedBackend(LLMBackend):
    """A backend in front of ``inner`` (the cache, a recording, a token cap, …): it reports ``inner``'s ``name``,
    ``model`` and cache identity, so ledgers and cache keys show the real backend."""

    def __init__(self, inner: LLMBackend) -> None:
        super().__init__(inner.model)
        self.inner = inner
        self.name = inner.name

    def cache_identity(self) -> tuple[str, str]:
        return self.inner.cache_identity()
