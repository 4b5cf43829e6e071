"""Simulated vs real, one metric: each verified candidate of a
:class:`~rag_lab.experiments.calibration.verify.Verification` at (simulated mean, real mean), with the gap's
paired 95% interval, split Optuna-style into plain data (:func:`sim_vs_real_info`) and a plotly figure
(:func:`sim_vs_real_figure`). The simulated winner is a star; the real Pareto front is filled."""

from __future__ import annotations

import html
import math
from typing import NamedTuple

import plotly.graph_objects as go

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import label
from rag_lab.experiments.calibration.verify import Verification
from rag_lab.figures.common import hover, point_texts

COLOUR = "#4c78a8"


class SimVsRealInfo(NamedTuple):
    """Everything the figure shows, one entry per candidate with both means defined (``n_undefined`` counts
    the others): ``sim``/``real`` means, ``lo``/``hi`` the real point's bar (simulated mean + the paired
    interval of the gap), ``is_winner`` (the simulated winner), ``on_real_front``; ``tau`` with ``tau_lo``/
    ``tau_hi`` (NaN when not computed or undefined)."""

    metric: str
    title: str
    ids: tuple[str, ...]
    labels: tuple[str, ...]
    sim: tuple[float, ...]
    real: tuple[float, ...]
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    is_winner: tuple[bool, ...]
    on_real_front: tuple[bool, ...]
    tau: float
    tau_lo: float
    tau_hi: float
    n_undefined: int


def sim_vs_real_info(verification: Verification, metric: str) -> SimVsRealInfo:
    """The figure's data for ``metric`` (one of the verification's compared metrics)."""
    gaps = verification.gaps
    rows = gaps[(gaps["metric"] == metric) & (gaps["candidate"] != "all")]
    if rows.empty:
        raise ConfigError(f"no metric {metric!r} in this verification (metrics: {sorted(set(gaps['metric']))})")
    labels = verification.labels
    keep = rows[~(rows["sim"].isna() | rows["real"].isna())]
    ranks = verification.ranks[verification.ranks["metric"] == metric]
    tau, tau_lo, tau_hi = ((float(ranks.iloc[0][c]) for c in ("tau", "lo", "hi")) if not ranks.empty
                           else (math.nan, math.nan, math.nan))
    tau_text = ("" if ranks.empty else " — Kendall τ undefined (ties)" if math.isnan(tau)
                else f" — Kendall τ = {tau:+.2f}" + ("" if math.isnan(tau_lo) else f" [{tau_lo:+.2f}, {tau_hi:+.2f}]"))
    ids = tuple(str(k) for k in keep["candidate"])
    return SimVsRealInfo(metric=metric,
                         title=f"{label(metric)}: simulated vs {verification.describe_backend()}{tau_text}", ids=ids,
                         labels=tuple(labels[k] for k in ids), sim=tuple(float(v) for v in keep["sim"]),
                         real=tuple(float(v) for v in keep["real"]),
                         lo=tuple(float(s + d) for s, d in zip(keep["sim"], keep["lo"], strict=True)),
                         hi=tuple(float(s + d) for s, d in zip(keep["sim"], keep["hi"], strict=True)),
                         is_winner=tuple(k == verification.winner for k in ids),
                         on_real_front=tuple(k in verification.real_front for k in ids),
                         tau=tau, tau_lo=tau_lo, tau_hi=tau_hi, n_undefined=len(rows) - len(keep))


def sim_vs_real_figure(info: SimVsRealInfo) -> go.Figure:
    """The scatter of ``info`` with the diagonal real = simulated."""
    values = [v for v in (*info.sim, *info.real, *info.lo, *info.hi) if not math.isnan(v)]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    pad = (high - low) * 0.08 or 0.05
    span = [low - pad, high + pad]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=span, y=span, mode="lines", line=dict(color="black", width=1, dash="dash"),
                             name="real = simulated", hoverinfo="skip"))
    fig.add_trace(go.Scatter(
        x=list(info.sim), y=list(info.real), mode="markers+text",
        text=[html.escape(t) for t in point_texts(info.sim, info.real, info.labels)], textposition="top center",
        marker=dict(size=[16 if w else 11 for w in info.is_winner], color=COLOUR,
                    symbol=[("star" if w else "circle") + ("" if f else "-open")
                            for w, f in zip(info.is_winner, info.on_real_front, strict=True)],
                    line=dict(width=2, color=COLOUR)),
        error_y=dict(type="data", symmetric=False, array=[h - r for h, r in zip(info.hi, info.real, strict=True)],
                     arrayminus=[r - lo for r, lo in zip(info.real, info.lo, strict=True)], thickness=1.5, width=4),
        customdata=list(info.ids),
        hovertext=[hover(f"{info.labels[i]}\n{info.ids[i]}\nsimulated {info.sim[i]:.4g}, real {info.real[i]:.4g}\n"
                         f"real − sim {info.real[i] - info.sim[i]:+.4g} [{info.lo[i] - info.sim[i]:+.4g}, "
                         f"{info.hi[i] - info.sim[i]:+.4g}]"
                         + ("\nsimulated winner" if info.is_winner[i] else "")
                         + ("\non the real Pareto front" if info.on_real_front[i] else ""))
                   for i in range(len(info.ids))],
        hovertemplate="%{hovertext}<extra></extra>", name="candidates (filled: on the real front, ★: sim winner)",
    ))
    fig.update_xaxes(title_text=html.escape(f"simulated: {label(info.metric)}"), range=span)
    fig.update_yaxes(title_text=html.escape(f"real: {label(info.metric)}"), range=span)
    fig.update_layout(template="plotly_white", title=html.escape(info.title), height=480,
                      margin=dict(l=60, r=20, t=60, b=60), legend=dict(orientation="h", y=-0.2))
    return fig
