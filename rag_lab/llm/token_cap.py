"""A completion-token cap in front of any backend: every call's ``max_tokens`` lowered to at most ``cap``.

The pipeline asks up to 512 tokens for an answer; a tiny local model that rambles to that limit takes
half a minute per answer on two busy cores. Capping is a setting of the *run* (``--max-tokens``,
``backend.max_tokens`` in a sweep), not of the model, and the cap sits outside the response cache, so
capped and uncapped answers are cached under different keys and never mix."""

from __future__ import annotations

from rag_lab.errors import ConfigError
from rag_lab.llm.base import Completion, LLMBackend, LLMRequest, WrappedBackend


class TokenCapBackend(WrappedBackend):
    """``inner`` with every request's ``max_tokens`` capped at ``cap``."""

    def __init__(self, inner: LLMBackend, cap: int) -> None:
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ConfigError(f"the token cap must be a positive integer, got {cap!r}")
        super().__init__(inner)
        self.cap = cap

    def __repr__(self) -> str:
        return f"TokenCapBackend({self.inner!r}, cap={self.cap})"

    def _generate(self, request: LLMRequest) -> Completion:
        if request.params.max_tokens <= self.cap:
            return self.inner._generate(request)
        params = request.params.model_copy(update={"max_tokens": self.cap})
        return self.inner._generate(request.model_copy(update={"params": params}))
