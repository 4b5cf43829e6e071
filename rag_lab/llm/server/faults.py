"""What the lab server (:mod:`rag_lab.llm.server.lab_server`) injects to stand in for a real, imperfect API: failures
for tests (:class:`FaultPlan`: 429 storms, 500s, slow answers, a truncated response body, truncated or
non-JSON message content, schema-violating decisions) and the time a remote API takes (:class:`Latency`)."""

from __future__ import annotations

import math
import random
import threading
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from rag_lab.errors import ConfigError


def _count(value: int | str) -> int | str:
    if isinstance(value, int) and value < 0:
        raise ConfigError(f"a fault count must be >= 0 or 'always', got {value}")
    return value


#: How many requests a fault applies to: a count of requests (>= 0), or ``"always"``.
Times = Annotated[int | Literal["always"], AfterValidator(_count)]
ContentFault = Literal["truncated_json", "invalid_json", "schema_violation"]
#: The distributions of a :class:`Latency`.
LatencyKind = Literal["fixed", "uniform", "lognormal"]

#: The content a ``schema_violation`` fault answers with: a hallucinated controller action.
SCHEMA_VIOLATION_TEXT = '{"action": "search_web", "queries": ["latest news"]}'
INVALID_JSON_TEXT = "Sure! I think the best action is to answer, because the evidence looks fine."


class FaultPlan(BaseModel):
    """Failures the server injects, applied in this order to each well-formed request:

    ``rate_limit`` requests get ``429`` (with ``Retry-After: retry_after_s``), then ``server_error`` requests get
    ``500``; ``delay`` requests wait ``delay_s`` before answering (while holding their concurrency slot);
    ``malformed_body`` requests get a ``200`` whose JSON body is cut in half; ``content_fault`` replaces the model's
    text on ``content_times`` requests: ``truncated_json`` (the first half of it, ``finish_reason: length``),
    ``invalid_json`` (prose) or ``schema_violation`` (:data:`SCHEMA_VIOLATION_TEXT`).

    Each count is spent as the fault fires, so ``FaultPlan(rate_limit=2, server_error=1)`` answers
    429, 429, 500 and then normally. ``"always"`` never runs out."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate_limit: Times = 0
    retry_after_s: float = Field(default=0.0, ge=0.0)
    server_error: Times = 0
    delay: Times = 0
    delay_s: float = Field(default=0.0, ge=0.0, le=600.0)
    malformed_body: Times = 0
    content_fault: ContentFault | None = None
    content_times: Times = "always"


class Latency(BaseModel):
    """How long the server takes per chat completion, on top of the backend's own time.

    ``fixed`` waits ``a`` seconds; ``uniform`` a uniform draw in [``a``, ``b``]; ``lognormal`` a
    log-normal draw with median ``a`` seconds and shape ``b`` (σ of the log), capped at
    :data:`MAX_LATENCY_S`. Draws come from one generator seeded by ``seed``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: LatencyKind = "fixed"
    a: float = Field(default=0.0, ge=0.0, le=600.0)
    b: float = Field(default=0.0, ge=0.0, le=600.0)
    seed: int = Field(default=0, ge=0)

    @field_validator("b")
    @classmethod
    def _ordered(cls, b: float, info: Any) -> float:
        if info.data.get("kind") == "uniform" and b < info.data.get("a", 0.0):
            raise ConfigError(f"uniform latency needs a <= b, got a={info.data.get('a')}, b={b}")
        return b

    @classmethod
    def parse(cls, text: str, seed: int = 0) -> Latency:
        """``"0.5"`` (fixed), ``"uniform:LOW,HIGH"`` or ``"lognormal:MEDIAN,SIGMA"``, in seconds;
        a :class:`~rag_lab.errors.ConfigError` naming the problem otherwise."""
        kind, _, rest = text.strip().partition(":")
        if not rest:
            kind, rest = "fixed", kind
        parts = rest.split(",")
        expected = 1 if kind == "fixed" else 2
        try:
            kinds = get_args(LatencyKind)
            if kind not in kinds:
                raise ConfigError(f"unknown distribution {kind!r} ({', '.join(kinds[:-1])} or {kinds[-1]})")
            if len(parts) != expected:
                raise ConfigError(f"{kind} takes {expected} number(s), got {len(parts)}")
            values = [float(p) for p in parts]
            if not all(math.isfinite(v) for v in values):
                raise ConfigError("latencies must be finite")
            return cls(kind=kind, a=values[0], b=values[1] if expected == 2 else 0.0, seed=seed)
        except (ValueError, ValidationError) as exc:
            message = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise ConfigError(f"bad latency {text!r}: {message}; use e.g. 0.5, uniform:0.3,0.7 or "
                              "lognormal:0.5,0.4 (seconds)") from None

    def sample(self, rng: random.Random) -> float:
        if self.kind == "fixed":
            return self.a
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b)
        return min(MAX_LATENCY_S, self.a * math.exp(self.b * rng.gauss(0.0, 1.0)))

    def describe(self) -> str:
        if self.kind == "fixed":
            return f"{self.a:g} s"
        return f"{self.kind}({self.a:g}, {self.b:g}) s"


#: Upper bound of one latency draw.
MAX_LATENCY_S = 600.0


class FaultState:
    """The counters of a :class:`FaultPlan` as faults fire (thread-safe)."""

    def __init__(self, plan: FaultPlan) -> None:
        self.plan = plan
        self._left: dict[str, Times] = {"rate_limit": plan.rate_limit, "server_error": plan.server_error,
                                        "delay": plan.delay, "malformed_body": plan.malformed_body,
                                        "content": plan.content_times if plan.content_fault else 0}
        self._lock = threading.Lock()

    def fires(self, fault: str) -> bool:
        """Whether ``fault`` applies to this request (spending one of its count)."""
        with self._lock:
            left = self._left[fault]
            if left == "always":
                return True
            if left > 0:
                self._left[fault] = left - 1
                return True
            return False
