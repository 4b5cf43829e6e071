"""New chunks per retrieval round (the yield curve) of many traces (e.g. ``SweepResult.traces(candidate_id)``), and
where zero-yield stops fired (``stop_reason == "empty_round"``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go

from rag_lab.errors import ConfigError
from rag_lab.figures.common import hover
from rag_lab.pipeline.trace import StopReason, Trace


class RoundYieldInfo(NamedTuple):
    """Per-round yields of a set of questions.

    ``question_rounds[i]``/``question_yields[i]`` are question ``qids[i]``'s retrieval rounds and the new chunks each
    brought (yields of several retrieve steps in one round are summed). ``rounds`` are every round number seen;
    ``mean_yield[r]`` is the mean over the ``n_questions[r]`` questions that reached round ``rounds[r]``.
    ``stop_qids``/``stop_rounds`` are the questions stopped by the zero-yield stop and the round where it fired."""

    qids: tuple[str, ...]
    question_rounds: tuple[tuple[int, ...], ...]
    question_yields: tuple[tuple[int, ...], ...]
    rounds: tuple[int, ...]
    mean_yield: tuple[float, ...]
    n_questions: tuple[int, ...]
    stop_qids: tuple[str, ...]
    stop_rounds: tuple[int, ...]


def _per_round(trace: Trace) -> dict[int, int]:
    yields: dict[int, int] = {}
    for step in trace.steps:
        if step.kind == "retrieve" and step.round_yield is not None:
            yields[step.round] = yields.get(step.round, 0) + step.round_yield
    return dict(sorted(yields.items()))


def round_yield_info(traces: Mapping[str, Trace] | Iterable[Trace]) -> RoundYieldInfo:
    """The yield curve of ``traces`` (a ``qid → Trace`` mapping or an iterable of traces)."""
    items = list(traces.values()) if isinstance(traces, Mapping) else list(traces)
    bad = [type(t).__name__ for t in items if not isinstance(t, Trace)]
    if bad:
        raise ConfigError(f"expected Trace objects, got {sorted(set(bad))}")
    per_question = [_per_round(t) for t in items]
    rounds = sorted({r for yields in per_question for r in yields})
    by_round = {r: [y[r] for y in per_question if r in y] for r in rounds}
    stops = [(t.qid, max(y)) for t, y in zip(items, per_question, strict=True)
             if t.stop_reason == StopReason.EMPTY_ROUND and y]
    return RoundYieldInfo(qids=tuple(t.qid for t in items), question_rounds=tuple(tuple(y) for y in per_question),
                          question_yields=tuple(tuple(y.values()) for y in per_question), rounds=tuple(rounds),
                          mean_yield=tuple(float(np.mean(by_round[r])) for r in rounds),
                          n_questions=tuple(len(by_round[r]) for r in rounds), stop_qids=tuple(q for q, _ in stops),
                          stop_rounds=tuple(r for _, r in stops))


def round_yield_figure(info: RoundYieldInfo) -> go.Figure:
    """Lines and markers of ``info``: per-question lines (one trace, grey), the mean per round, and the
    zero-yield stops (red crosses at yield 0)."""
    xs: list[int | None] = []
    ys: list[int | None] = []
    texts: list[str | None] = []
    for qid, rounds, yields in zip(info.qids, info.question_rounds, info.question_yields, strict=True):
        xs += [*rounds, None]
        ys += [*yields, None]
        texts += [*(hover(f"{qid}\nround {r}: {y} new chunk(s)") for r, y in zip(rounds, yields, strict=True)), None]
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=xs, y=ys, mode="lines+markers", name="questions", hovertext=texts, hoverinfo="text",
        line=dict(color="rgba(120,120,120,0.35)", width=1), marker=dict(size=4, color="rgba(120,120,120,0.5)")))
    fig.add_trace(go.Scatter(
        x=list(info.rounds), y=list(info.mean_yield), mode="lines+markers", name="mean",
        line=dict(color="#1f77b4", width=3), marker=dict(size=9),
        hovertext=[f"round {r}: mean {m:.3g} new chunk(s) over {n} question(s)"
                   for r, m, n in zip(info.rounds, info.mean_yield, info.n_questions, strict=True)],
        hoverinfo="text",
    ))
    if info.stop_qids:
        fig.add_trace(go.Scatter(
            x=list(info.stop_rounds), y=[0] * len(info.stop_rounds), mode="markers", name="zero-yield stop",
            marker=dict(symbol="x", size=12, color="#d62728"),
            hovertext=[hover(f"{q}\nzero-yield stop in round {r}") for q, r in zip(info.stop_qids, info.stop_rounds,
                                                                                  strict=True)],
            hoverinfo="text",
        ))
    fig.update_layout(template="plotly_white", title="New chunks per retrieval round",
                      xaxis=dict(title="round", dtick=1), yaxis=dict(title="new chunks (yield)", rangemode="tozero"))
    return fig
