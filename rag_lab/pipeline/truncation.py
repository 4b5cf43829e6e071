"""The truncation strategies, by name (:data:`TRUNCATION_STRATEGIES`): how the evidence bundle is cut to the
context budget (the :class:`~rag_lab.pipeline.policies.Truncation` policy's ``strategy``). A new strategy is
one registration::

    @TRUNCATION_STRATEGIES.register("newest_first")
    def newest_first(candidates, max_snippets, max_tokens, res, queries):
        return fit(sorted(candidates, key=lambda c: (-c.round, c.rank)), max_snippets, max_tokens)"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rag_lab.pipeline.finalize import ContextItem, estimate_tokens
from rag_lab.pipeline.resources import CorpusResources
from rag_lab.registry import Registry

__all__ = ["TRUNCATION_STRATEGIES", "TruncationStrategy", "TruncationStrategyName", "by_relevance", "fit", "truncate"]

#: ``strategy(candidates, max_snippets, max_tokens, res, queries) -> context``.
TruncationStrategy = Callable[[list[ContextItem], int, int, CorpusResources, Sequence[str]], list[ContextItem]]

#: The truncation strategies by name, in the order the policy's choices list them.
TRUNCATION_STRATEGIES: Registry[TruncationStrategy] = Registry("truncation strategy")

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def truncate(candidates: list[ContextItem], strategy: str, max_snippets: int, max_tokens: int,
             res: CorpusResources, queries: Sequence[str]) -> list[ContextItem]:
    """Cut the evidence bundle to the context budget by the registered ``strategy``."""
    return TRUNCATION_STRATEGIES[strategy](candidates, max_snippets, max_tokens, res, queries)


def fit(candidates: list[ContextItem], max_snippets: int, max_tokens: int) -> list[ContextItem]:
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


def by_relevance(c: ContextItem) -> tuple[float, int, int]:
    """The sort key of relevance order: the most relevant first, ties in arrival order (round, then rank)."""
    return (-c.score, c.round, c.rank)


@TRUNCATION_STRATEGIES.register("append_then_truncate")
def append_then_truncate(candidates: list[ContextItem], max_snippets: int, max_tokens: int,
                         res: CorpusResources, queries: Sequence[str]) -> list[ContextItem]:
    """Arrival order (round, then rank within the round), keep the first: the classic bug — once round 1
    fills the limit, later evidence never reaches the prompt."""
    return fit(sorted(candidates, key=lambda c: (c.round, c.rank)), max_snippets, max_tokens)


@TRUNCATION_STRATEGIES.register("rank_then_truncate")
def rank_then_truncate(candidates: list[ContextItem], max_snippets: int, max_tokens: int,
                       res: CorpusResources, queries: Sequence[str]) -> list[ContextItem]:
    """Relevance order, keep the best."""
    return fit(sorted(candidates, key=by_relevance), max_snippets, max_tokens)


@TRUNCATION_STRATEGIES.register("refine")
def refine(candidates: list[ContextItem], max_snippets: int, max_tokens: int, res: CorpusResources,
           queries: Sequence[str]) -> list[ContextItem]:
    """Split every candidate into sentence strips, keep the strips most relevant to ``queries`` (each
    chunk's kept strips stay together, in document order, and keep the chunk's score)."""
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
    pieces = {(ci, si): s for ci, si, s in strips}
    return [candidates[ci].model_copy(update={"text": " ".join(pieces[(ci, si)] for si in sorted(chosen[ci]))})
            for ci in chosen]


@TRUNCATION_STRATEGIES.register("round_slots")
def round_slots(candidates: list[ContextItem], max_snippets: int, max_tokens: int, res: CorpusResources,
                queries: Sequence[str]) -> list[ContextItem]:
    """Rank-then-truncate with a slot reserved for each round: the most relevant chunk every retrieval round
    brought is kept first (a later round's evidence is what the loop searched for, and it ranks low against
    the original question; the latest rounds first when there are more rounds than places), the remaining
    places go by relevance; the kept chunks are shown in relevance order."""
    ranked = sorted(candidates, key=by_relevance)
    rounds = sorted({c.round for c in candidates}, reverse=True)
    kept: list[ContextItem] = []
    for r in rounds[:max_snippets]:
        kept.append(next(c for c in ranked if c.round == r))
    kept += [c for c in ranked if c not in kept][: max(0, max_snippets - len(kept))]
    return fit(sorted(kept, key=by_relevance), max_snippets, max_tokens)


#: The type of a field that names a truncation strategy (checked against the registry when validated).
TruncationStrategyName = TRUNCATION_STRATEGIES.field()
