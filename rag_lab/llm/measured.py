"""A real backend whose measured wall time is its modelled latency, and which says what model it runs:
:class:`MeasuredLatency` stamps the call's seconds into ``modelled_latency_s`` *inside* the cache and the
cassette, so a cached or replayed call reports the latency of the call that produced it; ``provenance`` is
what a cassette's header records."""

from __future__ import annotations

import time

from rag_lab.llm.base import LLMBackend, WrappedBackend
from rag_lab.llm.types import Completion, LLMRequest


class MeasuredLatency(WrappedBackend):
    """``inner`` with wall-clock latency as modelled latency and a ``provenance`` record."""

    def __init__(self, inner: LLMBackend, provenance: dict[str, str] | None = None) -> None:
        super().__init__(inner)
        self.provenance = dict(provenance or {})

    def __repr__(self) -> str:
        return f"MeasuredLatency({self.inner!r})"

    def __getattr__(self, name: str):  # the inner backend's stats, death hook, base_url …
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _generate(self, request: LLMRequest) -> Completion:
        start = time.perf_counter()
        generation = self.inner._generate(request)
        if generation.modelled_latency_s is None:
            generation = generation.model_copy(update={"modelled_latency_s": round(time.perf_counter() - start, 3)})
        return generation
