"""Notebook 08's own code (query rewriting): where each configuration found a question's gold documents."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from lessons.contrasts import gold_ids
from rag_lab.evaluation.trace_facts import gold_found
from rag_lab.experiments.engine.results import SweepResult

__all__ = ["gold_stages"]


def gold_stages(result: SweepResult, names: Mapping[str, str], gold: Any) -> pd.DataFrame:
    """Per question (rows, in question order), how many gold documents each named configuration
    (``{name: candidate_id}``) found by round 1, by any round and in the final context
    (:func:`~rag_lab.evaluation.trace_facts.gold_found`); columns (name, stage). ``gold`` maps a qid to its
    gold doc ids, or to a question carrying them (an :class:`~rag_lab.records.EvalSet`)."""
    return pd.concat({name: pd.DataFrame({q: gold_found(result.traces(cid)[q], gold_ids(gold, q)) for q in result.qids}).T
                      for name, cid in names.items()}, axis=1).rename_axis("qid")
