"""Finalize helpers: the context item, CRAG grading and MMR ordering (the truncation strategies are in
:mod:`rag_lab.pipeline.truncation`).

All relevance scores share one scale: the cosine similarity of the question and the text under
the packaged embedding model (``CorpusResources.relevance``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from rag_lab.chunking import chunk_text_for_embedding
from rag_lab.pipeline.resources import CorpusResources
from rag_lab.records import Chunk


class ContextItem(BaseModel):
    """A chunk on its way to the context and in it, one record all the way: its relevance ``score``, where
    it arrived (``round``, ``rank`` within the round) and, once in the final context, its number ``n``
    (what the generation prompt shows and citations point to; 0 before)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chunk_id: str
    doc_id: str
    title: str
    text: str
    score: float
    round: int
    rank: int = 0
    n: int = 0


def estimate_tokens(text: str) -> int:
    """Context-budget tokens, estimated as 4/3 tokens per whitespace-separated word."""
    return (4 * len(text.split()) + 2) // 3


def crag_grade(scores: list[float], upper: float, lower: float) -> Literal["correct", "ambiguous", "incorrect"]:
    """**Correct** if any score ≥ ``upper``, **Incorrect** if all < ``lower``, else **Ambiguous**."""
    if any(s >= upper for s in scores):
        return "correct"
    if all(s < lower for s in scores):
        return "incorrect"
    return "ambiguous"


def mmr_order(candidates: list[ContextItem], res: CorpusResources, lam: float) -> list[ContextItem]:
    """Greedy Maximal Marginal Relevance: ``λ·sim(d,q) − (1−λ)·max sim(d,d')`` over picked d'."""
    vectors = res.embed([_embed_text(c) for c in candidates])
    sims = vectors @ vectors.T
    picked: list[int] = []
    left = list(range(len(candidates)))
    while left:
        def value(i: int) -> float:
            redundancy = max((float(sims[i, j]) for j in picked), default=0.0)
            return lam * candidates[i].score - (1 - lam) * redundancy
        best = max(left, key=lambda i: (value(i), -i))
        picked.append(best)
        left.remove(best)
    return [candidates[i] for i in picked]


def _embed_text(c: ContextItem) -> str:
    return chunk_text_for_embedding(Chunk(chunk_id=c.chunk_id, doc_id=c.doc_id, position=0, title=c.title,
                                          text=c.text, start=0, end=len(c.text)))
