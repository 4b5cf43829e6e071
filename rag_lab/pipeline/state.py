"""Run-time state of one question. Policies stay immutable; everything that changes lives here."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_lab.llm.types import CallRecord


@dataclass
class SeenChunk:
    """A chunk the loop has retrieved, with where it first came from."""

    chunk_id: str
    round: int
    rank: int
    query: str


@dataclass
class QuestionState:
    """Counters and evidence of one question's run."""

    question: str
    route: str = "COMPLEX"
    rounds_used: int = 0
    seen: dict[str, SeenChunk] = field(default_factory=dict)  # insertion order = arrival order
    searches: list[str] = field(default_factory=list)
    tokens_used: int = 0
    time_ms: float = 0.0
    retrieval_calls: int = 0
    embedding_calls: int = 0
    rerank_requested: bool = False
    fallback_used: bool = False  # the one-shot fallback retrieval ran
    model_insufficient: bool = False  # the controller model itself (a valid decision) chose insufficient

    @property
    def chunks_seen(self) -> int:
        return len(self.seen)

    def add_round(self, round_no: int, queries: list[str], hits: list[str]) -> list[str]:
        """Record one retrieval round; return the chunk ids that are new (the round's yield)."""
        self.rounds_used = round_no
        self.searches.extend(queries)
        new = [c for c in hits if c not in self.seen]
        for rank, chunk_id in enumerate(hits, start=1):
            if chunk_id not in self.seen:
                self.seen[chunk_id] = SeenChunk(chunk_id, round_no, rank, " | ".join(queries))
        return new

    def charge(self, call: CallRecord) -> None:
        """Count an LLM call (its trace record) against the token and time budgets (modelled latency when known)."""
        self.tokens_used += call.total_tokens
        seconds = call.modelled_latency_s if call.modelled_latency_s is not None else call.latency_s
        self.time_ms += 1000.0 * seconds
