"""Finalize helpers: CRAG grading, MMR ordering and the three truncation strategies.

All relevance scores share one scale: the cosine similarity of the question and the text under
the packaged embedding model (``CorpusResources.relevance``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from rag_lab.chunking import chunk_text_for_embedding
from rag_lab.pipeline.resources import CorpusResources
from rag_lab.records import Chunk

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


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


def _fit(candidates: list[ContextItem], max_snippets: int, max_tokens: int) -> list[ContextItem]:
    """The leading candidates that fit ``max_snippets`` and ``max_tokens`` (the first always fits,
    cut to the token budget if it alone is longer)."""
    kept: list[ContextItem] = []
    used = 0
    for c in candidates:
        if len(kept) == max_snippets:
            break
        cost = estimate_tokens(c.text)
        if used + cost > max_tokens:
            if not kept:
                words = c.text.split()[: max(1, (3 * max_tokens) // 4)]
                kept.append(c.model_copy(update={"text": " ".join(words)}))
            break
        kept.append(c)
        used += cost
    return kept


def truncate(
    candidates: list[ContextItem],
    strategy: str,
    max_snippets: int,
    max_tokens: int,
    res: CorpusResources,
    queries: Sequence[str],
) -> list[ContextItem]:
    """Cut the evidence bundle to the context budget by ``strategy``:

    * ``append_then_truncate``: arrival order (round, then rank within the round), keep the first;
    * ``rank_then_truncate``: relevance order, keep the best;
    * ``refine``: split every candidate into sentence strips, keep the strips most relevant to
      ``queries``
      (each chunk's kept strips stay together, in document order, and keep the chunk's score);
    * ``round_slots``: rank-then-truncate with a slot reserved for each round — the most relevant
      chunk every retrieval round brought is kept first (a later round's evidence is what the loop
      searched for, and it ranks low against the original question), the remaining places go by
      relevance; the kept chunks are shown in relevance order.
    """
    if strategy == "round_slots":
        return _fit(_round_slots(candidates, max_snippets), max_snippets, max_tokens)
    if strategy == "append_then_truncate":
        return _fit(sorted(candidates, key=lambda c: (c.round, c.rank)), max_snippets, max_tokens)
    if strategy == "rank_then_truncate":
        return _fit(sorted(candidates, key=lambda c: (-c.score, c.round, c.rank)), max_snippets, max_tokens)
    if strategy == "refine":
        return _refine(candidates, max_snippets, max_tokens, res, queries)
    raise ValueError(f"unknown truncation strategy {strategy!r}")


def _round_slots(candidates: list[ContextItem], max_snippets: int) -> list[ContextItem]:
    """The best chunk of each round (the latest rounds first when there are more rounds than places),
    then the rest by relevance, cut to ``max_snippets`` and shown in relevance order."""
    ranked = sorted(candidates, key=lambda c: (-c.score, c.round, c.rank))
    rounds = sorted({c.round for c in candidates}, reverse=True)
    kept: list[ContextItem] = []
    for r in rounds[:max_snippets]:
        kept.append(next(c for c in ranked if c.round == r))
    kept += [c for c in ranked if c not in kept][: max(0, max_snippets - len(kept))]
    return sorted(kept, key=lambda c: (-c.score, c.round, c.rank))


def _refine(candidates: list[ContextItem], max_snippets: int, max_tokens: int, res: CorpusResources,
            queries: Sequence[str]) -> list[ContextItem]:
    strips = [(ci, si, s) for ci, c in enumerate(candidates) for si, s in enumerate(_SENTENCE.split(c.text)) if s]
    if not strips:
        return []
    scores = res.relevance(queries, [f"{candidates[ci].title}. {s}" for ci, _, s in strips])
    order = sorted(range(len(strips)), key=lambda i: (-scores[i], i))
    chosen: dict[int, list[int]] = {}  # candidate -> kept strips; insertion order = best strip first
    used = 0
    for i in order:
        ci, si, text = strips[i]
        cost = estimate_tokens(text)
        if used + cost > max_tokens or (ci not in chosen and len(chosen) == max_snippets):
            continue
        chosen.setdefault(ci, []).append(si)
        used += cost
    ranked = list(chosen)
    pieces = {(ci, si): s for ci, si, s in strips}
    return [candidates[ci].model_copy(update={"text": " ".join(pieces[(ci, si)] for si in sorted(chosen[ci]))})
            for ci in ranked]
