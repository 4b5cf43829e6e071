"""A toy metric, truncation strategy and dataset layout each go in with one registration, and everything
that lists its kind picks it up: the per-question row, labels, objectives and value ranges (metric); the
policy field, the pipeline and the widgets (strategy); detection, loading, the shipped names and the help
texts (layout). Each fixture removes its toy again, so no other test sees it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fakes import ScriptedResources, corpus_of

from rag_lab.evaluation import evaluate_pipeline
from rag_lab.evaluation.catalog import check_metric, is_outcome, label, lower_is_better, value_range
from rag_lab.evaluation.metric import METRICS, Metric
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.pipeline import Pipeline, PipelineConfig
from rag_lab.pipeline.truncation import TRUNCATION_STRATEGIES, fit
from rag_lab.records import EvalSet, Question
from rag_lab.stats.summary import aggregate_rows

QUESTION = "What is the falcon passphrase?"


def _run(config: PipelineConfig, hits: list[str], texts: dict[str, str] | None = None):
    corpus = corpus_of(texts or {"gold": "The falcon passphrase is ZEBRA.", "other": "Falcon launch notes."})
    evalset = EvalSet([Question(qid="a", text=QUESTION, type="single", answer="ZEBRA", gold_doc_ids=("gold",),
                                min_hops=1)])
    backend = ScriptedBackend({"route": ['{"route": "SIMPLE"}'], "answer": ["It is ZEBRA [1]"]})
    return evaluate_pipeline(Pipeline(config, ScriptedResources(corpus, {QUESTION: hits}), backend), evalset)


BASE = PipelineConfig().with_params({"crag.enabled": False, "citations.refusal_threshold": -1.0})


# --- metric ---------------------------------------------------------------------------------------------------

@pytest.fixture
def toy_metric() -> Iterator[str]:
    METRICS.add("quality_short_answer", Metric(lambda run: float(len(run.answer_text.split()) <= 5),
                                               "short answers", better="higher", zero_one=True, outcome=True))
    yield "quality_short_answer"
    METRICS.remove("quality_short_answer")


def test_a_toy_metric_is_one_registration(toy_metric: str) -> None:
    row = _run(BASE, ["gold", "other"]).rows[0]
    assert row[toy_metric] == 1.0                     # the per-question row computes it ...
    assert aggregate_rows([row])[toy_metric] == 1.0    # ... the summaries average it (a quality_* column) ...
    assert label(toy_metric) == "short answers"        # ... and what the registry says is read everywhere
    assert check_metric(toy_metric) == toy_metric and value_range(toy_metric) == (0.0, 1.0)
    assert not lower_is_better(toy_metric) and is_outcome(toy_metric)
    from rag_lab.experiments.search_space import Objective

    assert Objective.parse(toy_metric).direction == "maximize"


def test_the_toy_metric_leaves_no_trace() -> None:
    assert "quality_short_answer" not in METRICS
    assert "quality_short_answer" not in _run(BASE, ["gold", "other"]).rows[0]
    with pytest.raises(ValueError, match="names no metric"):
        check_metric("quality_short_answer")


def test_the_metric_registry_describes_every_column_of_the_row() -> None:
    row = _run(BASE, ["gold", "other"]).rows[0]
    metrics = [c for c in row if c.startswith(("quality_", "cost_", "spent_", "run_"))]
    assert metrics and all(c in METRICS for c in metrics)
    for name in metrics:
        if METRICS[name].zero_one and row[name] is not None:
            assert row[name] in (0.0, 1.0), name
    # the costs are minimised, the answer maximised, the rounds-minus-hops counter is no 0/1 rate
    assert lower_is_better("cost_llm_calls") and lower_is_better("quality_refused")
    assert not lower_is_better("quality_answer_containment_strict")
    assert value_range("quality_rounds_minus_hops") is None and value_range("quality_f1") == (0.0, 1.0)
    with pytest.raises(ValueError, match="not both"):
        Metric(lambda run: 0.0, zero_one=True, share=True)


# --- truncation strategy -------------------------------------------------------------------------------------

@pytest.fixture
def toy_strategy() -> Iterator[str]:
    @TRUNCATION_STRATEGIES.register("alphabetical")
    def alphabetical(candidates, max_snippets, max_tokens, res, queries):
        return fit(sorted(candidates, key=lambda c: c.doc_id), max_snippets, max_tokens)

    yield "alphabetical"
    TRUNCATION_STRATEGIES.remove("alphabetical")


def test_a_toy_truncation_strategy_is_one_registration(toy_strategy: str) -> None:
    config = BASE.with_params({"truncation.strategy": toy_strategy, "truncation.max_snippets": 2})
    texts = {"zeta": "Zeta notes.", "gold": "The falcon passphrase is ZEBRA.", "alpha": "Alpha notes."}
    run = _run(config, ["zeta", "gold", "alpha"], texts)
    assert [c.doc_id for c in run.results["a"].context] == ["alpha", "gold"]   # the pipeline cuts with it
    finalize = next(s for s in run.traces["a"].steps if s.kind == "finalize")
    assert finalize.detail["strategy"] == toy_strategy
    from rag_lab.widgets.controls import field_spec

    assert toy_strategy in field_spec("truncation.strategy").choices        # the widgets offer it
    schema = PipelineConfig.model_json_schema()["$defs"]["Truncation"]["properties"]["strategy"]
    assert "rank_then_truncate" in schema["enum"]


def test_an_unregistered_strategy_is_refused_with_the_choices() -> None:
    from rag_lab.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown truncation strategy 'alphabetical'; choose one of "
                                          "append_then_truncate, rank_then_truncate, refine, round_slots"):
        BASE.with_params({"truncation.strategy": "alphabetical"})
