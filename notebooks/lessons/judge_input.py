"""Notebook 09's own code (the judge's input): what a refusing intervention refused, read against a baseline, and
how often it fired per question type."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from lessons.contrasts import Pick, with_intervention
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.pipeline.interventions import Intervention

__all__ = ["refusals_by_baseline", "refused_share_by_type"]


def refusals_by_baseline(result: SweepResult, names: Mapping[str, str], baseline: Pick, code: Intervention,
                         metric: str, calls: str | None = None) -> pd.DataFrame:
    """What an intervention refused, per named configuration (columns): the questions whose trace records
    ``code`` (e.g. the judge's refusal), classified by the same question's outcome under ``baseline`` — a
    correct answer (``metric`` 1), a wrong one on an answerable question, or an answer to an unanswerable
    question; with ``calls`` (a cost column, e.g. ``cost_calls_judge``) first, its total."""
    base = result.rows(result.reference(baseline)["candidate_id"]).set_index("qid")
    out = {}
    for name, cid in names.items():
        refused = base.loc[with_intervention(result, cid, code)]
        column: dict[str, int] = {}
        if calls is not None:
            column[calls] = int(result.rows(cid).get(calls, pd.Series(dtype=float)).fillna(0).sum())
        column.update({"refused": len(refused), "… correct answers": int((refused[metric] == 1).sum()),
                       "… wrong answers": int((refused["answerable"] & (refused[metric] == 0)).sum()),
                       "… answers to unanswerable questions": int((~refused["answerable"].astype(bool)).sum())})
        out[name] = column
    return pd.DataFrame(out)


def refused_share_by_type(result: SweepResult, names: Mapping[str, str], code: Intervention) -> pd.DataFrame:
    """The share of each question type's questions (rows) whose trace records ``code``, per named configuration."""
    out = {}
    for name, cid in names.items():
        rows = result.rows(cid).set_index("qid")
        hit = rows.index.isin(with_intervention(result, cid, code))
        out[name] = pd.Series(hit, index=rows.index).groupby(rows["type"]).mean()
    return pd.DataFrame(out)
