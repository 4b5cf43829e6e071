"""One question's :class:`~rag_lab.pipeline.trace.Trace` as a timeline: every step in order (x), in lanes by kind
(y), with its queries, yield, decision, validation outcome (the marker's colour), interventions and tokens; how it
ended (the stop reason) in the title."""

from __future__ import annotations

import html
from typing import Any, NamedTuple

import plotly.graph_objects as go

from rag_lab.errors import ConfigError
from rag_lab.figures.common import format_value, hover
from rag_lab.pipeline.trace import StepKind, Trace

#: Lane order of the timeline (the order the pipeline runs its stages in); kinds not present are left out.
LANES: tuple[StepKind, ...] = (
    "route", "expand", "retrieve", "controller", "fallback", "finalize", "grade", "generate", "guard", "judge",
)
#: Marker colour per validation outcome; ``NO_CALL`` is a step without an LLM call.
NO_CALL = "no LLM call"
OUTCOME_COLORS = {
    "valid": "#2ca02c", "text": "#17becf", "repaired": "#ff7f0e", "fallback": "#d62728", "invalid": "#8c1c13",
    NO_CALL: "#7f7f7f",
}
_QUERY_CHARS = 120
_NOTE_CHARS = 40


class TimelineStep(NamedTuple):
    """One trace step, flattened. ``action`` summarises the step's decision (the controller's action, the
    router's route, a grade's score); ``outcome``/``reason`` are its LLM call's validation (None without a
    call); ``cumulative_tokens`` includes this step."""

    index: int
    kind: str
    round: int
    queries: tuple[str, ...]
    round_yield: int | None
    n_retrieved: int
    action: str
    role: str | None
    outcome: str | None
    reason: str
    interventions: tuple[str, ...]
    tokens: int
    cumulative_tokens: int


class TraceTimelineInfo(NamedTuple):
    """A question's steps in order, and how its run ended."""

    qid: str
    question: str
    route: str
    stop_reason: str | None
    rounds_used: int
    lanes: tuple[str, ...]
    steps: tuple[TimelineStep, ...]
    total_tokens: int


def _action(decision: dict[str, Any] | None) -> str:
    if not decision:
        return ""
    if "action" in decision:
        return str(decision["action"])
    return ", ".join(f"{k}={format_value(v)}" for k, v in decision.items())


def trace_timeline_info(trace: Trace) -> TraceTimelineInfo:
    """The timeline data of one question's ``trace``."""
    if not isinstance(trace, Trace):
        raise ConfigError(f"expected a Trace, got {type(trace).__name__}")
    steps, cumulative = [], 0
    for i, step in enumerate(trace.steps):
        cumulative += step.tokens
        steps.append(TimelineStep(index=i, kind=step.kind, round=step.round, queries=tuple(step.queries),
                                  round_yield=step.round_yield, n_retrieved=len(step.retrieved),
                                  action=_action(step.decision), role=step.llm.role if step.llm else None,
                                  outcome=step.llm.outcome if step.llm else None,
                                  reason=step.llm.reason if step.llm else "", interventions=tuple(step.interventions),
                                  tokens=step.tokens, cumulative_tokens=cumulative))
    kinds = {s.kind for s in steps}
    return TraceTimelineInfo(qid=trace.qid, question=trace.question, route=trace.route,
                             stop_reason=str(trace.stop_reason) if trace.stop_reason is not None else None,
                             rounds_used=trace.rounds_used,
                             lanes=tuple(k for k in LANES if k in kinds) + tuple(sorted(kinds - set(LANES))),
                             steps=tuple(steps), total_tokens=cumulative)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _step_text(step: TimelineStep) -> str:
    lines = [f"step {step.index}: {step.kind}" + (f" (round {step.round})" if step.round else "")]
    lines += [f"query: {_clip(q, _QUERY_CHARS)}" for q in step.queries]
    if step.round_yield is not None:
        lines.append(f"yield: {step.round_yield} new of {step.n_retrieved} retrieved")
    elif step.n_retrieved:
        lines.append(f"chunks: {step.n_retrieved}")
    if step.action:
        lines.append(f"decision: {step.action}")
    if step.outcome is not None:
        lines.append(f"LLM {step.role}: {step.outcome}" + (f" ({step.reason})" if step.reason else ""))
    lines += [f"intervention: {i}" for i in step.interventions]
    lines.append(f"tokens: {step.tokens} (total {step.cumulative_tokens})")
    return "\n".join(lines)


def trace_timeline_figure(info: TraceTimelineInfo) -> go.Figure:
    """The timeline of ``info``: a grey path through the steps, one marker trace per validation outcome,
    and an annotation on every step with interventions (full text on hover)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[s.index for s in info.steps], y=[s.kind for s in info.steps], mode="lines", name="order",
        line=dict(color="#cccccc", width=1), hoverinfo="skip", showlegend=False))
    outcomes = list(dict.fromkeys(s.outcome or NO_CALL for s in info.steps))
    for outcome in outcomes:
        steps = [s for s in info.steps if (s.outcome or NO_CALL) == outcome]
        fig.add_trace(go.Scatter(
            x=[s.index for s in steps], y=[s.kind for s in steps], mode="markers+text", name=html.escape(outcome),
            marker=dict(size=14, color=OUTCOME_COLORS.get(outcome, "#9467bd"), line=dict(width=1, color="white")),
            text=[str(s.round_yield) if s.round_yield is not None else "" for s in steps], textposition="top center",
            hovertext=[hover(_step_text(s)) for s in steps], hoverinfo="text"))
    for step in info.steps:
        if step.interventions:
            note = _clip(step.interventions[0], _NOTE_CHARS) + (f" (+{len(step.interventions) - 1})"
                                                                   if len(step.interventions) > 1 else "")
            fig.add_annotation(
                x=step.index, y=step.kind, text=html.escape("⚑ " + note), showarrow=True, arrowhead=2, ax=0, ay=-34,
                font=dict(size=10, color="#8c1c13"), hovertext=hover("\n".join(step.interventions)))
    title = (f"{info.qid}: stop {info.stop_reason or '–'}, {info.rounds_used} round(s), "
             f"{info.total_tokens} tokens, route {info.route or '–'}")
    fig.update_layout(
        template="plotly_white", title=dict(text=html.escape(title)),
        xaxis=dict(title="step", dtick=1, range=[-0.5, max(len(info.steps) - 0.5, 0.5)]),
        yaxis=dict(title="step kind", type="category", categoryorder="array", categoryarray=list(info.lanes),
                   autorange="reversed"),
        legend_title_text="LLM outcome", height=max(320, 60 * len(info.lanes) + 160))
    return fig
