"""The repeated-query stop (rag_lab/pipeline/repeated_query.py), a policy added in its own module: the loop ends
when the controller's refined query nearly repeats one it already ran; it is a sweep key and a widget control,
and off (its default) it changes no trace and no id."""

from __future__ import annotations

from test_pipeline import AGAIN, ANSWER, FILLERS, Q, backend, run

from rag_lab.experiments.engine.grid import Grid, config_id
from rag_lab.experiments.engine.sweep import BackendSpec
from rag_lab.pipeline import PipelineConfig, StopReason
from rag_lab.pipeline.repeated_query import similarity
from rag_lab.testing import ScriptedResources, corpus_of
from rag_lab.widgets.controls import controllable_keys, field_spec

PARAPHRASE = "falcon passphrase what is it"   # the question's content words again, reordered


def _res() -> ScriptedResources:
    return ScriptedResources(corpus_of(FILLERS), {Q: ["f0"], PARAPHRASE: ["f1"], "launch schedule": ["f2"]})


def test_a_near_repeat_of_a_query_already_run_stops_the_loop():
    assert similarity(PARAPHRASE, Q) == 1.0 and similarity("launch schedule", Q) == 0.0
    result, trace = run(_res(), backend([AGAIN.format(q=PARAPHRASE), ANSWER]),
                        **{"repeated_query.enabled": True, "round_cap.max_rounds": 3})
    assert (result.stop_reason, trace.rounds_used) == ("repeated_query", 1)
    assert trace.intervention_texts("repeated_query") == [
        f"repeated-query stop: {PARAPHRASE!r} nearly repeats {Q!r} (similarity 1.00 ≥ 0.8)"]
    # a new query runs its round
    _, trace = run(_res(), backend([AGAIN.format(q="launch schedule"), ANSWER]), **{"repeated_query.enabled": True})
    assert trace.rounds_used == 2 and trace.stop_reason == StopReason.ANSWERED


def test_off_by_default_it_changes_nothing():
    result, trace = run(_res(), backend([AGAIN.format(q=PARAPHRASE), ANSWER]), **{"round_cap.max_rounds": 3})
    assert (result.stop_reason, trace.rounds_used, trace.has("repeated_query")) == (StopReason.ANSWERED, 2, False)
    assert "repeated_query.enabled" not in PipelineConfig().identity()        # no id names it at its default
    assert config_id(PipelineConfig()) == "9b83f0ee4c28"


def test_its_threshold_is_a_sweep_key_and_a_widget_control():
    grid = Grid({"repeated_query.enabled": [True], "repeated_query.threshold": [0.5, 0.9]})
    configs = [c.config for c in grid.resolve(PipelineConfig(), BackendSpec())]
    assert [c.get("repeated_query.threshold") for c in configs] == [0.5, 0.9]
    assert len({config_id(c) for c in configs}) == 2
    spec = field_spec("repeated_query.threshold")
    assert (spec.kind, spec.lo, spec.hi) == ("float", 0.05, 1.0)
    assert {"repeated_query.enabled", "repeated_query.threshold"} <= set(controllable_keys())   # the explorer offers it
