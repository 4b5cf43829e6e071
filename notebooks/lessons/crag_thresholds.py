"""Notebook 05's own code (CRAG thresholds): a value read off each question's trace, and a per-question value
described per question type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from lessons.contrasts import Pick
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.pipeline.trace import Trace

__all__ = ["by_type", "per_trace", "question_types"]


def question_types(result: SweepResult) -> pd.Series:
    """Each question's type (qid → type, in question order), as the sweep's rows record it."""
    rows = result.rows(str(result.table["candidate_id"].iloc[0]))
    return rows.set_index("qid")["type"].reindex(result.qids)


def per_trace(result: SweepResult, candidate: Pick, read: Callable[[Trace], Any]) -> pd.Series:
    """``read`` of each question's trace under ``candidate`` (e.g.
    :func:`~rag_lab.evaluation.trace_facts.best_crag_score`), indexed by qid in question order."""
    traces = result.traces(result.reference(candidate)["candidate_id"])
    return pd.Series({q: read(traces[q]) for q in result.qids if q in traces},
                     dtype=object).infer_objects().rename_axis("qid")


def by_type(result: SweepResult, values: pd.Series) -> pd.DataFrame:
    """A per-question series (qid → number) described per question type: count, min, quartiles, max."""
    grouped = values.astype(float).groupby(question_types(result).reindex(values.index).rename("type"))
    return grouped.describe()[["count", "min", "25%", "50%", "75%", "max"]]
