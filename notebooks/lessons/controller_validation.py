"""Notebook 12's own code (validating the controller's output): the deterministic fallback's decisions beside
what the model meant, how the structured calls were validated, and candidates paired across two sweeps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from lessons.contrasts import Pick, across_summary
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.pipeline.interventions import Intervention

__all__ = ["across_table", "call_outcomes", "fallback_vs_meant"]


def fallback_vs_meant(result: SweepResult, candidate: Pick, clean: SweepResult, clean_candidate: Pick) -> pd.DataFrame:
    """Every controller decision the deterministic fallback made under ``candidate`` (found by its
    intervention code) beside what the model meant: the decision at the same controller call of
    ``clean_candidate`` in ``clean`` (the same questions without format failures; ``""`` where that run made
    fewer calls), and both runs' final status."""
    cid, clean_id = result.reference(candidate)["candidate_id"], clean.reference(clean_candidate)["candidate_id"]
    records = []
    for q in result.qids:
        steps = [s for s in result.traces(cid)[q].steps if s.kind == "controller"]
        clean_steps = [s for s in clean.traces(clean_id)[q].steps if s.kind == "controller"]
        for i, step in enumerate(steps):
            if step.has(Intervention.INVALID_FALLBACK):
                records.append({"qid": q, "model meant": clean_steps[i].decision["action"] if i < len(clean_steps) else "",
                                "fallback decided": step.decision["action"], "status": result.result(cid, q).status,
                                "status without failures": clean.result(clean_id, q).status})
    return pd.DataFrame(records, columns=["qid", "model meant", "fallback decided", "status", "status without failures"])


def call_outcomes(result: SweepResult, candidate: Pick, roles: Iterable[str] = ("route", "controller")) -> pd.DataFrame:
    """How the structured LLM calls of ``roles`` under ``candidate`` were validated: calls per role (rows) and
    outcome (columns: ``valid``, ``repaired``, ``fallback``, ``invalid``, those that occurred)."""
    roles = set(roles)
    calls = [(c.role, c.outcome) for t in result.traces(result.reference(candidate)["candidate_id"]).values()
             for c in t.llm_calls() if c.role in roles]
    return pd.DataFrame(calls, columns=["role", "outcome"]).value_counts().unstack(fill_value=0)


def across_table(result: SweepResult, candidates: Mapping[str, Pick], other: SweepResult, reference: Pick,
                 metrics: Iterable[str]) -> pd.DataFrame:
    """:func:`~lessons.contrasts.across_summary` for several named candidates (``{name: pick}``), one block
    of rows per name."""
    metrics = list(metrics)
    return pd.concat({name: across_summary(result, pick, other, reference, metrics) for name, pick in candidates.items()})
