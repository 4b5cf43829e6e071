"""Multi-hop QA files in every layout people download (HotpotQA original / Hugging Face, JSON /
JSON Lines / Parquet, distractor / fullwiki; MuSiQue; 2WikiMultihopQA) and the shipped samples.

Fixtures are small files in the real field names (tests/fixtures/README.md); the other containers
and the malformed variants are derived from them here.
"""

from __future__ import annotations

import builtins
import json
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rag_lab.errors import DataFormatError
from rag_lab.evaluation import evaluate_pipeline
from rag_lab.evaluation.retrieval_eval import evaluate_retrieval, format_report
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.loaders import load_dataset, load_qa_file, shipped_datasets
from rag_lab.pipeline import Pipeline, PipelineConfig
from rag_lab.testing import ScriptedResources

FIXTURES = Path(__file__).parent / "fixtures"
HOTPOT = FIXTURES / "hotpotqa_distractor.json"
FULLWIKI = FIXTURES / "hotpotqa_fullwiki_partial.json"
HF_NOID = FIXTURES / "hotpotqa_hf_noid.jsonl"
MUSIQUE = FIXTURES / "musique_ans.jsonl"
TWOWIKI = FIXTURES / "2wikimultihopqa_dev.json"


def read_json(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return json.loads(path.read_text(encoding="utf-8"))


def write(path: Path, records: list[Any], container: str) -> Path:
    """``records`` as a JSON array, JSON Lines or Parquet file (the name never says which)."""
    if container == "parquet":
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(records), path)
    elif container == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    return path


def to_hf(example: dict[str, Any], id_key: str | None = "id") -> dict[str, Any]:
    """A HotpotQA example in the Hugging Face ``datasets`` layout."""
    row = {k: v for k, v in example.items() if k not in ("_id", "context", "supporting_facts")}
    if id_key:
        row[id_key] = example["_id"]
    row["supporting_facts"] = {"title": [t for t, _ in example["supporting_facts"]],
                               "sent_id": [i for _, i in example["supporting_facts"]]}
    row["context"] = {"title": [t for t, _ in example["context"]], "sentences": [s for _, s in example["context"]]}
    return row


def assert_names(error: DataFormatError, path: Path, line: int | None, field: str | None, index: int | None) -> None:
    """The error names the file, the line (JSON Lines), the example index and the field."""
    assert error.path == str(path) and error.line == line and error.field == field
    if field is not None:
        assert repr(field) in str(error)
    if index is not None:
        assert f"(in example {index})" in str(error)


# --------------------------------------------------------------------------- shipped samples


def test_shipped_samples_load_by_name() -> None:
    assert {"world", "hotpotqa_sample", "musique_sample", "scifact_sample"} <= set(shipped_datasets())
    hotpot = load_dataset("hotpotqa_sample")
    assert (hotpot.name, len(hotpot.evalset)) == ("hotpotqa_sample", 200)
    assert hotpot.evalset.type_counts() == {"bridge": 155, "comparison": 45}
    assert hotpot.coverage.all_in_corpus == 200 and hotpot.coverage.recall_ceiling == 1.0
    musique = load_dataset("musique_sample")
    assert len(musique.evalset) == 100 and all(len(q.hop_doc_ids) == q.min_hops >= 2 for q in musique.evalset)
    assert sum(bool(q.answer_aliases) for q in musique.evalset) == 30
    scifact = load_dataset("scifact_sample")  # BEIR as published: qrels with a header line and CRLF
    assert (len(scifact.corpus), len(scifact.evalset)) == (304, 40)
    assert all(not q.hop_doc_ids for q in scifact.evalset)


# --------------------------------------------------------------------------- HotpotQA layouts


@pytest.mark.parametrize(
    ("layout", "container"),
    # Parquet cannot hold the original layout's mixed [title, [sentences]] pairs; Parquet files are HF exports
    [(layout, c) for layout in ("original", "hf_id", "hf__id") for c in ("json", "jsonl", "parquet")
     if (layout, c) != ("original", "parquet")],
)
def test_hotpotqa_every_layout_and_container_loads_the_same(tmp_path: Path, container: str, layout: str) -> None:
    reference = load_qa_file(HOTPOT)
    examples = read_json(HOTPOT)
    if layout != "original":
        examples = [to_hf(e, "id" if layout == "hf_id" else "_id") for e in examples]
    path = write(tmp_path / "data.bin", examples, container)  # the suffix says nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dataset = load_qa_file(path)
    assert [d.model_dump() for d in dataset.corpus] == [d.model_dump() for d in reference.corpus]
    strip = ("metadata",)
    assert [q.model_dump(exclude=set(strip)) for q in dataset.evalset] == [
        q.model_dump(exclude=set(strip)) for q in reference.evalset]
    expected_layout = "original" if layout == "original" else "huggingface"
    assert {q.metadata["layout"] for q in dataset.evalset} == {expected_layout}


def test_hotpotqa_original_fixture_fields() -> None:
    dataset = load_qa_file(HOTPOT)
    bridge, comparison, _ = dataset.evalset
    raw = read_json(HOTPOT)[0]
    assert bridge.qid == raw["_id"] and bridge.answer == raw["answer"] and bridge.type == "bridge"
    assert bridge.gold_doc_ids == tuple(dict.fromkeys(t for t, _ in raw["supporting_facts"]))
    assert bridge.hop_doc_ids == () and comparison.hop_doc_ids == ()  # supporting facts carry no hop order
    assert dataset.coverage.recall_ceiling == 1.0 and not dataset.notes


def test_hf_layout_without_ids_gets_stable_ids_and_one_note() -> None:
    with pytest.warns(UserWarning, match="3 of 3 question") as record:
        first = load_qa_file(HF_NOID)
    assert len(record) == 1 and "\n" not in str(record[0].message)
    again = load_qa_file(HF_NOID)
    ids = [q.qid for q in first.evalset]
    assert ids == [q.qid for q in again.evalset] and all(re.fullmatch(r"q-[0-9a-f]{16}", i) for i in ids)
    assert first.notes == again.notes and "SHA-1" in first.notes[0]


def test_same_question_without_ids_twice_gets_distinct_ids(tmp_path: Path) -> None:
    rows = read_json(HF_NOID)
    path = write(tmp_path / "twice.jsonl", [rows[0], rows[0]], "jsonl")
    with pytest.warns(UserWarning):
        a, b = load_qa_file(path).evalset
    assert b.qid == f"{a.qid}-2"


def test_fullwiki_missing_gold_keeps_questions_and_states_the_ceiling() -> None:
    dataset = load_qa_file(FULLWIKI)
    assert len(dataset.evalset) == 3  # nobody is dropped
    cov = dataset.coverage
    assert (cov.all_in_corpus, cov.some_in_corpus, cov.none_in_corpus) == (1, 1, 1)
    assert cov.recall_ceiling == pytest.approx((0.5 + 0.0 + 1.0) / 3)
    report = evaluate_retrieval(dataset, "bm25", k=5)
    assert report.gold_coverage == cov and report.overall.recall <= cov.recall_ceiling
    assert "none for 1 of 3 questions (recall ceiling 0.500)" in format_report([report])


def test_missing_gold_still_rejected_where_the_corpus_must_hold_it(tmp_path: Path) -> None:
    from rag_lab.records import Corpus, Dataset, Document, EvalSet, Question

    corpus = Corpus([Document(doc_id="a", text="A.")])
    evalset = EvalSet([Question(qid="q", text="Q?", gold_doc_ids=("a", "zz"))])
    with pytest.raises(ValueError, match="1 gold doc id"):
        Dataset(corpus, evalset, name="d")
    assert Dataset(corpus, evalset, name="d", allow_missing_gold=True).coverage.some_in_corpus == 1


# --------------------------------------------------------------------------- MuSiQue


def test_musique_fields_aliases_hops_and_unanswerable() -> None:
    dataset = load_dataset(str(MUSIQUE))
    two, three, unanswerable = dataset.evalset
    raw = read_json(MUSIQUE)
    assert (two.type, two.answer, two.answer_aliases) == ("2hop", raw[0]["answer"], tuple(raw[0]["answer_aliases"]))
    assert two.min_hops == 2 and two.hop_doc_ids == ("Anna Benson", "Kris Benson")
    # hop order follows the decomposition (paragraphs 16, 3, 14), not the paragraph order
    assert three.hop_doc_ids == ("The Feminine Mystique", "Betty Friedan", "Household income in the United States")
    assert set(three.gold_doc_ids) == set(three.hop_doc_ids) and three.type == "3hop1"
    assert (unanswerable.type, unanswerable.answer, unanswerable.answerable) == ("unanswerable", None, False)
    assert unanswerable.metadata["unanswerable_answer"] == raw[2]["answer"]
    report = evaluate_retrieval(dataset, "bm25", k=3)
    assert set(report.by_hop) == {"hop1", "hop2", "hop3"} and report.by_hop["hop3"].n == 1


def test_musique_title_with_two_texts_gets_two_ids(tmp_path: Path) -> None:
    rows = read_json(MUSIQUE)
    rows[1]["paragraphs"][0] = {**rows[1]["paragraphs"][0], "title": "Anna Benson"}  # same title, other text
    dataset = load_qa_file(write(tmp_path / "m.jsonl", rows[:2], "jsonl"))
    bensons = [d for d in dataset.corpus if d.title == "Anna Benson"]
    assert len(bensons) == 2 and all(re.fullmatch(r"Anna Benson \[[0-9a-f]{8}\]", d.doc_id) for d in bensons)
    assert dataset.evalset.questions[0].hop_doc_ids[0] in {d.doc_id for d in bensons}


def test_aliases_and_abstention_reach_the_metrics() -> None:
    dataset = load_qa_file(MUSIQUE)
    two, _, unanswerable = dataset.evalset
    from rag_lab.records import EvalSet

    res = ScriptedResources(dataset.corpus, {two.text: ["Kris Benson", "Anna Benson"]})
    backend = ScriptedBackend({"route": ['{"route": "SIMPLE"}'] * 2, "answer": ["He played for the Mets [1].", "INSUFFICIENT"]})
    config = PipelineConfig().with_params({"crag.enabled": False, "citations.refusal_threshold": -1.0})
    run = evaluate_pipeline(Pipeline(config, res, backend), EvalSet([two, unanswerable]))
    answered, refused = run.rows
    assert "Mets" in two.answer_aliases and two.answer != "Mets"
    assert answered["quality_answer_containment"] == 1.0 and answered["quality_exact_match"] == 0.0
    assert refused["quality_refused"] == 1.0 and refused["quality_abstention_accuracy"] == 1.0


# --------------------------------------------------------------------------- 2WikiMultihopQA


def test_twowiki_types_and_evidence_chain() -> None:
    dataset = load_qa_file(TWOWIKI)
    by_type = {q.type: q for q in dataset.evalset}
    assert set(by_type) == {"compositional", "comparison", "bridge_comparison", "inference"}
    # supporting facts list the person first; the evidence chain starts at the film
    assert by_type["compositional"].hop_doc_ids == ("Coup de Torchon", "Bertrand Tavernier")
    assert by_type["inference"].hop_doc_ids == ("Elizabeth II", "George VI")
    assert by_type["comparison"].hop_doc_ids == () and by_type["bridge_comparison"].hop_doc_ids == ()
    assert len(by_type["bridge_comparison"].gold_doc_ids) == 4
    assert {q.metadata["source_format"] for q in dataset.evalset} == {"2wikimultihopqa"}


# --------------------------------------------------------------------------- malformed input


def _change(index: int, change: Callable[[dict[str, Any]], Any]) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    def corrupt(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        change(records[index])
        return records

    return corrupt


MALFORMED = [
    # (fixture, corruption, message pattern, field, bad example index)
    (MUSIQUE, _change(1, lambda r: r.pop("paragraphs")), "missing", "paragraphs", 1),
    (MUSIQUE, _change(1, lambda r: r["paragraphs"][2].pop("is_supporting")), "missing", "paragraphs[2].is_supporting", 1),
    (MUSIQUE, _change(1, lambda r: r["paragraphs"][0].update(is_supporting="yes")), "true or false",
     "paragraphs[0].is_supporting", 1),
    (MUSIQUE, _change(1, lambda r: r["paragraphs"][1].update(idx=r["paragraphs"][0]["idx"])), "duplicate idx",
     "paragraphs[1].idx", 1),
    (MUSIQUE, _change(1, lambda r: r["question_decomposition"][1].update(paragraph_support_idx=99)), "no paragraph has idx 99",
     "question_decomposition[1].paragraph_support_idx", 1),
    (MUSIQUE, _change(0, lambda r: r["answer_aliases"].append(7)), "must be a string", "answer_aliases[5]", 0),
    (MUSIQUE, _change(2, lambda r: r.update(answerable="false")), "true or false", "answerable", 2),
    (MUSIQUE, _change(2, lambda r: r.update(question_decomposition=[])), "at least one step", "question_decomposition", 2),
    (HF_NOID, _change(1, lambda r: r["context"]["sentences"].pop()), "title has 4 entries but sentences has 3", "context", 1),
    (HF_NOID, _change(2, lambda r: r["supporting_facts"].pop("sent_id")), "missing", "supporting_facts.sent_id", 2),
    (HF_NOID, _change(0, lambda r: r["supporting_facts"]["sent_id"].__setitem__(0, "0")), "sentence index",
     "supporting_facts[0]", 0),
    (TWOWIKI, _change(3, lambda r: r["evidences"].append(["George V", "father"])), r"\[subject, relation, object\]",
     "evidences[2]", 3),
    (TWOWIKI, _change(1, lambda r: r.pop("evidences")), "missing", "evidences", 1),
    (TWOWIKI, _change(0, lambda r: r.update(id=None, _id="")), "non-empty string", "_id", 0),
]


@pytest.mark.parametrize("container", ["json", "jsonl"])
@pytest.mark.parametrize(("fixture", "corrupt", "pattern", "field", "index"), MALFORMED)
def test_malformed_records_name_file_line_index_and_field(
    tmp_path: Path, container: str, fixture: Path, corrupt: Callable, pattern: str, field: str, index: int
) -> None:
    path = write(tmp_path / "bad.data", corrupt(read_json(fixture)), container)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # derived-id notes of the id-less fixture
        with pytest.raises(DataFormatError, match=pattern) as caught:
            load_qa_file(path)
    assert_names(caught.value, path, index + 1 if container == "jsonl" else None, field, index)


def test_unknown_records_and_parquet_without_pyarrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "x.json", [{"query": "what?", "docs": []}], "json")
    with pytest.raises(DataFormatError, match=r"known layout: expected .*'context'.*"
                                             r"or a MuSiQue file \(examples with 'paragraphs'\)"):
        load_qa_file(path)
    fake = tmp_path / "f.parquet"
    fake.write_bytes(b"PAR1" + b"\0" * 16 + b"PAR1")
    real_import = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(DataFormatError, match=re.escape("pip install 'rag_lab[parquet]'")) as caught:
        load_qa_file(fake)
    assert caught.value.path == str(fake)


def test_corrupt_parquet_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    fake = tmp_path / "f.parquet"
    fake.write_bytes(b"PAR1" + b"\0" * 16 + b"PAR1")
    with pytest.raises(DataFormatError, match="not a readable Parquet file"):
        load_qa_file(fake)


def test_the_layout_of_a_name_is_the_layout_load_dataset_reads_it_with(tmp_path: Path) -> None:
    """One rule for what a dataset name or path names (a shipped dataset, twins, a path; one that is none of them is
    an error): dataset_layout answers for what load_dataset reads."""
    from rag_lab.loaders import dataset_layout

    for name, layout in (("hotpotqa_sample", "hotpotqa"), ("hotpotqa_sample_twins", "hotpotqa"),
                         ("musique_sample_twins", "musique"), ("world", "world")):
        assert dataset_layout(name) == layout
        assert load_dataset(name).name == name
    for read in (dataset_layout, load_dataset):
        with pytest.raises(DataFormatError, match="no such dataset") as caught:
            read(str(tmp_path / "nowhere_twins"))
        assert str(tmp_path / "nowhere") in str(caught.value)
