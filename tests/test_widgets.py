"""The widgets without a browser: generated controls, PolicyExplorer runs and superseding, SweepPanel,
TraceViewer filters. Real simulator and the repo's response cache (warm after the first run)."""

from __future__ import annotations

import threading

import ipywidgets as widgets
import pandas as pd
import pytest

from rag_lab.errors import ConfigError
from rag_lab.evaluation import EvalRun
from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY, label
from rag_lab.experiments import load_sweep
from rag_lab.figures.common import point_texts
from rag_lab.pipeline import PipelineConfig
from rag_lab.stats.paired import paired_difference
from rag_lab.widgets import OUTCOMES, PolicyExplorer, SweepPanel, TraceViewer, param_control, parse_value
from rag_lab.widgets import explorer as explorer_module
from rag_lab.widgets.controls import controllable_keys
from rag_lab.widgets.trace_viewer import outcome_mask

# --- controls -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("key", "widget_type", "value"), [
    ("disclosure.disclosed", widgets.Checkbox, False),
    ("crag.evaluator", widgets.Dropdown, "embedding"),
    ("round_cap.max_rounds", widgets.IntSlider, 2),
    ("crag.upper", widgets.FloatSlider, 0.5),
    ("sources.simple", widgets.Text, ()),
])
def test_control_type_follows_field_type(key, widget_type, value):
    control = param_control(key)
    assert isinstance(control.widget, widget_type)
    assert control.widget.description == key
    assert control.widget.tooltip
    assert control.value == value


def test_bounded_fields_give_slider_bounds_and_steps():
    ints = param_control("round_cap.max_rounds").widget
    assert (ints.min, ints.max, ints.step) == (1, 10, 1)
    floats = param_control("crag.upper").widget
    assert (floats.min, floats.max) == (-1.0, 1.0)
    assert floats.step == pytest.approx(0.02)
    assert param_control("crag.evaluator").widget.options == ("embedding", "llm", "lexical")


def test_optional_int_is_slider_plus_unlimited():
    control = param_control("budget.max_rounds")
    slider, unlimited = control.widget.children
    assert isinstance(slider, widgets.IntSlider) and slider.description == "budget.max_rounds"
    assert unlimited.description == "unlimited" and unlimited.value
    assert control.value is None
    control.value = 3
    assert control.value == 3 and not unlimited.value
    unlimited.value = True
    assert control.value is None and slider.disabled


def test_a_wide_integer_range_is_a_number_box_not_a_slider():
    control = param_control("budget.max_tokens")  # 1..1,000,000: a slider in steps of 1 cannot be aimed
    box, unlimited = control.widget.children
    assert isinstance(box, widgets.BoundedIntText) and (box.min, box.max) == (1, 1_000_000)
    control.value = 4096
    assert control.value == 4096 and not unlimited.value
    assert isinstance(param_control("budget.max_rounds").widget.children[0], widgets.IntSlider)


def test_tuple_is_comma_separated_text_and_tooltip_uses_description():
    control = param_control("router.comparison_words", PipelineConfig().with_params({"router.comparison_words": ("vs", "both")}))
    assert control.widget.value == "vs, both"
    control.widget.value = "versus ,  compare,"
    assert control.value == ("versus", "compare")
    assert param_control("retrieval.controller_evidence").widget.tooltip == "chunks shown to the controller"


def test_observe_and_base_values():
    control = param_control("crag.upper", PipelineConfig().with_params({"crag.upper": 0.7}))
    assert control.value == 0.7
    seen = []
    control.observe(lambda c: seen.append(c.value))
    control.widget.value = 0.3
    assert seen == [0.3] and control.value == 0.3
    with pytest.raises(ConfigError):
        param_control("crag.nope")


def test_parse_value_and_controllable_keys():
    assert parse_value("disclosure.disclosed", " True ") is True
    assert parse_value("budget.max_rounds", "none") is None
    assert parse_value("budget.max_rounds", "4") == 4
    assert parse_value("crag.upper", "0.3") == 0.3
    assert parse_value("truncation.strategy", "refine") == "refine"
    with pytest.raises(ConfigError, match="one of"):
        parse_value("truncation.strategy", "bogus")
    with pytest.raises(ConfigError):
        parse_value("sources.simple", "a")
    keys = controllable_keys()
    assert "sources.simple" in keys and "sources.simple" not in controllable_keys(include_tuples=False)
    assert set(keys) == set(PipelineConfig().flat())


# --- PolicyExplorer -------------------------------------------------------------------------------

PARAMS = ["round_cap.max_rounds", "crag.upper"]


def test_explorer_runs_and_adds_points():
    explorer = PolicyExplorer(params=PARAMS, limit=6)
    assert "rag-lab-policy-explorer" in explorer.widget._dom_classes
    assert explorer._repr_mimebundle_()["application/vnd.jupyter.widget-view+json"]["model_id"]
    first = explorer.run()
    assert first["n_questions"] == 6 and 0.0 <= first[DEFAULT_QUALITY] <= first["quality_answer_containment"] <= 1.0
    assert len(explorer.points) == 1 and len(explorer.figure.data[0].x) == 1
    assert explorer._status.value.startswith(f"runs: 1 · last (base): {label(explorer.quality_col)} ")
    assert f", {label('quality_answer_containment')} " in explorer._status.value  # the lenient form beside the strict one
    assert explorer._delta.value.startswith("Δ vs base: this is the reference point")

    assert explorer.with_params({"round_cap.max_rounds": 3}) is explorer  # one live widget: changed in place
    assert explorer.controls["round_cap.max_rounds"].value == 3
    second = explorer.wait()
    points = explorer.points
    assert len(points) == 2 and len(explorer.figure.data[0].x) == 2
    assert sorted(points["param_round_cap.max_rounds"]) == [2, 3]
    assert points.loc[points["is_current"], "config_id"].item() == second["config_id"] != first["config_id"]
    assert explorer.figure.data[2].x == (second["cost_llm_calls"],)
    assert {f"{DEFAULT_QUALITY}_lo", f"{DEFAULT_QUALITY}_hi", "is_pareto"} <= set(points.columns)
    assert explorer._status.value.startswith("runs: 2 · last (round_cap.max_rounds=3): ")
    assert len(explorer.eval_run().rows) == 6

    # the Δ vs the base point: the paired difference over the same 6 questions, in the status readout
    assert explorer.reference_id == first["config_id"]
    rows = {r["qid"]: r for r in explorer.eval_run().rows}
    base_rows = {r["qid"]: r for r in explorer.eval_run(first["config_id"]).rows}
    qids = [q.qid for q in explorer.questions]
    col = explorer.quality_col
    expected = paired_difference([rows[q][col] for q in qids], [base_rows[q][col] for q in qids])
    assert explorer.delta() == expected
    assert explorer._delta.value.startswith(
        f"Δ {label(col)} vs base: {expected.delta:+.3f} [{expected.lo:+.3f}, {expected.hi:+.3f}] "
        f"(paired 95% interval, {expected.n} questions")
    # points named by what they change, on the plot and in the hover
    scatter = explorer.figure.data[0]
    assert list(scatter.text) == point_texts(list(scatter.x), list(scatter.y), ["base", "round_cap.max_rounds=3"])
    assert explorer.figure.data[0].hovertext[1].startswith("round_cap.max_rounds=3<br>")
    assert points["changes"].tolist() == ["base", "round_cap.max_rounds=3"]
    assert explorer.figure.layout.xaxis.title.text == label(explorer.cost_col)

    # another axis re-draws from the points already run; nothing runs
    explorer.axes.cost.value = "cost_tokens"
    assert explorer.cost_col == "cost_tokens" and explorer.runs_completed == 2
    assert list(explorer.figure.data[0].x) == points["cost_tokens"].tolist()
    assert explorer.figure.layout.xaxis.title.text == "tokens / question"
    explorer.set_axes(quality="quality_has_answer_in_context")
    assert list(explorer.figure.data[0].y) == points["quality_has_answer_in_context"].tolist()
    assert explorer.axes.quality.value == "quality_has_answer_in_context" and explorer.runs_completed == 2
    assert explorer._delta.value.startswith("Δ gold answer in final context vs base: ")
    assert explorer.delta() == explorer.delta(metric="quality_has_answer_in_context")
    with pytest.raises(ConfigError):
        explorer.set_axes(cost="quality_f1")
    explorer.set_axes(cost="cost_llm_calls", quality=col)

    with pytest.raises(ConfigError):  # crag.upper below crag.lower: nothing runs, the controls keep their values
        explorer.with_params(crag__upper=0.0)
    assert explorer.controls["crag.upper"].value == 0.5 and explorer.runs_completed == 2


def test_control_change_triggers_a_run():
    explorer = PolicyExplorer(params=PARAMS, limit=3)
    explorer.controls["crag.upper"].widget.value = 0.6
    point = explorer.wait()
    assert point["param_crag.upper"] == 0.6 and explorer.runs_completed == 1


def test_newer_change_supersedes_a_run_in_flight(monkeypatch):
    started, go_on = threading.Event(), threading.Event()
    real = explorer_module.Pipeline

    class GatedPipeline(real):
        """Holds the first run after its first question until the test has made a newer change."""

        def run(self, question, qid=None):
            out = super().run(question, qid)
            if not started.is_set():
                started.set()
                assert go_on.wait(10)
            return out

    monkeypatch.setattr(explorer_module, "Pipeline", GatedPipeline)
    explorer = PolicyExplorer(params=PARAMS, limit=6)
    explorer.run(wait=False)                      # the base config: superseded after one question
    assert started.wait(10)
    explorer.with_params(**{"round_cap.max_rounds": 4})
    go_on.set()
    final = explorer.wait()
    points = explorer.points
    assert len(points) == 1 and points["param_round_cap.max_rounds"].tolist() == [4]
    assert final["n_questions"] == 6
    assert (explorer.runs_completed, explorer.runs_superseded) == (1, 1)
    assert len(explorer.figure.data[0].x) == 1


# --- SweepPanel and TraceViewer -------------------------------------------------------------------


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    panel = SweepPanel(limit=4, run_dir=tmp_path_factory.mktemp("panel") / "run")
    panel.choose({"round_cap.max_rounds": [1, 3]})
    assert panel.grid() == {"round_cap.max_rounds": [1, 3]}
    return panel, panel.run()


def test_sweep_panel_runs_and_exports(sweep):
    panel, result = sweep
    assert result.complete and len(result.table) == 2 and len(result.qids) == 4
    assert panel.export() == result.run_dir and load_sweep(panel.export()).complete
    assert panel._progress.value == panel._progress.max == 8
    assert all(cid in panel._table.value for cid in result.table["candidate_id"])
    assert len(panel.figure.data) >= 1
    assert "rag-lab-sweep-panel" in panel.widget._dom_classes
    # points named by what they change from the panel's base config (round_cap.max_rounds=2, not a grid point)
    scatter = panel.figure.data[0]
    assert list(scatter.text) == point_texts(list(scatter.x), list(scatter.y),
                                             ["round_cap.max_rounds=1", "round_cap.max_rounds=3"])
    assert [h.split("<br>")[0] for h in scatter.hovertext] == ["round_cap.max_rounds=1", "round_cap.max_rounds=3"]
    assert panel.figure.layout.xaxis.title.text == label(panel.cost_col)


@pytest.mark.slow
def test_sweep_panel_axes_redraw_without_running(sweep):
    panel, result = sweep
    computed = panel.result.computed
    panel.axes.quality.value = "quality_abstention_accuracy"
    assert panel.quality_col == "quality_abstention_accuracy" and panel.result.computed == computed
    assert list(panel.figure.data[0].y) == result.table["quality_abstention_accuracy"].tolist()
    assert panel.figure.layout.yaxis.title.text == "abstention accuracy"
    assert "quality_abstention_accuracy" in panel._table.value
    panel.set_axes(cost="cost_modelled_latency_s")
    assert list(panel.figure.data[0].x) == result.table["cost_modelled_latency_s"].tolist()
    assert panel.axes.cost.value == "cost_modelled_latency_s"
    with pytest.raises(ConfigError):
        panel.set_axes(quality="cost_tokens")
    panel.set_axes(cost=DEFAULT_COST, quality=DEFAULT_QUALITY)


def test_sweep_panel_rejects_bad_values():
    panel = SweepPanel(limit=2)
    with pytest.raises(ConfigError):
        panel.choose({"sources.simple": [("a",)]})
    panel.choose({"truncation.strategy": ["refine"]})
    panel._texts["truncation.strategy"].value = "refine, nonsense"
    with pytest.raises(ConfigError, match="nonsense"):
        panel.grid()


@pytest.mark.slow
def test_trace_viewer_filters_and_timeline(sweep):
    _, result = sweep
    viewer = TraceViewer(result.run_dir)
    assert viewer.configurations == list(result.table["candidate_id"])
    # the dropdown shows what each candidate changes (its value stays the candidate id)
    labels = result.labels()
    assert viewer._config_box.options == tuple((f"{labels[c]} ({c})", c) for c in viewer.configurations)
    assert {label.split(" (")[0] for label, _ in viewer._config_box.options} == {"round_cap.max_rounds=1",
                                                                                  "round_cap.max_rounds=3"}
    rows = result.rows(viewer.candidate_id)
    assert viewer.filter() == rows["qid"].tolist() and viewer.qid == rows["qid"].iloc[0]
    for outcome in OUTCOMES:
        assert viewer.filter(outcome=outcome) == rows.loc[outcome_mask(rows, outcome), "qid"].tolist()
    qtype = rows["type"].iloc[0]
    assert viewer.filter(type=qtype) == rows.loc[rows["type"] == qtype, "qid"].tolist()
    with pytest.raises(ValueError):
        viewer.filter(outcome="lucky")

    qid = rows["qid"].iloc[-1]
    viewer.select(candidate_id=viewer.configurations[1], qid=qid)
    info = viewer.timeline_info()
    trace = result.traces(viewer.configurations[1])[qid]
    assert (info.qid, len(info.steps), info.stop_reason) == (qid, len(trace.steps), str(trace.stop_reason))
    assert len(viewer.figure.data) >= 2 and viewer._question_box.value == qid
    assert viewer.prompts_html().count("<details>") == len(trace.llm_calls())
    with pytest.raises(KeyError):
        viewer.select(qid="no-such-question")


def test_trace_viewer_escapes_prompts_from_an_eval_run(sweep):
    _, result = sweep
    cid, qid = result.table["candidate_id"].iloc[0], result.qids[0]
    trace = result.traces(cid)[qid]
    steps = [s.model_copy(update={"llm": s.llm.model_copy(update={"raw_output": "<script>alert(1)</script>"})})
             if s.llm else s for s in trace.steps]
    run = EvalRun(rows=result.rows(cid).to_dict("records"), results={},
                  traces={qid: trace.model_copy(update={"steps": steps})})
    viewer = TraceViewer(run)
    viewer.select(qid=qid)
    text = viewer.prompts_html()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert isinstance(viewer.rows, pd.DataFrame)


def test_widgets_take_simulator_knobs_like_a_sweep():
    from rag_lab.widgets.session import simulator_backend

    panel = SweepPanel(types=["bridge"], limit=2, knobs={"synonym_spinning": 0.6})
    panel.choose({"round_cap.max_rounds": [1, 2]})
    assert panel.spec().backend.knobs == {"synonym_spinning": 0.6}
    spun = simulator_backend("typical", {"synonym_spinning": 0.6})
    assert spun is simulator_backend("typical", {"synonym_spinning": 0.6})  # one per profile and knobs
    assert spun is not simulator_backend() and simulator_backend() is simulator_backend("typical", {})
    explorer = PolicyExplorer(params=["round_cap.max_rounds"], types=["bridge"], limit=2,
                              knobs={"synonym_spinning": 0.6})
    assert explorer.backend is spun
    with pytest.raises(ConfigError, match="either a backend or"):
        PolicyExplorer(params=["round_cap.max_rounds"], limit=2, backend=spun, knobs={"synonym_spinning": 0.6})


def test_widgets_carry_a_static_note_for_renderers_without_a_kernel():
    explorer = PolicyExplorer(params=["round_cap.max_rounds"], types=["bridge"], limit=2)
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # JupyterLab still renders the live widget
    assert "PolicyExplorer over round_cap.max_rounds on 2 questions" in bundle["text/html"]
    assert "SweepPanel" in SweepPanel(limit=2)._repr_mimebundle_()["text/html"]


def test_widgets_pick_questions_per_type_like_a_sweep():
    # without per_type, a limit takes the first questions in dataset order: possibly one type only
    first = PolicyExplorer(params=["round_cap.max_rounds"], types=["unanswerable", "alias"], limit=4)
    assert len({q.type for q in first.questions}) == 1
    both = PolicyExplorer(params=["round_cap.max_rounds"], types=["unanswerable", "alias"], per_type=2)
    assert sorted(q.type for q in both.questions) == ["alias", "alias", "unanswerable", "unanswerable"]
    capped = PolicyExplorer(params=["round_cap.max_rounds"], types=["unanswerable", "alias"], per_type=2, limit=3)
    assert [q.qid for q in capped.questions] == [q.qid for q in both.questions][:3]
    panel = SweepPanel(types=["unanswerable", "alias"], per_type=2)
    panel.choose({"round_cap.max_rounds": [1]})
    assert panel.spec().per_type == 2
