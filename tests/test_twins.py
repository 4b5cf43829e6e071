"""What a guardrail buys (issue 48): unanswerable twins of the real samples (:mod:`rag_lab.loaders.twins`), the
closed-book reader (``generation.reader=closed_book``), the per-question guard metrics, and the pair metrics and
table over a question and its twin (:mod:`rag_lab.experiments.engine.pairs`)."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.errors import ConfigError
from rag_lab.evaluation.metric_table import question_metrics
from rag_lab.experiments.engine.pair_metrics import PAIR_METRICS
from rag_lab.experiments.engine.sweep import SweepSpec
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.loaders import load_dataset
from rag_lab.loaders.twins import TWIN_QID_SUFFIX, insufficient, twin_count, twins_of
from rag_lab.pipeline import Pipeline, PipelineConfig
from rag_lab.pipeline.interventions import Intervention
from rag_lab.records import Corpus, Dataset, Document, EvalSet, Question
from rag_lab.testing import ScriptedResources, corpus_of
from rag_lab.text_overlap import normalize_answer


@pytest.fixture(scope="module", params=["hotpotqa_sample", "musique_sample"])
def halves(request):
    return load_dataset(request.param), load_dataset(request.param + "_twins")


def test_no_twin_corpus_holds_a_supporting_paragraph_or_its_title(halves):
    original, twins = halves
    gold = {d for q in original.evalset for d in q.gold_doc_ids}
    gold_titles = {original.corpus[d].title for d in gold if d in original.corpus} | gold
    assert gold and not gold & set(twins.corpus.doc_ids)
    assert not {doc.title for doc in twins.corpus} & gold_titles
    assert len(twins.corpus) == sum(1 for doc in original.corpus if doc.title not in gold_titles)


def test_every_question_has_one_unanswerable_twin_linked_to_it(halves):
    original, twins = halves
    assert [q.qid for q in twins.evalset] == [q.qid + TWIN_QID_SUFFIX for q in original.evalset]
    for q, twin in zip(original.evalset, twins.evalset, strict=True):
        assert twin.text == q.text and twin.type == q.type and not twin.answerable and not twin.gold_doc_ids
        assert twin.metadata["pair_id"] == q.qid and twin.metadata["original_answers"] == list(q.gold_answers)
        assert twin.metadata["removed_doc_ids"] == list(q.gold_doc_ids)


def test_a_twin_is_flagged_exactly_when_its_corpus_still_holds_a_gold_answer(halves):
    _, twins = halves
    texts = {doc.doc_id: f" {normalize_answer(doc.title + ' ' + doc.text)} " for doc in twins.corpus}
    for twin in twins.evalset:
        answers = [normalize_answer(a) for a in twin.metadata["original_answers"]]
        holding = {d for d, text in texts.items()
                   if any(a and a not in ("yes", "no") and f" {a} " in text for a in answers)}
        assert set(twin.metadata["answer_in_corpus"]) == holding
        assert insufficient(twin) == (not holding)


def test_the_flagged_counts_the_docs_give():
    """docs/real-data.md states these counts; a change of the construction must change the page too."""
    assert twin_count(load_dataset("hotpotqa_sample_twins")) == (200, 77)
    assert twin_count(load_dataset("musique_sample_twins")) == (100, 40)


def test_twins_are_deterministic_and_load_for_a_path_too(tmp_path):
    a, b = load_dataset("hotpotqa_sample_twins"), load_dataset("hotpotqa_sample_twins")
    assert [q.model_dump() for q in a.evalset] == [q.model_dump() for q in b.evalset]
    assert a.corpus.doc_ids == b.corpus.doc_ids
    from rag_lab.paths import DATA_DIR

    path = DATA_DIR / "musique_sample" / "musique_ans_dev_sample.jsonl"
    by_path = load_dataset(f"{path}_twins")
    assert len(by_path.evalset) == 100 and by_path.evalset.questions[0].metadata["pair_id"]


def test_a_dataset_without_gold_documents_has_no_twins():
    ds = Dataset(Corpus([Document(doc_id="d", text="t")]), EvalSet([Question(qid="q", text="Why?")]), name="x")
    with pytest.raises(ConfigError, match="no question with gold documents"):
        twins_of(ds)


# --- the closed-book reader -------------------------------------------------------------------------------

Q = "Where was the falcon launch moved to?"
DOCS = {"f0": "Falcon launch notes: the rocket launch was moved to Kourou.", "f1": "Other notes about rockets."}


def test_the_closed_book_reader_asks_the_question_alone_and_retrieves_nothing():
    be = ScriptedBackend({"closedbook": ["Kourou"]})
    config = PipelineConfig().with_params({"generation.reader": "closed_book"})
    result, trace = Pipeline(config, ScriptedResources(corpus_of(DOCS), {Q: ["f0"]}), be).run(Q, qid="q1")
    assert result.status == "answered" and result.answer == "Kourou" and result.rounds_used == 0
    assert not result.context and result.retrieval_calls == 0 and result.llm_cost.calls == 1
    (request,) = be.requests_for("closedbook")
    assert request.messages[0].content.startswith("[closedbook-v1]") and "EVIDENCE" not in request.messages[1].content
    assert trace.has(Intervention.CLOSED_BOOK)


def test_the_closed_book_reader_refuses_only_when_the_model_does():
    be = ScriptedBackend({"closedbook": ["INSUFFICIENT"]})
    config = PipelineConfig().with_params({"generation.reader": "closed_book"})
    result, _ = Pipeline(config, ScriptedResources(corpus_of(DOCS), {Q: ["f0"]}), be).run(Q, qid="q1")
    assert result.status == "refused" and result.refused_by == "model"


# --- the per-question guard metrics ---------------------------------------------------------------------

def _row(question, answer, **params):
    be = ScriptedBackend({"closedbook": [answer]})
    config = PipelineConfig().with_params({"generation.reader": "closed_book", **params})
    result, trace = Pipeline(config, ScriptedResources(corpus_of(DOCS), {Q: ["f0"]}), be).run(question)
    return question_metrics(question, result, trace)


ANSWERABLE = Question(qid="q", text=Q, answer="Kourou")
TWIN = Question(qid="q~twin", text=Q, metadata={"pair_id": "q", "original_answers": ["Kourou"], "answer_in_corpus": []})
WORLD_UNANSWERABLE = Question(qid="u", text=Q, type="unanswerable")


@pytest.mark.parametrize("question, answer, expected", [
    (ANSWERABLE, "Kourou", dict(right=1, confident_error=0, answered=1, right_among_answered=1,
                                unsupported_answer=None, right_from_memory=None, utility=1)),
    (ANSWERABLE, "Paris", dict(right=0, confident_error=1, answered=1, right_among_answered=0,
                               unsupported_answer=None, right_from_memory=None, utility=-1)),
    (ANSWERABLE, "INSUFFICIENT", dict(right=0, confident_error=0, answered=0, right_among_answered=None,
                                      unsupported_answer=None, right_from_memory=None, utility=0)),
    (TWIN, "Kourou", dict(right=1, confident_error=0, answered=1, right_among_answered=1, unsupported_answer=1,
                          right_from_memory=1, utility=1)),
    (TWIN, "Paris", dict(right=0, confident_error=1, answered=1, unsupported_answer=1, right_from_memory=0,
                         utility=-1)),
    (TWIN, "INSUFFICIENT", dict(right=0, confident_error=0, answered=0, unsupported_answer=0, right_from_memory=0,
                                utility=0)),
    (WORLD_UNANSWERABLE, "Kourou", dict(right=0, confident_error=1, unsupported_answer=1, right_from_memory=None,
                                        utility=-1)),
])
def test_the_guard_metrics_of_one_question(question, answer, expected):
    row = _row(question, answer)
    assert {k: row[f"quality_{k}"] for k in expected} == expected
    assert ("pair_id" in row) == ("pair_id" in question.metadata)


# --- pairs ----------------------------------------------------------------------------------------------

def _pair(right, answered, twin_answered, twin_right=0):
    a = {"quality_right": right, "quality_confident_error": int(answered and not right), "quality_answered": answered,
         "quality_utility": right - int(answered and not right)}
    t = {"quality_right": twin_right, "quality_confident_error": int(twin_answered and not twin_right),
         "quality_answered": twin_answered, "quality_utility": twin_right - int(twin_answered and not twin_right)}
    return a, t


@pytest.mark.parametrize("pair, score, utility", [
    (_pair(1, 1, 0), 1, 1),       # right, and the twin refused: what MuSiQue-Full counts
    (_pair(1, 1, 1), 0, 0),       # right, but the twin answered (wrong): not a pair score
    (_pair(0, 0, 0), 0, 0),       # refuses everything
    (_pair(0, 1, 1), 0, -2),      # answers everything, wrong twice
    (_pair(1, 1, 1, 1), 0, 2),    # right on the twin too, from memory
])
def test_the_pair_metrics(pair, score, utility):
    assert PAIR_METRICS["pair_score"].value(*pair) == score
    assert PAIR_METRICS["pair_utility"].value(*pair) == utility


def test_a_claim_over_pairs_needs_the_other_half_and_a_pair_metric():
    base = {"name": "t", "dataset": "world", "grid": {"generation.reader": ["guarded", "plain"]}}
    claim = {"metric": "pair_score", "candidate": {"generation.reader": "plain"}, "over": "pairs"}
    with pytest.raises(ConfigError, match="pairs_with"):
        SweepSpec.from_dict({**base, "findings": [claim]})
    assert SweepSpec.from_dict({**base, "findings": [claim], "pairs_with": "other.yaml"}).findings[0].over == "pairs"
    with pytest.raises(ConfigError, match="unknown pair metric"):
        SweepSpec.from_dict({**base, "findings": [{**claim, "metric": "quality_right"}], "pairs_with": "o.yaml"})


def test_pilot_and_pairs_leave_an_old_sweeps_fingerprint_unchanged():
    from rag_lab.experiments.engine.resolved_sweep import ResolvedSweep

    spec = SweepSpec.from_dict({"name": "t", "dataset": "world", "per_type": 2,
                                "grid": {"round_cap.max_rounds": [1, 2]}})
    evalset = load_dataset("world").evalset
    plain = ResolvedSweep.build(spec, evalset)
    declared = ResolvedSweep.build(spec.model_copy(update={"pilot": ["bridge-001"], "pairs_with": "x.yaml"}), evalset)
    assert plain.fingerprint == declared.fingerprint
    assert "pilot" not in plain.describe()["spec"] and "pairs_with" not in plain.describe()["spec"]


def test_break_even_is_the_ratio_of_the_differences():
    from rag_lab.experiments.engine.pairs import BreakEven

    be = BreakEven(c=0.25, lo=0.1, hi=0.5, n=10, delta_right=-1, delta_wrong=-4)
    assert be.candidate_better_above and "better above" in be.text()
    assert "better at every price" in BreakEven(c=np.nan, lo=np.nan, hi=np.nan, n=3, delta_right=1, delta_wrong=0).text()
    # more right and fewer wrong: a negative ratio, no positive break-even
    assert "better at every price" in BreakEven(c=-5.0, lo=-6, hi=5, n=31, delta_right=5, delta_wrong=-1).text()
    assert "worse at every price" in BreakEven(c=0.0, lo=0, hi=0, n=31, delta_right=0, delta_wrong=1).text()


def test_a_twins_sweep_runs_its_other_half_and_tests_its_claims_over_pairs(tmp_path):
    """End to end on the simulator: the twins' sweep names its other half (pairs_with), the run keeps it in
    run_dir/pairs_with, the claims over pairs are tested on the pairs outside the pilot and the flags, and the pair
    table counts each half."""
    import yaml

    from rag_lab.experiments.engine.findings import claim_qids, sweep_findings
    from rag_lab.experiments.engine.pairs import PairedHalves
    from rag_lab.experiments.sweep_runner import run_sweep

    common = {"types": ["bridge", "comparison"], "per_type": 4, "base": {"router.enabled": False},
              "grid": [{"generation.reader": ["guarded", "plain"]}]}
    (tmp_path / "half.yaml").write_text(yaml.safe_dump({"name": "half", "dataset": "world", **common}))
    pilot = ["bridge-001~twin"]
    twins = {"name": "twins", "dataset": "world_twins", "pairs_with": "half.yaml", "pilot": pilot, **common,
             "findings": [{"metric": "quality_refused", "candidate": {"generation.reader": "plain"},
                           "direction": "below", "claim": "the reader refuses fewer twins"},
                          {"metric": "pair_score", "candidate": {"generation.reader": "plain"}, "over": "pairs",
                           "direction": "below", "claim": "the reader's pair score is lower"}]}
    (tmp_path / "twins.yaml").write_text(yaml.safe_dump(twins))
    result = run_sweep(tmp_path / "twins.yaml", tmp_path / "run", progress="quiet")
    assert (tmp_path / "run" / "pairs_with" / "run.sqlite").is_file()
    findings = sweep_findings(result)
    assert [f.metric for f in findings] == ["quality_refused", "pair_score"]
    kept = claim_qids(result)
    assert "bridge-001~twin" in result.qids and "bridge-001~twin" not in kept
    flagged = set(result.rows(result.reference()["candidate_id"]).query("twin_flagged")["qid"])
    assert not flagged & set(kept) and len(kept) == len(result.qids) - len(flagged | set(pilot))
    assert findings[0].n == len(kept)
    pairs = PairedHalves(result, run_sweep(tmp_path / "half.yaml", tmp_path / "run" / "pairs_with", progress="quiet"))
    table = pairs.table().set_index("label")
    rows = result.rows(result.reference()["candidate_id"])
    assert table.loc["base", "twins_refused"] == int((rows["quality_answered"] == 0).sum())
    assert table.loc["base", "pairs"] == len(result.qids) == 8
    assert 0 <= table.loc["base", "refusal_recall"] <= 1
    # the break-even price from its parts, counted by hand from both halves' rows
    plain = result.reference({"generation.reader": "plain"})["candidate_id"]
    half = pairs.answerable
    counts = {}
    for which, twin_cid in (("plain", plain), ("base", result.reference()["candidate_id"])):
        other = half.reference({"generation.reader": which} if which == "plain" else None)["candidate_id"]
        both = [result.rows(twin_cid), half.rows(other)]
        counts[which] = (sum(int(r["quality_right"].sum()) for r in both),
                         sum(int(r["quality_confident_error"].sum()) for r in both))
    found = pairs.break_even(plain)
    assert (found.delta_right, found.delta_wrong) == (counts["plain"][0] - counts["base"][0],
                                                      counts["plain"][1] - counts["base"][1])
    if found.delta_wrong:
        assert found.c == found.delta_right / found.delta_wrong
    # no twin has an answer to contain: the front and the CLI's delta table lead with abstention accuracy
    assert result.table["quality_answer_containment_strict"].isna().all()
    assert result.headline_quality == "quality_abstention_accuracy"
    assert pairs.answerable.headline_quality == "quality_answer_containment_strict"
    # without its other half, testing and planning its claims over pairs stop alike
    import shutil

    from rag_lab.experiments.planning import plan_study
    from rag_lab.experiments.sweep_runner import load_sweep

    shutil.copytree(tmp_path / "run", tmp_path / "alone", ignore=shutil.ignore_patterns("pairs_with"))
    alone = load_sweep(tmp_path / "alone")
    with pytest.raises(ConfigError, match="claims over pairs read both halves") as tested:
        sweep_findings(alone)
    with pytest.raises(ConfigError) as planned:
        plan_study(alone, twins["findings"])
    assert str(planned.value) == str(tested.value)


def test_the_explorer_offers_what_a_guard_buys_as_a_quality_axis_and_only_higher_is_better_axes():
    from rag_lab.evaluation.catalog import lower_is_better
    from rag_lab.widgets.axes import QUALITY_AXES

    assert {"quality_utility", "quality_right_among_answered"} <= set(QUALITY_AXES)
    assert not [m for m in QUALITY_AXES if lower_is_better(m)]   # the front maximises quality


def test_the_pair_table_of_no_pair_is_a_table_of_zeros(tmp_path):
    """Before the first confirmatory pair (every pair in the pilot), the table of the claim pairs is empty, not an
    error."""
    import yaml

    from rag_lab.experiments.engine.pairs import PairedHalves
    from rag_lab.experiments.sweep_runner import run_sweep

    common = {"types": ["bridge"], "per_type": 2, "base": {"router.enabled": False}}
    (tmp_path / "half.yaml").write_text(yaml.safe_dump({"name": "half", "dataset": "world", **common}))
    (tmp_path / "twins.yaml").write_text(yaml.safe_dump({"name": "twins", "dataset": "world_twins",
                                                         "pairs_with": "half.yaml", **common}))
    result = run_sweep(tmp_path / "twins.yaml", tmp_path / "run", progress="quiet")
    pairs = PairedHalves(result, run_sweep(tmp_path / "half.yaml", tmp_path / "run" / "pairs_with", progress="quiet"))
    table = pairs.table([])
    assert table["pairs"].tolist() == [0] and table["twins_refused"].tolist() == [0]
    assert pairs.break_even(result.reference()["candidate_id"], qids=[]).n == 0


def test_twins_name_their_corpus_and_questions_as_the_dataset():
    """One name for twins (the given one, else the dataset's with ``_twins``) on the dataset, its corpus and its
    questions."""
    original = load_dataset("hotpotqa_sample")
    for given, expected in ((None, "hotpotqa_sample_twins"), ("mine", "mine")):
        twins = twins_of(original, name=given)
        assert twins.name == twins.corpus.name == twins.evalset.name == expected
