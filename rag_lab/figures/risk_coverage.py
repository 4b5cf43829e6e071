"""Risk against coverage of a sweep's runs, split Optuna-style into plain data (:func:`risk_coverage_info`) and a
plotly figure (:func:`risk_coverage_figure`): one curve per run, refusing every answer whose score (default
``best_relevance``) is below a threshold (:func:`rag_lab.stats.selective.risk_coverage`), and optionally one
point per config of a sweep that varied a threshold key."""

from __future__ import annotations

import contextlib
import html
import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import label
from rag_lab.evaluation.families import PARAM_PREFIX
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.figures.common import format_value, hover
from rag_lab.figures.labels import PLOT_PX, labelled_markers, padded_range
from rag_lab.stats.selective import risk_coverage

ANSWERED, RIGHT, WRONG = "quality_answered", "quality_right", "quality_confident_error"
X_TITLE = "coverage (share of the questions answered)"
Y_TITLE = "risk (share of the answers that are wrong)"
POINT_COLOUR = "black"


class RiskCoverageCurve(NamedTuple):
    """One run's curve: ``thresholds`` ascending, ``coverage``/``risk``/``answered`` at each (see
    :class:`~rag_lab.stats.selective.RiskCoverage`), ``aurc`` and ``n`` questions. ``unscored`` counts answered
    questions without a score (e.g. a closed-book reader: no context), which the curve counts as refused."""

    candidate_id: str
    label: str
    thresholds: tuple[float, ...]
    coverage: tuple[float, ...]
    risk: tuple[float, ...]
    answered: tuple[int, ...]
    aurc: float
    n: int
    unscored: int


class RiskCoverageInfo(NamedTuple):
    """The curves (one per run asked for) and, with ``points_by``, one point per config that sets it: ``point_*``
    its id (first seed's run), label (the parameters it changes), value of ``points_by``, coverage (mean of
    ``quality_answered``) and risk (confident errors over answers), in the order of the key's values."""

    score_col: str
    title: str
    curves: tuple[RiskCoverageCurve, ...]
    points_by: str | None
    point_ids: tuple[str, ...]
    point_labels: tuple[str, ...]
    point_values: tuple[str, ...]
    point_coverage: tuple[float, ...]
    point_risk: tuple[float, ...]


def _curve(result: SweepResult, candidate_id: str, name: str, score_col: str) -> RiskCoverageCurve:
    rows = result.rows(candidate_id)
    missing = [c for c in (score_col, ANSWERED, RIGHT) if c not in rows.columns]
    if missing:
        raise ConfigError(f"candidate {candidate_id} of {result.run_dir} has no column(s) {missing} in its rows "
                          "(recorded before they existed?)")
    score, answered, right = (pd.to_numeric(rows[c]).to_numpy(dtype=float, na_value=np.nan)
                              for c in (score_col, ANSWERED, RIGHT))
    rc = risk_coverage(score, answered, right)
    return RiskCoverageCurve(candidate_id=candidate_id, label=name, thresholds=rc.thresholds, coverage=rc.coverage,
                             risk=rc.risk, answered=rc.answered, aurc=rc.aurc, n=rc.n,
                             unscored=int(((answered == 1) & np.isnan(score)).sum()))


def _points(result: SweepResult, key: str, labels: dict[str, str]) -> list[tuple[str, str, str, float, float]]:
    """(id, label, value, coverage, risk) of each config that sets ``key`` (a grid point that leaves it unset is
    left out), answers and errors summed over its seeds' questions."""
    if key not in result.swept_keys:
        raise ConfigError(f"points_by={key!r} is not a key this sweep varies (swept keys: {result.swept_keys})")
    table = result.table
    missing = [c for c in (ANSWERED, WRONG) if c not in table.columns]
    if missing:
        raise ConfigError(f"{result.run_dir}: no column(s) {missing} in the results table")
    points = []
    for _, runs in table.groupby("config_id", sort=False):
        if runs[PARAM_PREFIX + key].isna().all():     # a grid point that leaves the key at the base value
            continue
        n = pd.to_numeric(runs["n_questions"]).to_numpy(dtype=float)
        answered = float(np.nansum(pd.to_numeric(runs[ANSWERED]).to_numpy(dtype=float) * n))
        wrong = float(np.nansum(pd.to_numeric(runs[WRONG]).to_numpy(dtype=float) * n))
        first = str(runs["candidate_id"].iloc[0])
        points.append((first, labels[first], runs[PARAM_PREFIX + key].iloc[0],
                       float(answered / n.sum()) if n.sum() else math.nan, wrong / answered if answered else math.nan))
    with contextlib.suppress(TypeError):   # values that do not order (mixed kinds) keep the table's order
        points.sort(key=lambda p: p[2])
    return [(i, name, format_value(v), c, r) for i, name, v, c, r in points]


def risk_coverage_info(result: SweepResult, candidate: str | Sequence[str] | None = None,
                       thresholds_from: str = "best_relevance", points_by: str | None = None) -> RiskCoverageInfo:
    """The curves of ``candidate`` (a ``candidate_id`` or config id, or several; default: the sweep's reference,
    :meth:`~rag_lab.experiments.SweepResult.reference`) thresholding the rows' ``thresholds_from`` column, and
    with ``points_by`` (a swept dotted key) one point per config. Curves and points are labelled by the
    parameters they change from the base config."""
    names = result.labels()
    wanted = [candidate] if candidate is None or isinstance(candidate, str) else list(candidate)
    ids = [result.reference(c)["candidate_id"] if c is None or c not in names else c for c in wanted]
    curves = tuple(_curve(result, cid, names[cid], thresholds_from) for cid in dict.fromkeys(ids))
    points = _points(result, points_by, names) if points_by else []
    by = f" (points: each config of {points_by})" if points_by else ""
    return RiskCoverageInfo(score_col=thresholds_from,
                            title=f"Risk vs coverage, refusing answers below a {label(thresholds_from)} threshold{by}",
                            curves=curves, points_by=points_by, point_ids=tuple(p[0] for p in points),
                            point_labels=tuple(p[1] for p in points), point_values=tuple(p[2] for p in points),
                            point_coverage=tuple(p[3] for p in points), point_risk=tuple(p[4] for p in points))


def _curve_traces(info: RiskCoverageInfo, curve: RiskCoverageCurve) -> list[go.Scatter]:
    """The step line of ``curve`` from coverage 0 (the area under it is its AURC) and its points with hovers."""
    order = sorted(range(len(curve.coverage)), key=lambda k: curve.coverage[k])
    x, y = [curve.coverage[k] for k in order], [curve.risk[k] for k in order]
    name = html.escape(f"{curve.label} (AURC {format_value(curve.aurc)})")
    unscored = f"\n{curve.unscored} answered without a {label(info.score_col)}: counted as refused" \
        if curve.unscored else ""
    texts = [hover(f"{curve.label}\n{curve.candidate_id}\n{label(info.score_col)} ≥ {curve.thresholds[k]:.4g}\n"
                   f"coverage {curve.coverage[k]:.3f} ({curve.answered[k]} of {curve.n} answered)\n"
                   f"risk {curve.risk[k]:.3f}{unscored}") for k in order]
    line = go.Scatter(x=[0.0, *x] if x else [], y=[y[0], *y] if y else [], mode="lines", line=dict(shape="vh", width=2),
                      name=name, legendgroup=curve.candidate_id, hoverinfo="skip")
    marks = go.Scatter(x=x, y=y, mode="markers", marker=dict(size=6), name=name, legendgroup=curve.candidate_id,
                       showlegend=False, customdata=[curve.candidate_id] * len(x), hovertext=texts,
                       hovertemplate="%{hovertext}<extra></extra>")
    return [line, marks]


def risk_coverage_figure(info: RiskCoverageInfo, label_px: tuple[float, float] = PLOT_PX) -> go.Figure:
    """Each curve of ``info`` as a step line with its AURC in the legend and, with ``points_by``, each config as a
    diamond labelled by its changes where the label fits (:func:`rag_lab.figures.labels.place_labels`)."""
    fig = go.Figure()
    colours = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#9d755d", "#bab0ac")
    for i, curve in enumerate(info.curves):
        for trace in _curve_traces(info, curve):
            trace.update(line=dict(color=colours[i % len(colours)]), marker=dict(color=colours[i % len(colours)]))
            fig.add_trace(trace)
    xs = [v for c in info.curves for v in c.coverage] + [0.0, *info.point_coverage]
    ys = [v for c in info.curves for v in c.risk] + [0.0, *info.point_risk]
    x_range, y_range = padded_range(xs), padded_range(ys)
    if info.point_ids:
        px, py = list(info.point_coverage), list(info.point_risk)
        fig.add_trace(go.Scatter(
            x=px, y=py, mode="markers+text", name=html.escape(f"each config of {info.points_by}"),
            marker=dict(size=11, symbol="diamond", color=POINT_COLOUR),
            **labelled_markers(px, py, list(info.point_labels), x_range, y_range, label_px), customdata=list(info.point_ids),
            hovertext=[hover(f"{info.point_labels[k]}\n{info.point_ids[k]}\n{info.points_by} = {info.point_values[k]}\n"
                             f"coverage {info.point_coverage[k]:.3f}, risk {info.point_risk[k]:.3f}")
                       for k in range(len(px))],
            hovertemplate="%{hovertext}<extra></extra>"))
    fig.update_xaxes(title_text=html.escape(X_TITLE), range=list(x_range))
    fig.update_yaxes(title_text=html.escape(Y_TITLE), range=list(y_range))
    fig.update_layout(template="plotly_white", title=html.escape(info.title), height=480,
                      margin=dict(l=60, r=20, t=60, b=60), legend=dict(orientation="h", y=-0.2))
    return fig
