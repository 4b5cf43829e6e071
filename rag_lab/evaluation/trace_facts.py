"""Facts read off one question's trace against its gold labels: which chunks a round brought (gold ones marked), how
many gold documents were found by round 1, by any round and in the final context, where the question's time went, and
which cited sources a source contract should have kept out. The notebooks print these; the evaluation layer owns them
because they compare a run with the gold, which the pipeline never sees."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from rag_lab.chunking import doc_of
from rag_lab.errors import ConfigError
from rag_lab.index import reciprocal_rank_fusion
from rag_lab.pipeline.answer import Result
from rag_lab.pipeline.config import PipelineConfig
from rag_lab.pipeline.interventions import Intervention
from rag_lab.pipeline.resources import CorpusResources
from rag_lab.pipeline.trace import Trace

#: The stages :func:`gold_found` counts, in order.
GOLD_STAGES = ("round 1", "any round", "final context")


def round_chunks(trace: Trace, round_no: int = 1) -> list[str]:
    """The chunk ids retrieval round ``round_no`` brought, in rank order (empty when it never ran)."""
    return [c for s in trace.steps if s.kind == "retrieve" and s.round == round_no for c in s.retrieved]


def mark_gold(chunk_ids: Iterable[str], gold_doc_ids: Iterable[str]) -> str:
    """``a#0 (gold), b#2`` — the chunks, comma-separated, with those of a gold document marked."""
    gold = set(gold_doc_ids)
    return ", ".join(c + (" (gold)" if doc_of(c) in gold else "") for c in chunk_ids)


def gold_found(trace: Trace, gold_doc_ids: Iterable[str]) -> dict[str, int]:
    """How many of the gold documents round 1, any round and the final context (finalize's kept chunks)
    reached (:data:`GOLD_STAGES`)."""
    gold = set(gold_doc_ids)
    retrieved = [s for s in trace.steps if s.kind == "retrieve"]
    found = {"round 1": {doc_of(c) for s in retrieved if s.round == 1 for c in s.retrieved},
             "any round": {doc_of(c) for s in retrieved for c in s.retrieved},
             "final context": {doc_of(c) for s in trace.steps if s.kind == "finalize" for c in s.retrieved}}
    return {stage: len(gold & found[stage]) for stage in GOLD_STAGES}


def time_split(trace: Trace) -> dict[str, float]:
    """Where one question's time went, in ms: the modelled latency of its LLM calls (what a time budget
    counts for a simulated model) and the measured wall time of its retrieval rounds."""
    modelled = sum(c.modelled_latency_s or 0.0 for c in trace.llm_calls())
    retrieval = sum(s.latency_s for s in trace.steps if s.kind == "retrieve")
    return {"modelled LLM ms": 1000.0 * modelled, "retrieval wall ms": 1000.0 * retrieval}


def cited_outside(result: Result, source_of: Mapping[str, str], allowed: Iterable[str]) -> list[str]:
    """The source types (``source_of``: doc id → type) of an *answered* result's cited chunks that ``allowed``
    does not include, sorted; empty for a refusal."""
    if result.status != "answered":
        return []
    return sorted({source_of[doc_of(c)] for c in result.cited_chunk_ids} - set(allowed))


def emptied_by_contract(trace: Trace) -> int:
    """Retrieval rounds in which the source contract removed every hit: left empty (fail-closed) or, with
    nothing allowed left, replaced by the unfiltered hits (fail-open)."""
    return sum(1 for s in trace.steps if s.kind == "retrieve" and s.has(Intervention.SOURCE_REMOVED)
               and (not s.retrieved or s.has(Intervention.SOURCE_FAIL_OPEN)))


def fail_open_fallbacks(trace: Trace) -> int:
    """Retrieval rounds where fail-open used the unfiltered, off-contract hits."""
    return sum(1 for s in trace.steps if s.kind == "retrieve" and s.has(Intervention.SOURCE_FAIL_OPEN))


def best_context_score(result: Result) -> float:
    """The highest relevance score in the final context (what the refusal threshold compares); NaN when
    the context is empty."""
    return max((c.score for c in result.context), default=float("nan"))


def fusion_table(resources: CorpusResources, trace: Trace, config: PipelineConfig,
                 gold_doc_ids: Iterable[str] = ()) -> pd.DataFrame:
    """Round 1 of query rewriting, recomputed from a trace: each of its queries (the expand step's: the
    question, then the rewrites) ranked by ``config``'s retriever at ``retrieval.top_k``, the rankings fused by
    Reciprocal Rank Fusion (``rewrite.k_rrf``), and per fused chunk (gold ones marked) its rank in each query,
    its RRF score, its fused rank and whether it made the fused top k. Raises if the top k is not the
    trace's round 1, so the table is the pipeline's own fusion, not a look-alike."""
    expand = next((s for s in trace.steps if s.kind == "expand"), None)
    if expand is None or len(expand.queries) < 2:
        raise ConfigError(f"trace {trace.qid} has no query expansion to recompute (rewriting was off)")
    top_k = config.get("retrieval.top_k")
    rankings = [[c for c, _ in resources.search(config.get("retrieval.retriever"), q, top_k)] for q in expand.queries]
    fused = reciprocal_rank_fusion(rankings, k=config.get("rewrite.k_rrf"))
    if [c for c, _ in fused][:top_k] != round_chunks(trace):
        raise ConfigError(f"the recomputed fusion differs from round 1 of trace {trace.qid}: another config or index?")
    gold = list(gold_doc_ids)
    return pd.DataFrame([{"chunk": mark_gold([c], gold),
                          **{f"rank in q{i}": (r.index(c) + 1 if c in r else None) for i, r in enumerate(rankings)},
                          "RRF score": round(score, 4), "fused rank": n, "in round 1": n <= top_k}
                         for n, (c, score) in enumerate(fused, start=1)])


def steps_table(trace: Trace) -> pd.DataFrame:
    """One question's trace as a table, a row per step: its kind, round, queries, new chunks, round yield,
    the decision's action and the interventions, in plain words."""
    return pd.DataFrame([{"kind": s.kind, "round": s.round, "queries": " | ".join(s.queries), "new chunks": len(s.new),
                          "yield": s.round_yield, "action": (s.decision or {}).get("action"),
                          "interventions": "; ".join(s.interventions)} for s in trace.steps])


def first_found_round(trace: Trace, gold_doc_ids: Iterable[str]) -> dict[str, int]:
    """Each gold document some retrieval round brought, with the round that first brought it (a document
    never retrieved is absent)."""
    gold, seen = set(gold_doc_ids), {}
    for step in trace.steps:
        if step.kind == "retrieve":
            for chunk in step.new:
                if doc_of(chunk) in gold:
                    seen.setdefault(doc_of(chunk), step.round)
    return seen


def gold_rounds(trace: Trace, gold_doc_ids: Iterable[str]) -> dict[str, int]:
    """The rounds the question used and how many of its gold documents round 1 found, later rounds found
    first, and no round found (:func:`first_found_round`)."""
    gold = set(gold_doc_ids)
    seen = first_found_round(trace, gold)
    return {"rounds used": trace.rounds_used, "gold found in round 1": sum(r == 1 for r in seen.values()),
            "gold found later": sum(r > 1 for r in seen.values()), "gold never found": len(gold) - len(seen)}


def crag_scores(trace: Trace) -> dict[str, float]:
    """The CRAG relevance score finalize gave each chunk of this question (``{chunk_id: score}``; empty when
    CRAG did not grade)."""
    return dict(next((s.detail.get("crag_scores", {}) for s in trace.steps if s.kind == "finalize"), {}))


def best_crag_score(trace: Trace) -> float:
    """The best CRAG relevance score finalize gave any chunk of this question (NaN when CRAG did not grade)."""
    return max(crag_scores(trace).values(), default=float("nan"))
