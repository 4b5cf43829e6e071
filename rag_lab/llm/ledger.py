"""The cost ledger: LLM calls, what they cost (**incurred**, cache hits included) and what was actually spent (cache
misses only), priced by a :class:`PriceTable` the user sets. The method: docs/backends.md, "The cost ledger"."""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rag_lab.errors import ConfigError
from rag_lab.llm.types import CallRecord, LLMResponse


class Price(BaseModel):
    """USD per one million input (prompt) and output (completion) tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_per_m: float = Field(ge=0.0, allow_inf_nan=False)
    output_per_m: float = Field(ge=0.0, allow_inf_nan=False)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """USD for a call with these token counts."""
        return (prompt_tokens * self.input_per_m + completion_tokens * self.output_per_m) / 1_000_000


#: The illustrative small-model rate used for simulated, scripted and local models.
ILLUSTRATIVE_SMALL_MODEL = Price(input_per_m=0.15, output_per_m=0.60)


class PriceTable(BaseModel):
    """Prices the user sets. A call is priced by its exact model name (``models``), else by its
    backend name (``backends``), else by ``default``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    models: dict[str, Price] = Field(default_factory=dict)
    backends: dict[str, Price] = Field(default_factory=dict)
    default: Price = ILLUSTRATIVE_SMALL_MODEL

    @field_validator("models", "backends")
    @classmethod
    def _named(cls, prices: dict[str, Price]) -> dict[str, Price]:
        if any(not name.strip() for name in prices):
            raise ConfigError("price table entries need a non-empty model or backend name")
        return prices

    def price_for(self, backend: str, model: str) -> Price:
        """The price of ``model`` served by ``backend``: by model name, then backend, then default."""
        if model in self.models:
            return self.models[model]
        return self.backends.get(backend, self.default)

    def cost(self, backend: str, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """USD for one call."""
        return self.price_for(backend, model).cost(prompt_tokens, completion_tokens)

    def with_prices(self, models: Mapping[str, Price] | None = None, backends: Mapping[str, Price] | None = None) -> PriceTable:
        """A copy of this table with entries added or replaced."""
        return PriceTable(models={**self.models, **(models or {})}, backends={**self.backends, **(backends or {})},
                          default=self.default)


#: The default table: everything at the illustrative small-model rate (see the module doc).
DEFAULT_PRICES = PriceTable()


class PricedCall(CallRecord):
    """A call as the ledger keeps it: the :class:`~rag_lab.llm.types.CallRecord` and its price,
    ``cost_usd``, from the ledger's price table and the call's token usage."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cost_usd: float = Field(ge=0.0)

    @classmethod
    def priced(cls, response: LLMResponse, prices: PriceTable = DEFAULT_PRICES) -> PricedCall:
        """The record of ``response``, priced with ``prices``."""
        return cls.of_record(CallRecord.from_response(response), prices)

    @classmethod
    def of_record(cls, record: CallRecord, prices: PriceTable = DEFAULT_PRICES) -> PricedCall:
        """Any record of a call (a trace's :class:`~rag_lab.pipeline.trace.LLMCall` among them), priced."""
        cost = prices.cost(record.backend, record.model, record.prompt_tokens, record.completion_tokens)
        return cls(**{name: getattr(record, name) for name in CallRecord.model_fields}, cost_usd=cost)


class CostSummary(BaseModel):
    """Totals over a set of calls. ``modelled_latency_s`` sums the calls that have a speed model."""

    model_config = ConfigDict(frozen=True)

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    modelled_latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def of(cls, records: Iterable[PricedCall]) -> CostSummary:
        """The totals of ``records``."""
        rows = list(records)
        return cls(calls=len(rows), prompt_tokens=sum(r.prompt_tokens for r in rows),
                   completion_tokens=sum(r.completion_tokens for r in rows),
                   cost_usd=math.fsum(r.cost_usd for r in rows), latency_s=math.fsum(r.latency_s for r in rows),
                   modelled_latency_s=math.fsum(r.modelled_latency_s or 0.0 for r in rows))


class RoleCost(NamedTuple):
    """Incurred and spent totals of one role."""

    incurred: CostSummary
    spent: CostSummary


class Ledger:
    """A thread-safe list of :class:`PricedCall` records priced with one :class:`PriceTable`.

    Ledgers add up (``a + b``, ``sum(ledgers)``, ``a.extend(b)``) so per-question ledgers can be
    combined; records keep the cost they were priced at."""

    @classmethod
    def of(cls, records: Iterable[CallRecord], prices: PriceTable | None = None) -> Ledger:
        """A ledger of calls already recorded elsewhere (a question's trace: ``Ledger.of(trace.llm_calls())``),
        priced with ``prices``."""
        table = prices if prices is not None else DEFAULT_PRICES
        return cls(table, [PricedCall.of_record(r, table) for r in records])

    @classmethod
    def of_responses(cls, responses: Iterable[LLMResponse], prices: PriceTable | None = None) -> Ledger:
        """A ledger of the responses a caller holds (``backend.complete(...)``'s), priced with ``prices``."""
        ledger = cls(prices)
        ledger.extend(PricedCall.priced(r, ledger.prices) for r in responses)
        return ledger

    def __init__(self, prices: PriceTable | None = None, records: Iterable[PricedCall] = ()) -> None:
        if prices is not None and not isinstance(prices, PriceTable):
            raise TypeError(f"prices must be a PriceTable, not {type(prices).__name__}")
        self.prices = prices if prices is not None else DEFAULT_PRICES
        self._lock = threading.Lock()
        self._records: list[PricedCall] = []
        self.extend(records)

    @property
    def records(self) -> list[PricedCall]:
        """A snapshot of the records, in the order they were added."""
        with self._lock:
            return list(self._records)

    def record(self, response: LLMResponse) -> PricedCall:
        """Price ``response`` with this ledger's table and append it."""
        rec = PricedCall.priced(response, self.prices)
        with self._lock:
            self._records.append(rec)
        return rec

    def extend(self, other: Ledger | Iterable[PricedCall]) -> None:
        """Append the records of another ledger (or any records)."""
        rows = other.records if isinstance(other, Ledger) else list(other)
        bad = [type(r).__name__ for r in rows if not isinstance(r, PricedCall)]
        if bad:
            raise TypeError(f"a ledger holds PricedCall objects, got {bad[0]}")
        with self._lock:
            self._records.extend(rows)

    def __add__(self, other: Ledger) -> Ledger:
        if not isinstance(other, Ledger):
            return NotImplemented
        return Ledger(self.prices, [*self.records, *other.records])

    def __radd__(self, other: Ledger | int) -> Ledger:
        if other == 0:  # sum(ledgers) starts from 0
            return Ledger(self.prices, self.records)
        return NotImplemented

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def __repr__(self) -> str:
        inc, sp = self.incurred(), self.spent()
        return f"Ledger(calls={inc.calls}, incurred=${inc.cost_usd:.6f}, spent=${sp.cost_usd:.6f})"

    def incurred(self) -> CostSummary:
        """Totals over every call the policy made, whether or not the cache answered it."""
        return CostSummary.of(self.records)

    def spent(self) -> CostSummary:
        """Totals over the calls the cache did not answer: what this run actually used."""
        return CostSummary.of(r for r in self.records if not r.cached)

    def by_role(self) -> dict[str, RoleCost]:
        """``{role: (incurred, spent)}`` in order of first appearance: each role's calls as a ledger of their own."""
        groups: dict[str, list[PricedCall]] = {}
        for r in self.records:
            groups.setdefault(r.role, []).append(r)
        ledgers = {role: Ledger(self.prices, rows) for role, rows in groups.items()}
        return {role: RoleCost(ledger.incurred(), ledger.spent()) for role, ledger in ledgers.items()}

    def outcomes(self) -> dict[str, int]:
        """How many calls ended in each validation outcome (valid, repaired, fallback, invalid, text)."""
        return dict(Counter(r.outcome for r in self.records))

    @property
    def cache_hit_rate(self) -> float:
        """Fraction of calls the cache answered (0.0 for an empty ledger)."""
        rows = self.records
        return sum(r.cached for r in rows) / len(rows) if rows else 0.0

    def to_dicts(self) -> list[dict[str, Any]]:
        """One plain dict per call (``pandas.DataFrame(ledger.to_dicts())``)."""
        return [r.model_dump() for r in self.records]

    def to_frame(self) -> Any:
        """The records as a :class:`pandas.DataFrame`, one row per call."""
        import pandas as pd

        return pd.DataFrame(self.to_dicts(), columns=list(PricedCall.model_fields))
