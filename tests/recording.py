"""A backend that keeps a cost ledger of the calls it passes on: how a test counts calls outside a trace, now
that no ledger records calls behind the caller's back (:mod:`rag_lab.llm.ledger`)."""

from __future__ import annotations

from rag_lab.llm.base import Completion, LLMBackend, LLMRequest, LLMResponse
from rag_lab.llm.ledger import Ledger, PriceTable
from rag_lab.llm.structured import Fallback


class Recording(LLMBackend):
    """``inner`` unchanged (its name, model and cache identity, so every request and key stays the same), with
    each response it returns appended to :attr:`ledger`."""

    def __init__(self, inner: LLMBackend, prices: PriceTable | None = None) -> None:
        super().__init__(inner.model)
        self.inner = inner
        self.name = inner.name
        self.ledger = Ledger(prices)

    def cache_identity(self) -> tuple[str, str]:
        return self.inner.cache_identity()

    def _generate(self, request: LLMRequest) -> Completion:  # never called: complete is the inner backend's
        raise NotImplementedError

    def complete(self, request: LLMRequest, fallback: Fallback = None) -> LLMResponse:
        response = self.inner.complete(request, fallback)
        self.ledger.record(response)
        return response

    def since(self, start: int) -> Ledger:
        """The calls recorded from the ``start``-th on, as a ledger of their own."""
        return Ledger(self.ledger.prices, self.ledger.records[start:])
