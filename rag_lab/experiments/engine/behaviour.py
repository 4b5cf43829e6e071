"""What the model did in each configuration of a sweep, read off its traces: how many rounds each question ran and
why its loop ended, and the controller's actions by the rounds run when it was asked. The recorded studies' pages
and lesson 02 show these beside the paired claims, which say how much but not how."""

from __future__ import annotations

import pandas as pd

from rag_lab.experiments.engine.results import SweepResult
from rag_lab.pipeline.trace import controller_decisions


def _names(result: SweepResult) -> dict[str, str]:
    """Each run's name: its configuration's label, with its seed where the sweep has several."""
    labels, seeds = result.labels(), result.table.set_index("candidate_id")["seed"]
    several = seeds.nunique() > 1
    return {c: f"{labels[c]}, seed {seeds[c]}" if several else labels[c] for c in result.table["candidate_id"]}


def loop_ends(result: SweepResult) -> pd.DataFrame:
    """One row per run (its configuration's label, with its seed where the sweep has several): the questions, the
    mean rounds, how many questions ran each number of rounds (``rounds N``) and how many loops ended for each stop
    reason (``ended: reason``)."""
    rows = []
    for candidate, name in _names(result).items():
        traces = list(result.traces(candidate).values())
        rounds = pd.Series([t.rounds_used for t in traces], dtype=int)
        stops = pd.Series([str(t.stop_reason) for t in traces], dtype=object).value_counts()
        rows.append({"configuration": name, "questions": len(traces), "mean rounds": rounds.mean(),
                     **{f"rounds {r}": n for r, n in rounds.value_counts().items()},
                     **{f"ended: {k}": n for k, n in stops.items()}})
    table = pd.DataFrame(rows).fillna(0)
    by_rounds = sorted((c for c in table if c.startswith("rounds ")), key=lambda c: int(c.split()[1]))
    ends = sorted(c for c in table if c.startswith("ended: "))
    return table[["configuration", "questions", "mean rounds", *by_rounds, *ends]].astype(
        {c: int for c in [*by_rounds, *ends]})


def decisions_by_round(result: SweepResult) -> pd.DataFrame:
    """The controller's actions, one row per run (named as by :func:`loop_ends`) and rounds run when it was asked, a count of
    decisions per action, and ``of which fallback``: how many were the deterministic fallback for an invalid output
    (counted under their action too). Empty for a sweep whose loop never asked the controller."""
    rows = [{"configuration": name, **row} for candidate, name in _names(result).items()
            for row in controller_decisions(result.traces(candidate).values())]
    if not rows:
        return pd.DataFrame(columns=["configuration", "round", "of which fallback"])
    decisions = pd.DataFrame(rows)
    table = decisions.pivot_table(index=["configuration", "round"], columns="action", values="decisions",
                                  aggfunc="sum", fill_value=0)
    table["of which fallback"] = decisions.groupby(["configuration", "round"])["fallback"].sum()
    table.columns.name = None
    return table.reset_index()
