"""How many retrieval rounds each question used, by question type, from per-question metric rows (e.g.
``SweepResult.rows(candidate_id)``): plain counts and a bar chart; with ``with_hops`` each group's mean minimum number
of hops (``cost_rounds - quality_rounds_minus_hops``) too, so a type that stops before its hops stands out."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rag_lab.errors import ConfigError
from rag_lab.figures.common import as_frame, frozen, group_label, group_names, hover, numeric, require_columns

ROUNDS_COL = "cost_rounds"
HOPS_GAP_COL = "quality_rounds_minus_hops"


class RoundsHistogramInfo(NamedTuple):
    """Counts of questions per group and rounds used.

    ``counts[g, r]`` is how many questions of group ``groups[g]`` used ``rounds[r]`` rounds (every integer from the
    smallest to the largest value seen). ``totals`` are the group sizes. ``mean_min_hops`` is each group's mean minimum
    hops (None without ``with_hops``). Rows with no rounds value are not counted (``n_undefined``)."""

    by: str
    groups: tuple[str, ...]
    rounds: tuple[int, ...]
    counts: np.ndarray
    totals: tuple[int, ...]
    mean_min_hops: tuple[float, ...] | None
    n_undefined: int


def rounds_histogram_info(rows: pd.DataFrame | Sequence[Mapping[str, Any]], by: str = "type",
                          with_hops: bool = False) -> RoundsHistogramInfo:
    """Count per-question ``rows`` by ``by`` (a column, typically ``type``) and rounds used.

    ``with_hops`` also averages the minimum hops per group, from ``quality_rounds_minus_hops``."""
    table = as_frame(rows, "per-question rows")
    require_columns(table, [by, ROUNDS_COL, *([HOPS_GAP_COL] if with_hops else [])], "per-question rows")
    rounds_all = numeric(table, ROUNDS_COL)
    keep = ~np.isnan(rounds_all)
    kept, rounds_used = table[keep], rounds_all[keep]
    if np.any(rounds_used != np.round(rounds_used)) or np.any(rounds_used < 0):
        raise ConfigError(f"column {ROUNDS_COL!r} must hold non-negative integers")
    labels = [group_label(v) for v in kept[by].tolist()]
    groups = group_names(kept[by].tolist())
    rounds = tuple(range(int(rounds_used.min()), int(rounds_used.max()) + 1)) if len(rounds_used) else ()
    counts = np.zeros((len(groups), len(rounds)), dtype=int)
    for label, used in zip(labels, rounds_used, strict=True):
        counts[groups.index(label), int(used) - rounds[0]] += 1
    mean_min_hops = None
    if with_hops:
        min_hops = rounds_used - numeric(kept, HOPS_GAP_COL)
        in_group = [min_hops[[lab == g for lab in labels]] for g in groups]
        mean_min_hops = tuple(float(h[~np.isnan(h)].mean()) if (~np.isnan(h)).any() else float("nan") for h in in_group)
    return RoundsHistogramInfo(by=by, groups=groups, rounds=rounds, counts=frozen(counts),
                               totals=tuple(int(t) for t in counts.sum(axis=1)), mean_min_hops=mean_min_hops,
                               n_undefined=int((~keep).sum()))


def rounds_histogram_figure(info: RoundsHistogramInfo) -> go.Figure:
    """Grouped bars of ``info``: x = rounds used, one bar colour per group; with hops, a dotted vertical
    line per group at its mean minimum hops."""
    fig = go.Figure()
    colors = [f"hsl({int(360 * i / max(len(info.groups), 1))}, 60%, 45%)" for i in range(len(info.groups))]
    for g, name in enumerate(info.groups):
        fig.add_trace(go.Bar(
            x=list(info.rounds),
            y=info.counts[g].tolist(),
            name=html.escape(name),
            marker_color=colors[g],
            hovertext=[hover(f"{info.by}={name}\nrounds={r}\nquestions={c} of {info.totals[g]}")
                       for r, c in zip(info.rounds, info.counts[g].tolist(), strict=True)],
            hoverinfo="text",
        ))
        if info.mean_min_hops is not None and not np.isnan(info.mean_min_hops[g]):
            fig.add_vline(x=info.mean_min_hops[g], line=dict(color=colors[g], dash="dot", width=1.5))
    fig.update_layout(template="plotly_white", barmode="group",
                      title="Rounds used per question" + (" (dotted: mean minimum hops)" if info.mean_min_hops else ""),
                      xaxis=dict(title="rounds used", dtick=1), yaxis_title="questions",
                      legend_title_text=html.escape(info.by))
    return fig
