"""Notebook 15's own code (real data): where a run found each question's gold documents, round by round."""

from __future__ import annotations

from typing import Any

import pandas as pd

from lessons.contrasts import Pick, gold_ids
from rag_lab.evaluation.trace_facts import gold_rounds
from rag_lab.experiments.engine.results import SweepResult

__all__ = ["gold_rounds_table"]


def gold_rounds_table(result: SweepResult, candidate: Pick, gold: Any) -> pd.DataFrame:
    """Per question of ``candidate`` (rows, in question order): the rounds it used and where its gold
    documents were first found (:func:`~rag_lab.evaluation.trace_facts.gold_rounds`). ``gold`` as
    :func:`~lessons.contrasts.gold_ids` reads it."""
    traces = result.traces(result.reference(candidate)["candidate_id"])
    rows = {q: gold_rounds(traces[q], gold_ids(gold, q)) for q in result.qids}
    return pd.DataFrame(rows).T.rename_axis("qid")
