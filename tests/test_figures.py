"""Figure data (``*_info``) of every figure in rag_lab.figures, checked value by value, and that each
figure builds from its info (traces, titles; no pixels)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from rag_lab.evaluation.catalog import DEFAULT_QUALITY
from rag_lab.figures import (
    CostQualityInfo,
    cost_quality_figure,
    cost_quality_info,
    crag_heatmap_figure,
    crag_heatmap_info,
    forest_figure,
    forest_info,
    round_yield_figure,
    round_yield_info,
    rounds_histogram_figure,
    rounds_histogram_info,
    trace_timeline_figure,
    trace_timeline_info,
    truncation_retention_figure,
    truncation_retention_info,
)
from rag_lab.figures.common import UNSET, axis_values, group_names
from rag_lab.figures.forest import BETTER, WORSE
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.pipeline import Pipeline, PipelineConfig, StopReason
from rag_lab.pipeline.trace import LLMCall, Trace, TraceStep
from rag_lab.testing import ScriptedResources, corpus_of

NAN = float("nan")


@pytest.mark.slow  # a fresh interpreter importing the package: seconds
def test_rag_lab_figures_imports_first_in_a_fresh_interpreter():
    """rag_lab.figures imports rag_lab.experiments (the layer below it): either may be imported first."""
    code = "import rag_lab.figures, rag_lab.experiments; print(rag_lab.figures.cost_quality_info.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "rag_lab.figures.cost_quality"
    assert CostQualityInfo.__module__ == "rag_lab.figures.cost_quality"


# ---------------------------------------------------------------- rounds histogram

ROWS = [
    {"qid": "a", "type": "bridge", "cost_rounds": 2, "quality_rounds_minus_hops": 0},
    {"qid": "b", "type": "bridge", "cost_rounds": 1, "quality_rounds_minus_hops": -1},
    {"qid": "c", "type": "bridge", "cost_rounds": 2, "quality_rounds_minus_hops": 0},
    {"qid": "d", "type": "single", "cost_rounds": 1, "quality_rounds_minus_hops": 0},
    {"qid": "e", "type": "single", "cost_rounds": 4, "quality_rounds_minus_hops": 3},
    {"qid": "f", "type": None, "cost_rounds": 1, "quality_rounds_minus_hops": 0},
    {"qid": "g", "type": "single", "cost_rounds": None, "quality_rounds_minus_hops": None},
]


def test_rounds_histogram_info_counts_per_type_and_rounds():
    info = rounds_histogram_info(ROWS, with_hops=True)
    assert info.by == "type"
    assert info.groups == ("bridge", "single", UNSET)
    assert info.rounds == (1, 2, 3, 4)
    assert info.counts.tolist() == [[1, 2, 0, 0], [1, 0, 0, 1], [1, 0, 0, 0]]
    assert info.totals == (3, 2, 1)
    assert info.mean_min_hops == (2.0, 1.0, 1.0)
    assert info.n_undefined == 1
    assert not info.counts.flags.writeable


def test_rounds_histogram_info_from_a_dataframe_without_hops():
    info = rounds_histogram_info(pd.DataFrame(ROWS[:5]).drop(columns="quality_rounds_minus_hops"), by="qid")
    assert info.groups == ("a", "b", "c", "d", "e")
    assert info.mean_min_hops is None
    assert info.counts.sum() == 5


def test_rounds_histogram_info_rejects_bad_input():
    with pytest.raises(ValueError, match="quality_rounds_minus_hops"):
        rounds_histogram_info([{"type": "x", "cost_rounds": 1}], with_hops=True)
    with pytest.raises(ValueError, match="non-negative integers"):
        rounds_histogram_info([{"type": "x", "cost_rounds": 1.5}])
    with pytest.raises(ValueError, match="DataFrame or a sequence of mappings"):
        rounds_histogram_info("rows")


def test_rounds_histogram_figure():
    fig = rounds_histogram_figure(rounds_histogram_info(ROWS, with_hops=True))
    assert isinstance(fig, go.Figure)
    assert [t.type for t in fig.data] == ["bar"] * 3
    assert [t.name for t in fig.data] == ["bridge", "single", UNSET]
    assert list(fig.data[0].y) == [1, 2, 0, 0]
    assert fig.layout.barmode == "group" and len(fig.layout.shapes) == 3  # one min-hops line per group
    assert "Rounds used" in fig.layout.title.text and fig.layout.xaxis.title.text == "rounds used"


# ---------------------------------------------------------------- round yield

Q = "What is the falcon passphrase?"
FILLERS = {f"f{i}": f"Falcon launch notes, item {i}: the rocket launch was rescheduled." for i in range(6)}
AGAIN = '{{"action": "retrieve_again", "queries": ["{q}"]}}'


def pipeline_trace(hits: dict[str, list[str]], controller: list[str], qid: str, **params) -> Trace:
    """A real trace: the pipeline on scripted retrieval and a scripted LLM."""
    backend = ScriptedBackend({"route": ['{"route": "COMPLEX"}'], "controller": controller, "answer": ["f0 [1]"]})
    config = PipelineConfig().with_params({"crag.enabled": False, "citations.refusal_threshold": -1.0, **params})
    _, trace = Pipeline(config, ScriptedResources(corpus_of(FILLERS), hits), backend).run(Q, qid=qid)
    return trace


@pytest.fixture(scope="module")
def traces() -> dict[str, Trace]:
    spin = pipeline_trace({Q: ["f0", "f1"], "again": ["f1", "f0"]}, [AGAIN.format(q="again")] * 3, "spin")
    grow = pipeline_trace({Q: ["f0"], "more": ["f1", "f2", "f3"], "last": ["f3", "f4"]},
                          [AGAIN.format(q="more"), AGAIN.format(q="last"), '{"action": "answer"}'], "grow",
                          **{"round_cap.max_rounds": 4})
    assert spin.stop_reason == StopReason.EMPTY_ROUND and spin.yields() == [2, 0]
    assert grow.stop_reason == StopReason.ANSWERED and grow.yields() == [1, 3, 1]
    return {"spin": spin, "grow": grow}


def test_round_yield_info_from_pipeline_traces(traces):
    info = round_yield_info(traces)
    assert info.qids == ("spin", "grow")
    assert info.question_rounds == ((1, 2), (1, 2, 3))
    assert info.question_yields == ((2, 0), (1, 3, 1))
    assert info.rounds == (1, 2, 3)
    assert info.mean_yield == (1.5, 1.5, 1.0)
    assert info.n_questions == (2, 2, 1)
    assert info.stop_qids == ("spin",) and info.stop_rounds == (2,)
    assert round_yield_info(list(traces.values())) == info


def test_round_yield_info_sums_retrieve_steps_of_one_round_and_rejects_non_traces():
    trace = Trace(qid="q", question="?", steps=[
        TraceStep(kind="retrieve", round=1, round_yield=2), TraceStep(kind="retrieve", round=1, round_yield=1),
        TraceStep(kind="controller", round=1),
    ])
    info = round_yield_info([trace])
    assert info.question_rounds == ((1,),) and info.question_yields == ((3,),) and info.stop_qids == ()
    with pytest.raises(ValueError, match="Trace objects"):
        round_yield_info([{"qid": "q"}])


def test_round_yield_figure(traces):
    fig = round_yield_figure(round_yield_info(traces))
    assert [t.name for t in fig.data] == ["questions", "mean", "zero-yield stop"]
    assert list(fig.data[0].x) == [1, 2, None, 1, 2, 3, None]
    assert list(fig.data[1].y) == [1.5, 1.5, 1.0]
    assert list(fig.data[2].x) == [2] and list(fig.data[2].y) == [0]
    assert fig.layout.title.text == "New chunks per retrieval round" and fig.layout.xaxis.title.text == "round"
    no_stop = round_yield_figure(round_yield_info([traces["grow"]]))
    assert [t.name for t in no_stop.data] == ["questions", "mean"]


# ---------------------------------------------------------------- CRAG heat-map

CRAG = pd.DataFrame({
    "candidate_id": ["c0", "c1", "c2", "c3", "c4", "c5"],
    "param_crag.upper": [0.5, 0.5, 0.7, 0.7, 0.5, np.nan],
    "param_crag.lower": [0.1, 0.3, 0.1, 0.3, 0.1, np.nan],
    DEFAULT_QUALITY: [0.6, 0.5, 0.4, np.nan, 0.8, 0.9],  # the heat-map's default value column
    "quality_refused": [0.1, 0.2, 0.3, 0.5, 0.3, 0.0],
})


def test_crag_heatmap_info_grid_with_pooled_and_missing_cells():
    info = crag_heatmap_info(CRAG)
    assert info.uppers == (0.5, 0.7) and info.lowers == (0.1, 0.3)
    np.testing.assert_allclose(info.quality, [[0.7, 0.5], [0.4, NAN]])  # c0 and c4 pooled; c3 undefined
    np.testing.assert_allclose(info.refusal, [[0.2, 0.2], [0.3, 0.5]])
    assert info.n.tolist() == [[2, 1], [1, 0]]
    assert (info.value_col, info.refusal_col) == (DEFAULT_QUALITY, "quality_refused")


def test_crag_heatmap_info_other_columns_and_missing_ones():
    info = crag_heatmap_info(CRAG.drop(index=3), value_col="quality_refused")
    np.testing.assert_allclose(info.quality, [[0.2, 0.2], [0.3, NAN]])
    with pytest.raises(ValueError, match="quality_refused"):
        crag_heatmap_info(CRAG.drop(columns="quality_refused"))
    with pytest.raises(ValueError, match="must be numeric"):
        crag_heatmap_info(CRAG.assign(**{"param_crag.upper": ["high"] * 6}))


def test_crag_heatmap_figure():
    fig = crag_heatmap_figure(crag_heatmap_info(CRAG))
    assert [t.type for t in fig.data] == ["heatmap", "heatmap"]
    assert [a.text for a in fig.layout.annotations] == [DEFAULT_QUALITY, "quality_refused"]
    assert list(fig.data[0].z[1]) == [0.4, None] and list(fig.data[1].x) == ["0.1", "0.3"]
    assert fig.layout.xaxis.title.text == "crag.lower" and fig.layout.yaxis2.title.text == "crag.upper"
    assert fig.layout.title.text.startswith("CRAG thresholds")


# ---------------------------------------------------------------- truncation retention

TRUNC = pd.DataFrame({
    "param_truncation.strategy": ["append_then_truncate", "append_then_truncate", "rank_then_truncate",
                                  "rank_then_truncate", "rank_then_truncate", "refine"],
    "param_truncation.max_snippets": [3, 8, 3, 8, 8, 3],
    "quality_later_gold_retained": [0.0, 0.5, 1.0, 0.75, 0.25, np.nan],
})


def test_truncation_retention_info():
    info = truncation_retention_info(TRUNC)
    assert info.strategies == ("append_then_truncate", "rank_then_truncate", "refine")
    assert info.limits == (3.0, 8.0)
    np.testing.assert_allclose(info.retention, [[0.0, 0.5], [1.0, 0.5], [NAN, NAN]])
    assert info.n.tolist() == [[1, 1], [1, 2], [0, 0]]
    with pytest.raises(ValueError, match="param_truncation.max_snippets"):
        truncation_retention_info(TRUNC.drop(columns="param_truncation.max_snippets"))


def test_truncation_retention_figure():
    fig = truncation_retention_figure(truncation_retention_info(TRUNC))
    assert [t.name for t in fig.data] == ["append_then_truncate", "rank_then_truncate", "refine"]
    assert list(fig.data[1].y) == [1.0, 0.5] and list(fig.data[2].y) == [None, None]
    assert fig.layout.xaxis.title.text == "truncation.max_snippets"
    assert fig.layout.title.text == "Later-round gold evidence reaching the prompt"


# ---------------------------------------------------------------- trace timeline

def llm(role: str, outcome: str, reason: str = "") -> LLMCall:
    return LLMCall(role=role, messages=[], raw_output="{}", outcome=outcome, reason=reason,
                   prompt_tokens=0, completion_tokens=0, latency_s=0.0)


HANDMADE = Trace(qid="q<1>", question="Who <b>?", route="COMPLEX", stop_reason=StopReason.POLICY_REJECTED,
                 rounds_used=1, steps=[
    TraceStep(kind="route", llm=llm("route", "valid"), decision={"route": "COMPLEX"}, tokens=50),
    TraceStep(kind="retrieve", round=1, queries=["who <b>"], retrieved=["d1#0", "d2#0"], new=["d1#0", "d2#0"],
              round_yield=2),
    TraceStep(kind="controller", round=1, llm=llm("controller", "fallback", "bad json"),
              decision={"action": "answer", "queries": []}, tokens=120,
              interventions=["invalid controller output replaced by fallback: bad json",
                             "policy rejection: answer with no usable evidence"]),
    TraceStep(kind="finalize", interventions=["no context: the run ends in a refusal"]),
])


def test_trace_timeline_info_from_a_handmade_trace():
    info = trace_timeline_info(HANDMADE)
    assert (info.qid, info.route, info.stop_reason, info.rounds_used) == ("q<1>", "COMPLEX", "policy_rejected", 1)
    assert info.lanes == ("route", "retrieve", "controller", "finalize")
    assert info.total_tokens == 170
    route, retrieve, controller, finalize = info.steps
    assert (route.index, route.action, route.role, route.outcome, route.tokens) == (0, "route=COMPLEX", "route", "valid", 50)
    assert (retrieve.round, retrieve.queries, retrieve.round_yield, retrieve.n_retrieved) == (1, ("who <b>",), 2, 2)
    assert retrieve.outcome is None and retrieve.cumulative_tokens == 50
    assert (controller.action, controller.outcome, controller.reason) == ("answer", "fallback", "bad json")
    assert len(controller.interventions) == 2 and controller.cumulative_tokens == 170
    assert finalize.interventions == ("no context: the run ends in a refusal",) and finalize.action == ""
    with pytest.raises(ValueError, match="expected a Trace"):
        trace_timeline_info(HANDMADE.model_dump())


def test_trace_timeline_info_from_a_pipeline_trace(traces):
    info = trace_timeline_info(traces["spin"])
    assert [s.kind for s in info.steps] == ["route", "retrieve", "controller", "retrieve", "finalize", "generate",
                                            "guard"]
    assert info.lanes == ("route", "retrieve", "controller", "finalize", "generate", "guard")
    assert [s.round_yield for s in info.steps if s.kind == "retrieve"] == [2, 0]
    assert info.steps[2].action == "retrieve_again" and info.steps[3].queries == ("again",)
    assert "zero-yield stop" in info.steps[3].interventions[0]
    assert info.stop_reason == "empty_round"
    assert info.total_tokens == sum(s.tokens for s in traces["spin"].steps) == info.steps[-1].cumulative_tokens


def test_trace_timeline_figure_escapes_and_annotates():
    fig = trace_timeline_figure(trace_timeline_info(HANDMADE))
    assert [t.name for t in fig.data] == ["order", "valid", "no LLM call", "fallback"]
    assert list(fig.data[3].x) == [2] and list(fig.data[2].y) == ["retrieve", "finalize"]
    assert "query: who &lt;b&gt;" in fig.data[2].hovertext[0]
    assert [a.x for a in fig.layout.annotations] == [2, 3]
    assert fig.layout.annotations[0].text.endswith("(+1)")
    assert fig.layout.title.text.startswith("q&lt;1&gt;: stop policy_rejected")
    assert list(fig.layout.yaxis.categoryarray) == ["route", "retrieve", "controller", "finalize"]
    assert fig.layout.xaxis.title.text == "step"


# ---------------------------------------------------------------- cost vs quality, faceted (the rest: test_experiment_stats)

FACETED = pd.DataFrame({
    "candidate_id": ["b1", "b2", "b3", "d1", "d2"],
    "param_retrieval.retriever": ["bm25", "bm25", "bm25", "dense", "dense"],
    "param_hyde.enabled": [False, True, True, False, True],
    "cost_llm_calls": [2.0, 3.0, 4.0, 2.0, 5.0],
    "quality_f1": [0.5, 0.4, 0.7, 0.6, 0.55],
})


def test_cost_quality_info_facets_have_their_own_fronts():
    info = cost_quality_info(FACETED, "cost_llm_calls", "quality_f1", color_by="param_hyde.enabled",
                             facet_by="param_retrieval.retriever")
    assert info.facets == ("bm25", "bm25", "bm25", "dense", "dense")
    assert info.facet_names == ("bm25", "dense")
    assert info.is_pareto == (True, False, True, True, False)  # b1 is on bm25's front though d1 beats it
    assert info.front_ids == ("b1", "b3", "d1") and info.front_facets == ("bm25", "bm25", "dense")
    assert info.front_x == (2.0, 4.0, 2.0) and info.front_y == (0.5, 0.7, 0.6)
    unfaceted = cost_quality_info(FACETED, "cost_llm_calls", "quality_f1")
    assert unfaceted.facets is None and unfaceted.front_facets is None
    assert unfaceted.front_ids == ("d1", "b3")
    with pytest.raises(ValueError, match="param_nope"):
        cost_quality_info(FACETED, "cost_llm_calls", "quality_f1", facet_by="param_nope")


def test_cost_quality_figure_one_panel_per_facet():
    info = cost_quality_info(FACETED, "cost_llm_calls", "quality_f1", color_by="param_hyde.enabled",
                             facet_by="param_retrieval.retriever")
    fig = cost_quality_figure(info)
    assert [(t.name, t.xaxis, t.showlegend) for t in fig.data] == [
        ("hyde.enabled=no", "x", True), ("hyde.enabled=yes", "x", True), ("Pareto front", "x", True),
        ("hyde.enabled=no", "x2", False), ("hyde.enabled=yes", "x2", False), ("Pareto front", "x2", False),
    ]
    assert list(fig.data[5].x) == [2.0] and list(fig.data[2].customdata) == ["b1", "b3"]
    assert [a.text for a in fig.layout.annotations] == ["retrieval.retriever=bm25", "retrieval.retriever=dense"]
    assert fig.layout.title.text == "answer token F1 vs LLM calls / question"
    assert fig.layout.xaxis.title.text == fig.layout.xaxis2.title.text == "LLM calls / question"


def test_cost_quality_points_named_by_their_changes():
    table = FACETED.assign(changes=["base", "hyde.enabled=true", "a <b>", "retrieval.retriever=dense", "both"])
    info = cost_quality_info(table, "cost_llm_calls", "quality_f1", text_col="changes",
                             label_cols=["param_hyde.enabled"])
    assert info.texts == ("base", "hyde.enabled=true", "a <b>", "retrieval.retriever=dense", "both")
    assert info.labels[1] == "hyde.enabled=true\nb2\nhyde.enabled=yes"
    assert (info.x_title, info.y_title) == ("LLM calls / question", "answer token F1")
    fig = cost_quality_figure(info)
    points = fig.data[0]
    assert points.mode == "markers+text" and points.text[2] == "a &lt;b&gt;"
    assert "LLM calls / question: %{x:.4g}" in points.hovertemplate
    assert points.hovertext[1].startswith("hyde.enabled=true<br>b2")
    # points drawn at the same place show one text, the first one's, with how many share it
    same = table.assign(cost_llm_calls=[2.0, 3.0, 2.0, 2.0, 5.0], quality_f1=[0.5, 0.4, 0.5, 0.5, 0.55])
    shown = cost_quality_figure(cost_quality_info(same, "cost_llm_calls", "quality_f1", text_col="changes")).data[0]
    assert list(shown.text) == ["base (+2 same)", "hyde.enabled=true", "", "", "both"]
    assert list(shown.hovertext)[2].startswith("a &lt;b&gt;<br>b3")
    plain = cost_quality_figure(cost_quality_info(FACETED, "cost_llm_calls", "quality_f1"))
    assert plain.data[0].mode == "markers" and plain.data[0].text is None


# ---------------------------------------------------------------- forest plot of paired differences

COMPARISON = pd.DataFrame({
    "candidate_id": ["c1", "c0", "c2", "c3", "c4"],
    "label": ["round_cap.max_rounds=1", "base", "truncation.strategy=append_then_truncate", "hyde.enabled=true",
              "crag.upper=0.7"],
    "metric": ["quality_answer_containment"] * 5,
    "delta": [-0.08, 0.0, -0.03, 0.01, NAN],
    "lo": [-0.12, 0.0, -0.05, -0.02, NAN],
    "hi": [-0.04, 0.0, -0.01, 0.04, NAN],
    "n": [240, 240, 240, 240, 0],
    "share_differ": [0.1, 0.0, 0.05, 0.2, NAN],
    "is_reference": [False, True, False, False, False],
})
COMPARISON.attrs["reference"] = {"description": "the base config (candidate c0)"}


def test_forest_info_leaves_out_the_reference_and_undefined_rows():
    info = forest_info(COMPARISON)
    assert info.metric == "quality_answer_containment"
    assert info.reference == "the base config (candidate c0)"
    assert info.ids == ("c1", "c2", "c3") and info.n_undefined == 1
    assert info.labels == ("round_cap.max_rounds=1", "truncation.strategy=append_then_truncate", "hyde.enabled=true")
    assert info.delta == (-0.08, -0.03, 0.01) and info.lo == (-0.12, -0.05, -0.02) and info.hi == (-0.04, -0.01, 0.04)
    assert info.sign == (-1, -1, 0) and info.n == (240, 240, 240) and info.share_differ == (0.1, 0.05, 0.2)
    assert info.x_title == "Δ answer containment (lenient) (candidate − reference)"
    assert forest_info(COMPARISON.assign(lo=[0.01, 0, 0.02, -0.02, NAN])).sign == (1, 1, 0)
    assert forest_info(COMPARISON, reference="run 7").reference == "run 7"
    with pytest.raises(ValueError, match="name one"):
        forest_info(COMPARISON.assign(metric=["a", "b", "a", "a", "a"]))
    with pytest.raises(ValueError, match="'hi'"):
        forest_info(COMPARISON.drop(columns=["hi"]))


def test_forest_figure_from_info():
    info = forest_info(COMPARISON)
    fig = forest_figure(info)
    shown, hollow = fig.data                        # one trace per kind of mark, each named in the legend
    assert shown.name == "shown: the interval excludes 0 (blue: better for this metric, red: worse)"
    assert hollow.name == "not shown"
    assert list(shown.marker.color) == [WORSE, WORSE]   # fewer right answers: worse, whatever the sign's colour
    saving = forest_figure(forest_info(COMPARISON.assign(metric="cost_llm_calls"), "cost_llm_calls"))
    assert list(saving.data[0].marker.color) == [BETTER, BETTER]   # fewer LLM calls: a saving, drawn better
    assert list(shown.x) + list(hollow.x) == [-0.08, -0.03, 0.01]
    assert list(shown.y) + list(hollow.y) == list(info.labels)
    assert list(shown.error_x.array) + list(hollow.error_x.array) == pytest.approx([0.04, 0.02, 0.03])
    assert list(shown.error_x.arrayminus) + list(hollow.error_x.arrayminus) == pytest.approx([0.04, 0.02, 0.03])
    assert shown.marker.symbol == "circle" and hollow.marker.symbol == "circle-open"
    points = shown
    assert fig.layout.shapes[0].x0 == 0 and fig.layout.yaxis.autorange == "reversed"
    assert fig.layout.title.text == "Δ answer containment (lenient) vs the base config (candidate c0)"
    assert "240 questions, 10% differ" in points.hovertext[0]


def test_a_legend_lists_its_groups_in_the_order_a_grid_axis_does():
    """One order for the distinct values of a column: the colour groups of a scatter (group_names) and the axis of a
    grid figure (axis_values) both sort them (numpy and Python numbers alike), missing values left out (the
    legend names them last, as UNSET), and keep first appearance when they do not sort."""
    values = [3, None, np.int64(1), 2.5, np.float64(3.0), float("nan"), 1]
    assert axis_values(values) == (1, 2.5, 3)
    assert group_names(values) == ("1", "2.5", "3", UNSET)
    mixed = ["b", 2, None, "a"]
    assert axis_values(mixed) == ("b", 2, "a") and group_names(mixed) == ("b", "2", "a", UNSET)
