"""``PolicyExplorer``: move a policy control, the real pipeline runs over the evaluation set, and the point for that
configuration appears on the cost-vs-quality plot, labelled by the parameters it changes, with its paired difference
against the reference point in the status line (:meth:`PolicyExplorer.delta`). Runs happen in a background thread, one
at a time; a newer change supersedes a running one, which stops early and never writes its point. Every run goes through
the shared corpus resources and the response cache (:mod:`.session`). How it behaves: docs/course.md, "The widgets"."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import pandas as pd

from rag_lab.errors import ConfigError
from rag_lab.evaluation import EvalRun, EvaluationCancelled, evaluate_pipeline
from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY, beside, label
from rag_lab.evaluation.families import PARAM_PREFIX
from rag_lab.experiments.engine.candidate_configs import changes_label, config_changes
from rag_lab.experiments.engine.grid import config_id
from rag_lab.experiments.engine.progress import per_question
from rag_lab.llm.base import LLMBackend
from rag_lab.pipeline import Pipeline, PipelineConfig
from rag_lab.pipeline.config import dotted_params
from rag_lab.stats.paired import PairedDifference, interval_text, paired_difference
from rag_lab.stats.summary import aggregate_rows, pareto_mask
from rag_lab.widgets.axes import check_axes
from rag_lab.widgets.controls import ParamControl, param_control
from rag_lab.widgets.cost_quality_plot import PlotWidget, draw
from rag_lab.widgets.session import shared_data, simulator_backend

DEFAULT_PARAMS = ("round_cap.max_rounds", "crag.upper", "truncation.strategy", "disclosure.disclosed")
CSS_CLASS = "rag-lab-policy-explorer"
#: Bootstrap resamples of the status line's paired interval (a few ms on 240 questions).
DELTA_BOOT = 2000


class PolicyExplorer(PlotWidget):
    """Controls for ``params`` (dotted keys), a progress bar, a status line and a cost-vs-quality ``FigureWidget`` with
    one point per distinct configuration run (the latest one ringed), CI error bars on quality and the Pareto front.

    Questions: ``dataset``'s ``split``, restricted to ``types``, the first ``per_type`` of each type, at most ``limit``
    (as a sweep picks them). ``backend`` defaults to the cached simulator with ``profile`` and ``knobs`` (seed 0, as
    sweeps use, so a sweep with the same ``backend.profile``/``backend.knobs`` shares its cache). ``base`` holds every
    parameter the controls do not set.

    >>> explorer = PolicyExplorer(params=["round_cap.max_rounds", "crag.upper"], limit=6)   # doctest: +SKIP
    >>> explorer.run()                                  # the base configuration: one point   # doctest: +SKIP
    >>> explorer.with_params({"round_cap.max_rounds": 3}).wait()                            # doctest: +SKIP
    >>> explorer.points[["param_round_cap.max_rounds", "quality_answer_containment", "cost_llm_calls"]]  # doctest: +SKIP
    >>> explorer                                        # in Jupyter: the controls, progress and the plot  # doctest: +SKIP
    """

    def __init__(self, dataset: str = "world", params: Sequence[str] = DEFAULT_PARAMS, split: str | None = "test",
                 limit: int | None = None, types: Sequence[str] | None = None, backend: LLMBackend | None = None,
                 base: PipelineConfig | None = None, cost_col: str = DEFAULT_COST, quality_col: str = DEFAULT_QUALITY,
                 profile: str = "typical", knobs: Mapping[str, float | str] | None = None,
                 per_type: int | None = None) -> None:
        if not params:
            raise ConfigError("PolicyExplorer needs at least one parameter to control")
        check_axes(cost_col, quality_col)
        self.base = base if base is not None else PipelineConfig()
        self.params = list(dict.fromkeys(params))
        data, self.resources = shared_data(dataset)
        self.questions = data.evalset.select(split=split, types=types, limit=limit, per_type=per_type)
        if not len(self.questions):
            raise ConfigError(f"no questions in {dataset!r} for split={split!r}, types={types}, limit={limit}")
        if backend is not None and (knobs or profile != "typical"):
            raise ConfigError("give either a backend or a simulator profile/knobs, not both")
        self.backend = backend if backend is not None else simulator_backend(profile, knobs)

        self.controls: dict[str, ParamControl] = {k: param_control(k, self.base) for k in self.params}
        self._muted = False
        for control in self.controls.values():
            control.observe(self._on_change)

        self._run_lock = threading.Lock()   # one run at a time
        self._generation = 0
        self._thread: threading.Thread | None = None
        self._points: dict[str, dict[str, Any]] = {}   # by config_id, in the order first run
        self._configs: dict[str, PipelineConfig] = {}
        self._eval_runs: dict[str, EvalRun] = {}
        self._current: str | None = None
        self.runs_completed = 0
        self.runs_superseded = 0

        super().__init__(cost_col, quality_col, "idle", total=len(self.questions))
        self._status = widgets.Label(value=self._status_text())
        self._status.add_class("rag-lab-status")
        self._delta = widgets.Label(value="")
        self._delta.add_class("rag-lab-delta")
        self.widget = widgets.VBox([widgets.VBox([c.widget for c in self.controls.values()]),
                                    widgets.HBox([self._progress, self._state]), self._status, self._delta,
                                    self.axes.widget, self.figure])
        self.widget.add_class(CSS_CLASS)

    # --- actions (plain methods: no browser needed) ------------------------------------------------

    def config(self) -> PipelineConfig:
        """The configuration the controls show (``ConfigError`` if their values do not go together)."""
        return self.base.with_params({k: c.value for k, c in self.controls.items()})

    def with_params(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> PolicyExplorer:
        """Set controls by dotted key and start one run of the resulting configuration (not waiting); return
        the explorer. Keys as in :meth:`~rag_lab.pipeline.PipelineConfig.with_params`
        (``__`` for the dot in the keyword form: ``with_params(crag__upper=0.6)``). The explorer is one live
        widget, so it changes in place: the controls move and a run starts."""
        values = dotted_params(values, kwargs)
        unknown = [k for k in values if k not in self.controls]
        if unknown:
            raise ConfigError(f"no control for {unknown}; this explorer controls {self.params}")
        config = self.config().with_params(values)  # validates the whole before touching any control
        self._show_values(config)
        self._start(config)
        return self

    def run(self, config: PipelineConfig | None = None, wait: bool = True) -> dict[str, Any] | None:
        """Run ``config`` (default: the controls' configuration; a given one is shown on the controls).
        With ``wait``, block and return its point (see :attr:`points`); else return None at once."""
        if config is None:
            config = self.config()
        else:
            self._show_values(config)
        self._start(config)
        return self.wait() if wait else None

    def wait(self, timeout: float | None = None) -> dict[str, Any] | None:
        """Block until the latest run ends; return the latest point (None before any), re-raising a run's error."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                thread = self._thread
            if thread is None:
                break
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                raise TimeoutError(f"the run did not finish within {timeout} s")
            with self._lock:
                if self._thread is thread:
                    break
        if self._error is not None:
            raise self._error
        last = self._points.get(self._current)
        return None if last is None else dict(last)

    @property
    def points(self) -> pd.DataFrame:
        """One row per configuration run: ``config_id``, ``param_<key>``, ``n_questions``, every ``quality_*`` (with
        ``_lo``/``_hi`` CI bounds) and ``cost_*`` mean, ``seconds``, ``is_pareto`` (for ``cost_col`` × ``quality_col``),
        ``is_current`` (the latest run) and ``changes`` (the parameters it changes from ``base``)."""
        with self._lock:
            return self._table()

    def _table(self) -> pd.DataFrame:
        """:attr:`points` (called with the lock held)."""
        table = pd.DataFrame(list(self._points.values()))
        if table.empty:
            return table
        table["is_pareto"] = pareto_mask(table[self.cost_col], table[self.quality_col])
        table["is_current"] = table["config_id"] == self._current
        table["changes"] = [self._label(cid) for cid in table["config_id"]]
        return table

    @property
    def reference_id(self) -> str | None:
        """The config id the status line's Δ is taken against: the base configuration once it has run, else
        the first configuration run (None before any run)."""
        with self._lock:
            return self._reference_id()

    def _reference_id(self) -> str | None:
        base = config_id(self.base)
        return base if base in self._points else next(iter(self._points), None)

    def delta(self, config_id: str | None = None, metric: str | None = None, n_boot: int = DELTA_BOOT) -> PairedDifference:
        """The paired difference of ``metric`` (default: the quality axis) between configuration ``config_id``
        (default: the latest run) and :attr:`reference_id`, over the same questions: mean, 95% bootstrap
        interval (questions resampled jointly), questions used, share that differ."""
        with self._lock:
            key, reference = self._run_key(config_id), self._reference_id()
            return self._paired(key, reference, metric or self.quality_col, n_boot)

    def _paired(self, key: str, reference: str, metric: str, n_boot: int = DELTA_BOOT) -> PairedDifference:
        runs = self._eval_runs[key], self._eval_runs[reference]
        values, ref = ({row["qid"]: row.get(metric) for row in run.rows} for run in runs)
        qids = [q.qid for q in self.questions]
        return paired_difference([values.get(q) for q in qids], [ref.get(q) for q in qids], n_boot=n_boot)

    def eval_run(self, config_id: str | None = None) -> EvalRun:
        """The rows, results and traces of one configuration's run (default: the latest), for a :class:`TraceViewer`."""
        with self._lock:
            return self._eval_runs[self._run_key(config_id)]

    def _run_key(self, config_id: str | None) -> str:
        """``config_id`` (default: the latest run's), ``KeyError`` unless it has run."""
        key = config_id or self._current
        if key not in self._eval_runs:
            raise KeyError(f"no run of configuration {key!r}; runs: {list(self._eval_runs)}")
        return key

    @property
    def _what(self) -> str:  # type: ignore[override]
        return f"PolicyExplorer over {', '.join(self.params)} on {len(self.questions)} questions"

    # --- running ------------------------------------------------------------------------------

    def _on_change(self, _control: ParamControl) -> None:
        if self._muted:
            return
        try:
            config = self.config()
        except ConfigError as exc:
            self._state.value = f"invalid: {exc}"
            return
        self._start(config)

    def _show_values(self, config: PipelineConfig) -> None:
        """Put ``config``'s values on the controls without triggering runs."""
        self._muted = True
        try:
            for key, control in self.controls.items():
                control.value = config.get(key)
        finally:
            self._muted = False

    def _start(self, config: PipelineConfig) -> None:
        with self._lock:
            self._generation += 1
            self._error = None
            thread = threading.Thread(target=self._work, args=(self._generation, config), daemon=True,
                                      name=f"policy-explorer-{self._generation}")
            self._thread = thread
        thread.start()

    def _superseded(self, generation: int) -> bool:
        return generation != self._generation

    def _work(self, generation: int, config: PipelineConfig) -> None:
        with self._run_lock:
            if self._superseded(generation):
                self.runs_superseded += 1
                return
            start = time.perf_counter()
            try:  # every question, checking for a newer change between questions
                self._bar.start(len(self.questions))
                self._state.value = f"running {len(self.questions)} questions…"
                progress = per_question([self._bar], "explorer", config_id(config))
                run = evaluate_pipeline(Pipeline(config, self.resources, self.backend), self.questions, progress,
                                        lambda: self._superseded(generation))
            except EvaluationCancelled:
                run = None
            except Exception as exc:  # shown in the widget, re-raised by wait()
                with self._lock:
                    if not self._superseded(generation):
                        self._failed(exc)
                return
            with self._lock:
                if run is None or self._superseded(generation):
                    self.runs_superseded += 1
                    return
                self._record(config, run, time.perf_counter() - start)

    def _record(self, config: PipelineConfig, run: EvalRun, seconds: float) -> None:
        """Write the finished run's point and redraw (called with the lock held)."""
        cid = config_id(config)
        point = {"config_id": cid, **{PARAM_PREFIX + k: config.get(k) for k in self.params},
                 **aggregate_rows(run.rows), "seconds": seconds}
        self._points[cid] = point
        self._configs[cid] = config
        self._eval_runs[cid] = run
        self._current = cid
        self.runs_completed += 1
        self._progress.bar_style = "success"
        self._state.value = f"done in {seconds:.2f} s"
        self._redraw()

    # --- the plot -------------------------------------------------------------------------------

    def _label(self, cid: str) -> str:
        return changes_label(config_changes(self._configs[cid].flat(), self.base.flat(), order=self.params))

    def _status_text(self) -> str:
        text, last = f"runs: {self.runs_completed}", self._points.get(self._current)
        if last is not None:
            text += (f" · last ({self._label(self._current)}): {label(self.quality_col)} "
                     f"{last.get(self.quality_col, math.nan):.3f}"
                     + "".join(f", {label(c)} {last.get(c, math.nan):.3f}" for c in beside(self.quality_col))
                     + f", {label(self.cost_col)} {last.get(self.cost_col, math.nan):.2f}")
        return text

    def _delta_text(self) -> str:
        """The latest point's paired Δ on the quality axis against the reference point (called with the lock held)."""
        reference = self._reference_id()
        if self._current is None or reference is None:
            return ""
        where = "base" if reference == config_id(self.base) else f"first run ({self._label(reference)})"
        if self._current == reference:
            return f"Δ vs {where}: this is the reference point; move a control to compare"
        d = self._paired(self._current, reference, self.quality_col)
        if d.n == 0:
            return f"Δ {label(self.quality_col)} vs {where}: undefined on these questions"
        verdict = "interval excludes 0" if d.excludes_zero else "interval spans 0"
        return (f"Δ {label(self.quality_col)} vs {where}: {interval_text(d._asdict(), 3)} "
                f"(paired 95% interval, {d.n} questions, {d.share_differ:.0%} differ; {verdict})")

    def _redraw(self) -> None:
        """The status line, and the points run so far drawn as the report draws a sweep (:mod:`.cost_quality_plot`),
        the latest one ringed (called with the lock held)."""
        self._status.value = self._status_text()
        self._delta.value = self._delta_text()
        table = self._table()
        if table.empty:
            return
        draw(self.figure, table.rename(columns={"config_id": "candidate_id"}), self.cost_col, self.quality_col)
        current = table[table["config_id"] == self._current][[self.cost_col, self.quality_col]].dropna()
        self.figure.add_scatter(x=current[self.cost_col].tolist(), y=current[self.quality_col].tolist(),
                                name="current", mode="markers", hoverinfo="skip",
                                marker={"size": 18, "symbol": "circle-open", "color": "#e45756", "line": {"width": 3}})
