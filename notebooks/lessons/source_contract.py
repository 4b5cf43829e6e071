"""Notebook 11's own code (the source contract): what each configuration answered from sources outside the
contract, and how the filter and its fail-open fallback acted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from lessons.contrasts import Pick
from rag_lab.evaluation.trace_facts import cited_outside, emptied_by_contract, fail_open_fallbacks
from rag_lab.experiments.engine.results import SweepResult

__all__ = ["off_contract_answers", "source_audit"]


def source_audit(result: SweepResult, names: Mapping[str, str], source_of: Mapping[str, str],
                 allowed: Iterable[str]) -> pd.DataFrame:
    """Per named configuration (columns): answered questions, answers citing a source outside ``allowed``,
    retrieval rounds the source contract left empty (or fail-open replaced), and fail-open fallbacks — each
    counted from the results and the interventions' codes."""
    allowed = list(allowed)
    out = {}
    for name, cid in names.items():
        traces = result.traces(cid)
        results = [result.result(cid, q) for q in result.qids]
        out[name] = {"answered": sum(r.status == "answered" for r in results),
                     "answers citing a source outside the contract": sum(bool(cited_outside(r, source_of, allowed))
                                                                         for r in results),
                     "rounds the filter left empty": sum(emptied_by_contract(t) for t in traces.values()),
                     "fail-open fallbacks": sum(fail_open_fallbacks(t) for t in traces.values())}
    return pd.DataFrame(out)


def off_contract_answers(result: SweepResult, candidate: Pick, source_of: Mapping[str, str], allowed: Iterable[str],
                         metric: str) -> pd.DataFrame:
    """The answered questions of ``candidate`` that cite a source outside ``allowed``: type, the sources, and
    ``metric`` (indexed by qid, in question order)."""
    cid = result.reference(candidate)["candidate_id"]
    rows = result.rows(cid).set_index("qid")
    allowed = list(allowed)
    records = [{"qid": q, "type": rows.loc[q, "type"], "cited sources outside the contract": ", ".join(bad),
                metric: rows.loc[q, metric]}
               for q in result.qids if (bad := cited_outside(result.result(cid, q), source_of, allowed))]
    return pd.DataFrame(records, columns=["qid", "type", "cited sources outside the contract", metric]).set_index("qid")
