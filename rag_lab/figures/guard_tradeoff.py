"""What each guardrail buys: right answers lost against wrong answers prevented (a confident error of the reference
the candidate avoids), per candidate against a reference on the same questions, split Optuna-style into plain
data (:func:`guard_tradeoff_info`) and a plotly figure (:func:`guard_tradeoff_figure`). A point above the
diagonal prevents more wrong answers than it loses right ones."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rag_lab.experiments.engine.results import SweepResult
from rag_lab.figures.common import hover
from rag_lab.figures.labels import PLOT_PX, labelled_markers, padded_range

RIGHT, WRONG, CALLS = "quality_right", "quality_confident_error", "cost_llm_calls"
#: The columns of :attr:`GuardTradeoffInfo.table`, in order.
COLUMNS = ("candidate_id", "label", "n", "lost", "prevented", "gained_right", "new_wrong", "net_c1", "delta_calls")
COLOUR = "#4c78a8"


class GuardTradeoffInfo(NamedTuple):
    """``table``: one row per config but the reference (its first seed's ``candidate_id``), :data:`COLUMNS`: ``label``
    (the parameters it changes from the reference), ``n`` (questions × seeds defined on both sides), the counts
    ``lost``, ``prevented``, ``gained_right``, ``new_wrong``, ``net_c1`` = (gained right − lost) − (new wrong −
    prevented), in questions, and ``delta_calls``: the mean difference in LLM calls per question. ``reference`` names
    the reference without its id (``the base config`` or its changes from the base), ``reference_id`` is its run."""

    reference: str
    reference_id: str
    table: pd.DataFrame
    title: str


def guard_tradeoff_info(result: SweepResult, reference: str | Mapping[str, Any] | None = None) -> GuardTradeoffInfo:
    """The trade-off of every config of ``result`` against ``reference`` (as in
    :meth:`~rag_lab.experiments.SweepResult.reference`; default the base config, or name the unguarded one). The
    rows need ``quality_right`` and ``quality_confident_error`` (a :class:`~rag_lab.errors.ConfigError` otherwise)."""
    ref = result.reference(reference)
    labels = result.labels(ref["config_id"])
    records = []
    for config_id, runs in result.table.groupby("config_id", sort=False):
        if config_id == ref["config_id"]:
            continue
        cid = str(runs["candidate_id"].iloc[0])
        (right, ref_right), (wrong, ref_wrong), (calls, ref_calls) = (
            result.paired_values(m, config_id, ref["config_id"]) for m in (RIGHT, WRONG, CALLS))
        both = ~(np.isnan(right) | np.isnan(ref_right) | np.isnan(wrong) | np.isnan(ref_wrong))
        right, ref_right, wrong, ref_wrong = (v[both] == 1 for v in (right, ref_right, wrong, ref_wrong))
        lost, gained = int((ref_right & ~right).sum()), int((right & ~ref_right).sum())
        prevented, new_wrong = int((ref_wrong & ~wrong).sum()), int((wrong & ~ref_wrong).sum())
        diff_calls = (calls - ref_calls)[~(np.isnan(calls) | np.isnan(ref_calls))]
        records.append({"candidate_id": cid, "label": labels[cid], "n": int(both.sum()), "lost": lost,
                        "prevented": prevented, "gained_right": gained, "new_wrong": new_wrong,
                        "net_c1": (gained - lost) - (new_wrong - prevented),
                        "delta_calls": float(diff_calls.mean()) if diff_calls.size else float("nan")})
    name = "the base config" if ref["rule"] == "base" else result.labels()[ref["candidate_id"]]
    return GuardTradeoffInfo(reference=name, reference_id=ref["candidate_id"],
                             table=pd.DataFrame.from_records(records, columns=list(COLUMNS)),
                             title=f"Right answers lost vs wrong answers prevented, against {name}")


def guard_tradeoff_figure(info: GuardTradeoffInfo, label_px: tuple[float, float] = PLOT_PX) -> go.Figure:
    """Lost (x) against prevented (y), one point per candidate labelled by its changes where the label fits
    (:func:`rag_lab.figures.labels.place_labels`), and the diagonal prevented = lost."""
    table = info.table
    x, y = [float(v) for v in table["lost"]], [float(v) for v in table["prevented"]]
    top = max([*x, *y, 1.0])
    x_range, y_range = padded_range([0.0, top]), padded_range([0.0, top])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0.0, top], y=[0.0, top], mode="lines", line=dict(color="black", width=1, dash="dash"),
                             name="prevented = lost (above: more errors prevented than answers lost)",
                             hoverinfo="skip"))
    hovers = [hover(f"{r.label}\n{r.candidate_id}\n{r.n} questions: {r.lost} right answers lost, {r.prevented} wrong "
                    f"prevented\n{r.gained_right} right gained, {r.new_wrong} new wrong\nnet at c = 1: {r.net_c1:+d}\n"
                    f"Δ LLM calls / question: {r.delta_calls:+.3g}") for r in table.itertuples()]
    fig.add_trace(go.Scatter(
        x=x, y=y, mode="markers+text", name="candidates", marker=dict(size=11, color=COLOUR),
        **labelled_markers(x, y, [str(t) for t in table["label"]], x_range, y_range, label_px),
        customdata=[str(c) for c in table["candidate_id"]], hovertext=hovers, hovertemplate="%{hovertext}<extra></extra>"))
    fig.update_xaxes(title_text="right answers lost (reference right, candidate not)", range=list(x_range))
    fig.update_yaxes(title_text="wrong answers prevented (reference wrong, candidate not)", range=list(y_range))
    fig.update_layout(template="plotly_white", title=html.escape(info.title), height=480,
                      margin=dict(l=60, r=20, t=60, b=60), legend=dict(orientation="h", y=-0.2))
    return fig
