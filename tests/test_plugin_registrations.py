"""A toy policy, metric, truncation strategy and dataset layout each go in with one registration, and
everything that lists its kind picks it up: the config's sections, dotted keys and the widgets (policy); the
per-question row, labels, objectives and value ranges (metric); the policy field, the pipeline and the
widgets (strategy); detection, loading, the shipped names and the help texts (layout). Each fixture removes
its toy again, so no other test sees it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rag_lab.evaluation import evaluate_pipeline
from rag_lab.evaluation.catalog import check_metric, is_outcome, label, lower_is_better, value_range
from rag_lab.evaluation.metric_table import METRICS, Metric
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.pipeline import Pipeline, PipelineConfig
from rag_lab.pipeline.truncation import TRUNCATION_STRATEGIES, fit
from rag_lab.records import EvalSet, Question
from rag_lab.stats.summary import aggregate_rows
from rag_lab.testing import ScriptedResources, corpus_of

QUESTION = "What is the falcon passphrase?"


def _run(config: PipelineConfig, hits: list[str], texts: dict[str, str] | None = None):
    corpus = corpus_of(texts or {"gold": "The falcon passphrase is ZEBRA.", "other": "Falcon launch notes."})
    evalset = EvalSet([Question(qid="a", text=QUESTION, type="single", answer="ZEBRA", gold_doc_ids=("gold",),
                                min_hops=1)])
    backend = ScriptedBackend({"route": ['{"route": "SIMPLE"}'], "answer": ["It is ZEBRA [1]"]})
    return evaluate_pipeline(Pipeline(config, ScriptedResources(corpus, {QUESTION: hits}), backend), evalset)


_QUESTION = Question(qid="a", text=QUESTION, type="single", answer="ZEBRA", gold_doc_ids=("gold",), min_hops=1)


def _pipeline(config: PipelineConfig) -> Pipeline:
    corpus = corpus_of({"gold": "The falcon passphrase is ZEBRA.", "other": "Falcon launch notes."})
    backend = ScriptedBackend({"route": ['{"route": "SIMPLE"}'], "answer": ["It is ZEBRA [1]"]})
    return Pipeline(config, ScriptedResources(corpus, {QUESTION: ["gold"]}), backend)


BASE = PipelineConfig().with_params({"crag.enabled": False, "citations.refusal_threshold": -1.0})


# --- policy ---------------------------------------------------------------------------------------------------

@pytest.fixture
def toy_policy() -> Iterator[str]:
    from pydantic import Field

    from rag_lab.pipeline import POLICIES, Policy

    class Politeness(Policy):
        """A toy policy: how many courtesy words the answer may open with (no stage reads it)."""

        level: int = Field(default=1, ge=0, le=3)

    POLICIES.add("politeness", Politeness)
    yield "politeness"
    POLICIES.remove("politeness")


def test_a_toy_policy_is_one_class_and_one_registration(toy_policy: str) -> None:
    from rag_lab.errors import ConfigError
    from rag_lab.widgets.controls import field_spec

    config = PipelineConfig()
    assert config.get("politeness.level") == 1 and config.politeness.level == 1   # a section, by default
    assert config.flat()["politeness.level"] == 1                                 # a dotted key
    assert config.with_params(politeness__level=3).get("politeness.level") == 3
    assert PipelineConfig.from_dict({"politeness": {"level": 2}, "crag.upper": 0.6}).get("politeness.level") == 2
    with pytest.raises(ConfigError, match="politeness.level"):
        config.with_params({"politeness.level": 9})                               # validated by its class
    spec = field_spec("politeness.level")                                        # the widgets offer a control
    assert (spec.kind, spec.lo, spec.hi) == ("int", 0, 3)
    result, _ = _pipeline(config.with_params({"politeness.level": 2})).run(_QUESTION)
    assert result.status == "answered"                                            # the pipeline runs with it


def test_without_the_toy_policy_its_section_is_refused() -> None:
    from rag_lab.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown policy 'politeness'"):
        PipelineConfig().with_params({"politeness.level": 2})
    with pytest.raises(ConfigError, match="unknown policy 'politeness'"):
        PipelineConfig.from_dict({"politeness": {"level": 2}})


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
    from rag_lab.experiments.engine.search_space import Objective

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


# --- dataset layout -------------------------------------------------------------------------------------------

def _load_tsv(source, name, split):
    """The toy layout's loader: one ``question<TAB>answer<TAB>passage`` row per question."""
    from rag_lab.records import Corpus, Dataset, Document

    rows = [line.split("\t") for line in source.path.read_text(encoding="utf-8").splitlines() if line.strip()]
    name = name or source.path.stem
    docs = [Document(doc_id=f"p{i}", title=f"passage {i}", text=passage) for i, (_, _, passage) in enumerate(rows)]
    questions = [Question(qid=f"t{i}", text=q, answer=a, gold_doc_ids=(f"p{i}",), split=split or "dev")
                 for i, (q, a, _) in enumerate(rows)]
    return Dataset(Corpus(docs, name=name), EvalSet(questions, name=name), name=name, source=str(source.path))


@pytest.fixture
def toy_layout() -> Iterator[str]:
    from rag_lab.loaders import LAYOUTS, Layout

    LAYOUTS.add("toy_tsv", Layout(detect=lambda source: source.path.suffix == ".tsv", load=_load_tsv,
                                  what="a toy TSV file (question, answer, passage)", suffixes=(".tsv",)))
    yield "toy_tsv"
    LAYOUTS.remove("toy_tsv")


TSV = "Who wrote Zeta?\tAda\tZeta was written by Ada.\nWhere is Omega?\tMars\tOmega lies on Mars.\n"


def test_a_toy_layout_is_one_detector_and_one_loader(toy_layout: str, tmp_path, monkeypatch) -> None:
    import rag_lab.loaders as loaders

    path = tmp_path / "toy.tsv"
    path.write_text(TSV, encoding="utf-8")
    dataset = loaders.load_dataset(path)                       # a file of the layout ...
    assert [q.answer for q in dataset.evalset] == ["Ada", "Mars"] and len(dataset.corpus) == 2
    shipped = tmp_path / "data"
    (shipped / "toy_sample").mkdir(parents=True)
    (shipped / "toy_sample" / "questions.tsv").write_text(TSV, encoding="utf-8")
    assert loaders.load_dataset(shipped / "toy_sample").name == "toy_sample"   # ... a folder holding one ...
    monkeypatch.setattr(loaders, "DATA_DIR", shipped)
    assert loaders.shipped_datasets() == ["toy_sample"]        # ... a shipped sample, loaded by its name
    assert loaders.load_dataset("toy_sample", split="train").evalset.splits == ["train"]
    assert "a toy TSV file (question, answer, passage)" in loaders.dataset_help()   # the help texts list it
    assert ".tsv" in loaders.dataset_help()


def test_without_the_toy_layout_the_file_is_refused_with_the_layouts(tmp_path) -> None:
    from rag_lab.errors import DataFormatError
    from rag_lab.loaders import LAYOUTS, load_dataset

    assert "toy_tsv" not in LAYOUTS
    path = tmp_path / "toy.tsv"
    path.write_text(TSV, encoding="utf-8")
    with pytest.raises(DataFormatError, match="expected a JSON array of examples"):
        load_dataset(path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataFormatError, match="not a dataset folder: expected a synthetic-world folder .*, a BEIR "
                                              "folder .* or a documents folder .*found none"):
        load_dataset(tmp_path / "empty")
