"""``SweepPanel``: pick parameters and comma-separated values, run the sweep into a run directory (in a background
thread, through :func:`rag_lab.experiments.run_sweep`, whose progress records move the bar), read the results table
and the Pareto plot, export the run directory. Instead of the grid, the panel can **search** the same keys with an
Optuna sampler, or race every grid point over questions (:meth:`SweepPanel.search`), with trials and drops
arriving in its log. How it behaves: docs/course.md, "The widgets"."""

from __future__ import annotations

import html
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY, beside
from rag_lab.experiments import SweepResult, SweepSpec, run_sweep
from rag_lab.experiments.engine.resolved_sweep import ResolvedSweep
from rag_lab.experiments.engine.search_space import SAMPLERS
from rag_lab.pipeline import PipelineConfig
from rag_lab.widgets.controls import controllable_keys, parse_value
from rag_lab.widgets.cost_quality_plot import PlotWidget, draw
from rag_lab.widgets.session import shared_data

CSS_CLASS = "rag-lab-sweep-panel"
#: Least seconds between two re-draws of the table and front while a search runs.
REFRESH_S = 0.5


def _as_text(value: Any) -> str:
    return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


class SweepPanel(PlotWidget):
    """A sweep builder over ``dataset``'s ``split`` (``types``, the first ``per_type`` of each, at most
    ``limit`` questions) from ``base``, on the cached simulator with ``profile`` and ``knobs`` (as a sweep's
    ``backend.knobs``). Results go to ``run_dir`` (resumed if it holds the same sweep) or, when None, to a
    new temporary directory per run.

    >>> panel = SweepPanel(limit=4)                                                       # doctest: +SKIP
    >>> panel.choose({"round_cap.max_rounds": [1, 3]})                                    # doctest: +SKIP
    >>> result = panel.run()              # a SweepResult, as run_sweep returns it          # doctest: +SKIP
    >>> panel.export()                    # the run directory (load it with load_sweep)     # doctest: +SKIP
    >>> panel.choose({"round_cap.max_rounds": ["1..4"], "disclosure.disclosed": [False, True]})   # doctest: +SKIP
    >>> result = panel.search(sampler="nsga2", trials=12, race=[20, 40])                          # doctest: +SKIP
    >>> panel.log_lines()                 # "trial 0: …", "dropped …: after 20 questions, dominated by …"  # doctest: +SKIP"""

    _what = "SweepPanel: choose policy parameters and values, run a sweep"

    def __init__(self, dataset: str = "world", split: str | None = "test", limit: int | None = None,
                 types: Sequence[str] | None = None, base: PipelineConfig | None = None,
                 run_dir: str | Path | None = None, profile: str = "typical", cost_col: str = DEFAULT_COST,
                 quality_col: str = DEFAULT_QUALITY, name: str = "panel",
                 knobs: Mapping[str, float | str] | None = None, per_type: int | None = None) -> None:
        self.dataset, self.split, self.limit, self.types = dataset, split, limit, list(types) if types else None
        self.base = base if base is not None else PipelineConfig()
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.profile, self.name = profile, name
        self.knobs = dict(knobs or {})
        self.per_type = per_type
        self.result: SweepResult | None = None
        #: What the latest search reported, in order (:class:`rag_lab.experiments.tuning.search.SearchEvent`).
        self.events: list[Any] = []
        self._last_refresh = 0.0
        self._last_dir: Path | None = None
        self._thread: threading.Thread | None = None
        super().__init__(cost_col, quality_col, "choose parameters and values")

        self._keys = widgets.SelectMultiple(options=controllable_keys(include_tuples=False), rows=8,
                                            description="parameters", style={"description_width": "initial"})
        self._texts: dict[str, widgets.Text] = {}
        self._values = widgets.VBox()
        self._keys.observe(lambda _change: self._sync_texts(), names="value")
        run_button = widgets.Button(description="run sweep", button_style="primary", icon="play")
        run_button.on_click(lambda _b: self._run_clicked())
        export_button = widgets.Button(description="export", icon="folder-open")
        export_button.on_click(lambda _b: self.export())
        self._sampler = widgets.Dropdown(options=list(SAMPLERS.names()), value="nsga2", description="sampler")
        self._trials = widgets.BoundedIntText(value=12, min=1, max=10_000, description="trials")
        self._race = widgets.Text(value="", description="race batches", placeholder="e.g. 20, 40 (empty: no race)",
                                  style={"description_width": "initial"})
        self._constraints = widgets.Text(value="", description="constraints", placeholder="cost_llm_calls <= 3",
                                         style={"description_width": "initial"})
        search_button = widgets.Button(description="search", icon="search")
        search_button.on_click(lambda _b: self._search_clicked())
        self._log = widgets.HTML(value="")
        self._log.add_class("rag-lab-search-log")
        self._path = widgets.Label(value="")
        self._table = widgets.HTML(value="")
        self.widget = widgets.VBox([
            widgets.HBox([self._keys, self._values]), widgets.HBox([run_button, self._progress, self._state]),
            widgets.HBox([self._sampler, self._trials, self._race, self._constraints, search_button]), self._log,
            self._table, self.axes.widget, self.figure, widgets.HBox([export_button, self._path])])
        self.widget.add_class(CSS_CLASS)

    # --- actions ------------------------------------------------------------------------------

    def choose(self, params: Mapping[str, Sequence[Any]]) -> None:
        """Choose the swept keys and their values: ``{"round_cap.max_rounds": [1, 2, 3]}``."""
        unknown = [k for k in params if k not in self._keys.options]
        if unknown:
            raise ConfigError(f"cannot sweep {unknown} from this panel; choose among {list(self._keys.options)}")
        self._keys.value = tuple(params)
        for key, values in params.items():
            self._texts[key].value = ", ".join(_as_text(v) for v in values)

    def grid(self) -> dict[str, list[Any]]:
        """The grid the panel shows: each chosen key with its parsed comma-separated values."""
        grid = {key: [parse_value(key, part) for part in text.value.split(",") if part.strip()]
                for key, text in self._texts.items()}
        empty = [k for k, v in grid.items() if not v]
        if empty:
            raise ConfigError(f"no values for {empty}")
        return grid

    def space(self) -> dict[str, Any]:
        """The search space the panel shows: a box ``low..high`` is a range, else comma-separated choices."""
        space: dict[str, Any] = {}
        for key, text in self._texts.items():
            if ".." in text.value:
                low, _, high = text.value.partition("..")
                space[key] = {"low": parse_value(key, low), "high": parse_value(key, high)}
            else:
                space[key] = [parse_value(key, part) for part in text.value.split(",") if part.strip()]
        empty = [k for k, v in space.items() if not v]
        if empty or not space:
            raise ConfigError(f"no values for {empty or 'any parameter'}: choose parameters and values first")
        return space

    def search_spec(self, sampler: str = "nsga2", trials: int | None = 12, race: Sequence[int] | None = None,
                    constraints: Sequence[str] = (), objectives: Sequence[str] | None = None, seed: int = 0) -> SweepSpec:
        """The :class:`SweepSpec` of a search over :meth:`space`: ``sampler`` (``nsga2``, ``tpe`` or ``grid``),
        ``trials``, ``race`` (question batches; None: no race), ``constraints``, ``objectives`` (default: the
        panel's cost and quality axes) and the sampler's ``seed``."""
        search: dict[str, Any] = {"sampler": sampler, "seed": seed, "constraints": list(constraints),
                                  "objectives": list(objectives or [self.cost_col, self.quality_col])}
        if not SAMPLERS[sampler].walks_grid:
            search["trials"] = trials
        if race:
            search["race"] = {"batches": list(race)}
        return SweepSpec.from_dict({**self._spec_data(self.grid() if SAMPLERS[sampler].walks_grid else self.space()),
                                    "search": search})

    def spec(self) -> SweepSpec:
        """The :class:`SweepSpec` of the current choice (only the base's non-default values are stored)."""
        return SweepSpec.from_dict(self._spec_data(self.grid()))

    def _spec_data(self, grid: Any) -> dict[str, Any]:
        defaults = PipelineConfig().flat()
        base = {k: v for k, v in self.base.flat().items() if v != defaults[k]}
        return {"name": self.name, "dataset": self.dataset, "split": self.split, "types": self.types,
                "per_type": self.per_type, "limit": self.limit, "base": base, "grid": grid,
                "backend": {"kind": "sim", "profile": self.profile, "knobs": self.knobs}}

    def run(self, wait: bool = True) -> SweepResult | None:
        """Run the chosen sweep in the background; with ``wait``, block and return its :class:`SweepResult`."""
        return self._start(self.spec(), wait)

    def search(self, sampler: str = "nsga2", trials: int | None = 12, race: Sequence[int] | None = None,
               constraints: Sequence[str] = (), objectives: Sequence[str] | None = None, seed: int = 0,
               wait: bool = True) -> SweepResult | None:
        """Search the chosen keys instead of gridding them (arguments as :meth:`search_spec`), in the background;
        the log, the table and the front update as trials arrive and candidates are dropped. With ``wait``,
        block and return the :class:`SweepResult`."""
        return self._start(self.search_spec(sampler, trials, race, constraints, objectives, seed), wait)

    def _start(self, spec: SweepSpec, wait: bool) -> SweepResult | None:
        if self._thread is not None and self._thread.is_alive():
            raise RuntimeError("a sweep is already running; wait() for it first")
        run_dir = self.run_dir if self.run_dir is not None else Path(tempfile.mkdtemp(prefix="rag_lab_sweep_"))
        dataset, _ = shared_data(self.dataset)
        resolved = ResolvedSweep.build(spec, dataset.evalset)
        if spec.search is None:
            total = resolved.n_pairs
            self._state.value = f"running {total} (candidate, question) pairs…"
        else:  # at most every trial on every question; a race or repeated configs spend less
            total = (spec.search.trials or len(resolved.runs)) * len(resolved.qids)
            self._state.value = f"searching ({spec.search.sampler}, at most {total} question runs)…"
        self._bar.start(total)
        self._error = None
        self.events = []
        self._log.value = ""
        self._thread = threading.Thread(target=self._work, args=(spec, run_dir), daemon=True, name="sweep-panel")
        self._thread.start()
        return self.wait() if wait else None

    def log_lines(self) -> list[str]:
        """The latest search's log, one line per event: trials told to the sampler and candidates dropped."""
        return [f"{e.kind}: {e.candidate_id}: {e.text}" if e.kind == "dropped" else e.text for e in self.events
                if e.kind in ("trial", "dropped")]

    def _on_event(self, event: Any, run_dir: Path) -> None:
        self.events.append(event)
        lines = self.log_lines()[-12:]
        dropped = sum(e.kind == "dropped" for e in self.events)
        trials = sum(e.kind == "trial" for e in self.events)
        self._log.value = ("<pre style='font-size:0.8em;max-height:12em;overflow:auto'>"
                           + html.escape("\n".join(lines)) + "</pre>")
        self._state.value = f"searching: {trials} trials, {dropped} dropped"
        now = time.perf_counter()
        if event.kind in ("trial", "dropped") and now - self._last_refresh > REFRESH_S:
            self._last_refresh = now
            try:  # the front so far, read from the run directory the search is writing
                self._show(SweepResult.load(run_dir, pareto=(self.cost_col, self.quality_col)))
            except (ConfigError, ValueError, KeyError):
                pass

    def wait(self) -> SweepResult | None:
        """Block until the running sweep ends; return the latest result, re-raising a run's error."""
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self.result

    def export(self) -> Path:
        """The run directory of the latest sweep (``load_sweep(path)`` reads it back), shown on the panel."""
        if self._last_dir is None:
            raise RuntimeError("no sweep has run yet")
        self._path.value = f"run directory: {self._last_dir}"
        return self._last_dir

    # --- running ------------------------------------------------------------------------------

    def _run_clicked(self) -> None:
        try:
            self.run(wait=False)
        except (ConfigError, RuntimeError) as exc:
            self._state.value = f"invalid: {exc}"

    def _search_clicked(self) -> None:
        try:
            race = [int(b) for b in self._race.value.split(",") if b.strip()]
            constraints = [c.strip() for c in self._constraints.value.split(";") if c.strip()]
            self.search(sampler=self._sampler.value, trials=self._trials.value, race=race or None,
                        constraints=constraints, wait=False)
        except (ConfigError, RuntimeError, ValueError) as exc:
            self._state.value = f"invalid: {exc}"

    def _work(self, spec: SweepSpec, run_dir: Path) -> None:
        start = time.perf_counter()
        try:
            result = run_sweep(spec, run_dir, progress="quiet", pareto=(self.cost_col, self.quality_col),
                               on_event=lambda event: self._on_event(event, run_dir),
                               # the bar moves with the records of this sweep, not of a sweep it pairs with
                               on_progress=lambda progress: self._bar(progress) if progress.name == spec.name else None)
        except Exception as exc:  # shown on the panel, re-raised by wait()
            self._failed(exc)
            return
        self.result, self._last_dir = result, Path(result.run_dir)
        self._progress.value, self._progress.bar_style = self._progress.max, "success"
        self._state.value = (f"{len(result.table)} candidates · computed {result.computed}, reused {result.reused} "
                             f"· {time.perf_counter() - start:.1f} s")
        self._show(result)

    def _sync_texts(self) -> None:
        """One value box per chosen key, keeping the values already typed."""
        self._texts = {key: self._texts.get(key) or widgets.Text(
            value=_as_text(self.base.get(key)), description=key, continuous_update=False,
            placeholder="comma-separated values", style={"description_width": "initial"})
            for key in self._keys.value}
        self._values.children = tuple(self._texts.values())

    def _redraw(self) -> None:
        if self.result is not None:
            self._show(self.result)

    def _show(self, result: SweepResult) -> None:
        table = result.pareto(self.cost_col, self.quality_col) if {self.cost_col, self.quality_col} <= set(
            result.table.columns) else result.table
        table = table.assign(changes=table["candidate_id"].map(result.labels()))
        cols = ["candidate_id", "changes", *result.param_columns, "n_questions", self.quality_col,
                f"{self.quality_col}_lo", f"{self.quality_col}_hi", *beside(self.quality_col), self.cost_col, "is_pareto",
                "status", "dropped_after", "dropped_by"]
        self._table.value = table[[c for c in cols if c in table.columns]].to_html(
            index=False, escape=True, float_format=lambda v: f"{v:.3f}", classes="rag-lab-sweep-table")
        draw(self.figure, table, self.cost_col, self.quality_col)
