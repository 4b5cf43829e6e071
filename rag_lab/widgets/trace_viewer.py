"""``TraceViewer``: pick a configuration and a question (filtered by type and by outcome: ``wrong``, ``refused``
or ``fallback``), read its trace timeline and the raw prompts and outputs of its LLM calls.

>>> viewer = TraceViewer(load_sweep("reports/quickstart"))       # or a run dir, or an EvalRun  # doctest: +SKIP
>>> viewer.filter(type="bridge", outcome="wrong")                 # the qids that match          # doctest: +SKIP
>>> viewer.select(qid="w-0042"); viewer.timeline_info().stop_reason                             # doctest: +SKIP"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from rag_lab.errors import ConfigError
from rag_lab.evaluation import EvalRun
from rag_lab.experiments import SweepResult, load_sweep
from rag_lab.figures import TraceTimelineInfo, trace_timeline_figure, trace_timeline_info
from rag_lab.pipeline import Trace
from rag_lab.widgets.static import with_static_html

CSS_CLASS = "rag-lab-trace-viewer"
OUTCOMES = ("wrong", "refused", "fallback")
Source = SweepResult | EvalRun | Mapping[str, EvalRun] | str | Path


def outcome_mask(rows: pd.DataFrame, outcome: str) -> pd.Series:
    """Which ``rows`` (per-question metrics) have ``outcome``: ``wrong`` (answered, with no gold answer contained),
    ``refused`` or ``fallback`` (a deterministic fallback was used)."""
    answered = rows["status"] == "answered"
    if outcome == "wrong":
        return answered & ~(pd.to_numeric(rows["quality_answer_containment"], errors="coerce") == 1.0)
    if outcome == "refused":
        return rows["status"] == "refused"
    if outcome == "fallback":
        return pd.to_numeric(rows["quality_fallback"], errors="coerce") == 1.0
    raise ConfigError(f"unknown outcome {outcome!r}; choose one of {', '.join(OUTCOMES)}")


class _Config(NamedTuple):
    """One configuration's per-question rows and traces, each read on first call (``functools.cache``)."""

    rows: Callable[[], pd.DataFrame]
    traces: Callable[[], Mapping[str, Trace]]


def _configs(source: Source) -> tuple[dict[str, _Config], dict[str, str]]:
    """Configurations by key (a sweep's candidate ids, ``run`` for one EvalRun, or a mapping's keys) and
    what the dropdown shows for each: a sweep candidate's changes from the base config
    (``round_cap.max_rounds=1``, ``base``) with its id, else the key itself."""
    if isinstance(source, (str, Path)):
        source = load_sweep(source)
    if isinstance(source, SweepResult):
        sweep = source
        ids = list(sweep.table["candidate_id"])
        labels = sweep.labels()
        return ({cid: _Config(cache(lambda c=cid: sweep.rows(c)), cache(lambda c=cid: sweep.traces(c))) for cid in ids},
                {cid: f"{labels.get(cid, cid)} ({cid})" for cid in ids})
    runs = {"run": source} if isinstance(source, EvalRun) else dict(source)
    if not runs or not all(isinstance(r, EvalRun) for r in runs.values()):
        raise TypeError("TraceViewer takes a SweepResult, a run directory, an EvalRun or a dict of EvalRuns")
    return ({label: _Config(cache(run.frame), cache(lambda r=run: r.traces)) for label, run in runs.items()},
            {label: label for label in runs})


class TraceViewer:
    """Dropdowns for the configuration, the type and outcome filters and the question; the selected
    question's timeline (:func:`rag_lab.figures.trace_timeline_figure`) and its escaped prompts/outputs."""

    def __init__(self, source: Source) -> None:
        self._configs, self.config_labels = _configs(source)
        if not self._configs:
            raise ConfigError("the source holds no configuration")
        self.candidate_id: str = next(iter(self._configs))
        self.qid: str | None = None
        self._type: str | None = None
        self._outcome: str | None = None

        style = {"description_width": "initial"}
        self._config_box = widgets.Dropdown(options=[(self.config_labels[k], k) for k in self._configs],
                                            description="configuration", style=style, layout=widgets.Layout(width="40em"))
        self._type_box = widgets.Dropdown(description="type", style=style)
        self._outcome_box = widgets.Dropdown(options=[("all", None), *[(o, o) for o in OUTCOMES]],
                                             description="outcome", style=style)
        self._question_box = widgets.Dropdown(description="question", style=style, layout=widgets.Layout(width="40em"))
        self._count = widgets.Label()
        self.figure = go.FigureWidget(layout=go.Layout(height=320, template="plotly_white"))
        self._prompts = widgets.HTML()
        self.widget = widgets.VBox([widgets.HBox([self._config_box, self._type_box, self._outcome_box]),
                                    widgets.HBox([self._question_box, self._count]), self.figure, self._prompts])
        self.widget.add_class(CSS_CLASS)
        self._muted = False
        self._config_box.observe(lambda c: self._user(self.select, candidate_id=c["new"]), names="value")
        self._type_box.observe(lambda c: self._user(self.filter, type=c["new"], outcome=self._outcome), names="value")
        self._outcome_box.observe(lambda c: self._user(self.filter, type=self._type, outcome=c["new"]), names="value")
        self._question_box.observe(lambda c: self._user(self.select, qid=c["new"]), names="value")
        self.select()

    # --- actions ------------------------------------------------------------------------------

    @property
    def configurations(self) -> list[str]:
        return list(self._configs)

    @property
    def rows(self) -> pd.DataFrame:
        """The selected configuration's per-question metrics rows."""
        return self._configs[self.candidate_id].rows()

    def select(self, candidate_id: str | None = None, qid: str | None = None) -> TraceViewer:
        """Show configuration ``candidate_id`` (default: the current one) and question ``qid``. Without
        ``qid``: the current question if it passes the filters in that configuration, else the first that does.
        Returns the viewer, so ``TraceViewer(result).select(...)`` displays it."""
        if candidate_id is not None:
            if candidate_id not in self._configs:
                raise KeyError(f"no configuration {candidate_id!r}; configurations: {self.configurations}")
            self.candidate_id = candidate_id
            if self._type not in set(self.rows["type"]):
                self._type = None
        if qid is not None and qid not in set(self.rows["qid"]):
            raise KeyError(f"no question {qid!r} in configuration {self.candidate_id!r}")
        matching = self._matching()
        self._show(qid or (self.qid if self.qid in matching else (matching[0] if matching else None)))
        return self

    def filter(self, type: str | None = None, outcome: str | None = None) -> list[str]:
        """The qids of the selected configuration with question ``type`` and ``outcome`` (None: any; see
        :data:`OUTCOMES`). They become the question list; the selection moves to the first of them unless
        the selected question is among them."""
        if outcome is not None and outcome not in OUTCOMES:
            raise ConfigError(f"unknown outcome {outcome!r}; choose one of {', '.join(OUTCOMES)}")
        if type is not None and type not in set(self.rows["type"]):
            raise ConfigError(f"no question of type {type!r} in configuration {self.candidate_id!r}")
        self._type, self._outcome = type, outcome
        matching = self._matching()
        self._show(self.qid if self.qid in matching else (matching[0] if matching else None))
        return matching

    def trace(self) -> Trace:
        """The selected question's trace."""
        if self.qid is None:
            raise LookupError("no question selected (the filters match none)")
        return self._configs[self.candidate_id].traces()[self.qid]

    def timeline_info(self) -> TraceTimelineInfo:
        """The timeline data of the selected question (what the figure shows)."""
        return trace_timeline_info(self.trace())

    def prompts_html(self) -> str:
        """Every LLM call of the selected question: role, validation outcome, tokens, each prompt message and
        the raw output, all HTML-escaped."""
        if self.qid is None:
            return "<p>no question selected</p>"
        trace = self.trace()
        parts = [f"<h4>{html.escape(trace.qid)}: {html.escape(trace.question)}</h4>"]
        for i, call in enumerate(trace.llm_calls(), 1):
            reason = f" ({html.escape(call.reason)})" if call.reason else ""
            parts.append(f"<details><summary>call {i}: <b>{html.escape(call.role)}</b> — {html.escape(call.outcome)}"
                         f"{reason}, {call.prompt_tokens}+{call.completion_tokens} tokens"
                         f"{', cached' if call.cached else ''}</summary>")
            parts += [f"<div><i>{html.escape(m.get('role', ''))}</i><pre style='white-space: pre-wrap'>"
                      f"{html.escape(m.get('content', ''))}</pre></div>" for m in call.messages]
            parts.append(f"<div><i>output</i><pre style='white-space: pre-wrap'>{html.escape(call.raw_output)}</pre>"
                         "</div></details>")
        if len(parts) == 1:
            parts.append("<p>no LLM calls</p>")
        return "\n".join(parts)

    # --- display ------------------------------------------------------------------------------

    def _user(self, action: Callable[..., Any], **kwargs: Any) -> None:
        """Run a widget event's action unless the change came from :meth:`_sync_widgets`."""
        if not self._muted and kwargs.get("qid", "") is not None:
            action(**kwargs)

    def _matching(self) -> list[str]:
        rows = self.rows
        mask = pd.Series(True, index=rows.index)
        if self._type is not None:
            mask &= rows["type"] == self._type
        if self._outcome is not None:
            mask &= outcome_mask(rows, self._outcome)
        return rows.loc[mask, "qid"].tolist()

    def _show(self, qid: str | None) -> None:
        self.qid = qid
        figure = trace_timeline_figure(self.timeline_info()) if qid is not None else go.Figure()
        with self.figure.batch_update():
            self.figure.data = ()
            self.figure.layout.annotations = ()
            self.figure.add_traces(list(figure.data))
            self.figure.update_layout(figure.layout)
        self._prompts.value = self.prompts_html()
        self._sync_widgets()

    def _sync_widgets(self) -> None:
        """Make the dropdowns show the current selection and filters, without firing their actions."""
        rows, matching = self.rows, self._matching()
        listed = matching if self.qid is None or self.qid in matching else [self.qid, *matching]
        labels = {r.qid: f"{r.qid} ({r.type}, {r.status})" for r in rows.itertuples()}
        self._muted = True
        try:
            self._config_box.value = self.candidate_id
            self._type_box.options = [("all", None), *[(t, t) for t in sorted(rows["type"].unique())]]
            self._type_box.value = self._type
            self._outcome_box.value = self._outcome
            self._question_box.options = [(labels[q], q) for q in listed]
            self._question_box.value = self.qid
        finally:
            self._muted = False
        self._count.value = f"{len(matching)} of {len(rows)} questions"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return with_static_html(self.widget._repr_mimebundle_(**kwargs), "TraceViewer: one question's trace, step by step")
