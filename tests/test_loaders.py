"""Tests of the BEIR and HotpotQA loaders on small fixture files built in ``tmp_path``."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rag_lab.errors import DataFormatError
from rag_lab.loaders.beir import load_beir, save_beir
from rag_lab.loaders.hotpotqa import HotpotQAConflictWarning, load_hotpotqa
from rag_lab.loaders.musique import load_musique
from rag_lab.records import Corpus, Dataset, Document, EvalSet, Question

# --------------------------------------------------------------------------- fixtures

CORPUS = [
    {"_id": "d1", "title": "Alpha", "text": "Alpha is a town.", "source": "wiki", "metadata": {"date": "1"}},
    {"_id": 2, "title": "Beta", "text": "Beta is a river."},
    {"_id": "d3", "text": "A page without a title."},
]
QUERIES = [
    {
        "_id": "q1",
        "text": "Which river flows through Alpha?",
        "metadata": {
            "type": "bridge", "answer": "Beta", "answer_aliases": ["the Beta"], "min_hops": 2, "level": "hard"
        },
    },
    {"_id": "q2", "text": "What is Beta?", "metadata": {"answers": ["a river", "river"]}},
    {"_id": "q3", "text": "A query nobody judged."},
    {"_id": "q4", "text": "A dev question."},
]
TEST_QRELS = [("q1", "d1", 1), ("q1", "2", 2), ("q2", "2", 1), ("q2", "d3", 0)]
DEV_QRELS = [("q4", "d3", 1)]


def jsonl(rows: list[dict[str, Any]]) -> str:
    """Rows as JSON Lines text."""
    return "".join(json.dumps(row) + "\n" for row in rows)


def query_line(**metadata: Any) -> str:
    """One ``queries.jsonl`` line with the given metadata."""
    return json.dumps({"_id": "q", "text": "Q", "metadata": metadata}) + "\n"


def qrels_tsv(rows: list[tuple[str, str, int]]) -> str:
    """Qrels rows as BEIR TSV text with its header."""
    return "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in rows)


def write_beir(folder: Path) -> Path:
    """A valid BEIR folder with a test and a dev split."""
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(jsonl(CORPUS), encoding="utf-8")
    (folder / "queries.jsonl").write_text(jsonl(QUERIES), encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(qrels_tsv(TEST_QRELS), encoding="utf-8")
    (folder / "qrels" / "dev.tsv").write_text(qrels_tsv(DEV_QRELS), encoding="utf-8")
    return folder


def hotpot_examples() -> list[dict[str, Any]]:
    """Two valid HotpotQA examples that share the paragraph titled ``Alpha``."""
    alpha = ["Alpha", ["Alpha is a town.", " The Beta flows through it."]]
    return [
        {
            "_id": "h1",
            "question": "Which river flows through the town Alpha?",
            "answer": "Beta",
            "type": "bridge",
            "level": "medium",
            "supporting_facts": [["Alpha", 1], ["Beta", 0], ["Alpha", 0]],
            "context": [alpha, ["Beta", ["Beta is a river.", " It is long."]], ["Gamma", ["A hill."]]],
        },
        {
            "_id": "h2",
            "question": "Are Alpha and Delta both towns?",
            "answer": "yes",
            "type": "comparison",
            "level": "hard",
            "supporting_facts": [["Delta", 0], ["Alpha", 0]],
            "context": [["Delta", ["Delta is a town."]], alpha],
        },
    ]


def write_hotpot(path: Path, examples: list[Any], fmt: str = "array") -> Path:
    """Examples as a JSON array (one example per line) or as JSON Lines."""
    if fmt == "array":
        text = "[\n" + ",\n".join(json.dumps(e) for e in examples) + "\n]\n"
    else:
        text = "".join(json.dumps(e) + "\n" for e in examples)
    path.write_text(text, encoding="utf-8")
    return path


def assert_names(error: DataFormatError, path: Path, line: int | None, field: str | None) -> None:
    """The error names the file, the line and the field."""
    assert error.path == str(path)
    assert str(path) in str(error)
    assert error.line == line
    assert error.field == field
    if line is not None:
        assert f"{path}:{line}" in str(error)
    if field is not None:
        assert repr(field) in str(error)


# --------------------------------------------------------------------------- BEIR: valid input


def test_beir_load_valid(tmp_path: Path) -> None:
    dataset = load_beir(write_beir(tmp_path / "mini"), split="test")
    assert dataset.name == "mini"
    assert dataset.corpus.doc_ids == ["d1", "2", "d3"]
    assert dataset.corpus["d1"].metadata == {"source": "wiki", "date": "1"}
    assert dataset.corpus["d3"].title == ""
    assert [q.qid for q in dataset.evalset] == ["q1", "q2"]  # q3 unjudged, q4 only in dev
    q1, q2 = dataset.evalset
    assert q1.gold_doc_ids == ("d1", "2")
    assert (q1.type, q1.answer, q1.answer_aliases, q1.min_hops) == ("bridge", "Beta", ("the Beta",), 2)
    assert q1.metadata == {"level": "hard"}
    assert q1.split == "test"
    assert q2.gold_doc_ids == ("2",)  # grade 0 is not gold
    assert (q2.type, q2.answer, q2.answer_aliases, q2.min_hops) == ("unlabeled", "a river", ("river",), 1)


def test_beir_skips_blank_lines_and_takes_name(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "mini")
    (folder / "corpus.jsonl").write_text("\n" + jsonl(CORPUS).replace("\n", "\n\n"), encoding="utf-8")
    dataset = load_beir(folder, name="renamed")
    assert (dataset.name, len(dataset.corpus), len(dataset.evalset)) == ("renamed", 3, 2)


@pytest.mark.parametrize(
    ("files", "split", "expected"),
    [
        (["test.tsv", "dev.tsv"], None, "test"),
        (["dev.tsv"], None, "dev"),
        (["test.tsv", "dev.tsv"], "dev", "dev"),
    ],
)
def test_beir_split_selection(tmp_path: Path, files: list[str], split: str | None, expected: str) -> None:
    folder = write_beir(tmp_path / "mini")
    for path in (folder / "qrels").iterdir():
        if path.name not in files:
            path.unlink()
    dataset = load_beir(folder, split=split)
    assert dataset.evalset.splits == [expected]


def test_beir_ambiguous_split_lists_available(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "mini")
    (folder / "qrels" / "test.tsv").rename(folder / "qrels" / "train.tsv")
    with pytest.raises(DataFormatError, match=re.escape("['dev', 'train']")):
        load_beir(folder)
    with pytest.raises(DataFormatError, match=r"no qrels for split 'test'.*\['dev', 'train'\]"):
        load_beir(folder, split="test")


def test_beir_round_trip(tmp_path: Path) -> None:
    loaded = load_beir(write_beir(tmp_path / "mini"))
    save_beir(loaded, tmp_path / "copy")
    again = load_beir(tmp_path / "copy")
    assert list(again.corpus) == list(loaded.corpus)
    assert list(again.evalset) == list(loaded.evalset)


def test_beir_round_trip_keeps_clashing_metadata_and_warns_on_unjudged(tmp_path: Path) -> None:
    docs = [Document(doc_id="a", title="A", text="x", metadata={"text": "meta", "_id": 7, "tags": ["t"]})]
    questions = [
        Question(qid="q", text="Q?", gold_doc_ids=("a",), min_hops=0, metadata={"k": {"n": 1}}),
        Question(qid="u", text="Unanswerable?"),
    ]
    dataset = Dataset(Corpus(docs), EvalSet(questions), name="tiny")
    with pytest.warns(UserWarning, match="1 question"):
        save_beir(dataset, tmp_path / "tiny")
    again = load_beir(tmp_path / "tiny")
    assert list(again.corpus) == docs
    assert list(again.evalset) == questions[:1]


# --------------------------------------------------------------------------- BEIR: malformed input

BEIR_BAD_LINES = [
    # (file, text, message pattern, line, field)
    ("corpus.jsonl", '{"_id": "d1", "text": "x"}\n{"_id": "d2", "text": \n', "invalid JSON", 2, None),
    ("corpus.jsonl", '{"_id": "d1", "text": "x"}\n\n[1, 2]\n', "expected a JSON object, got array", 3, None),
    ("corpus.jsonl", '{"title": "T", "text": "x"}\n', "missing", 1, "_id"),
    ("corpus.jsonl", '{"_id": 1.5, "text": "x"}\n', "non-empty string or an integer", 1, "_id"),
    ("corpus.jsonl", '{"_id": "d1", "text": 5}\n', "must be a string, got number", 1, "text"),
    ("corpus.jsonl", '{"_id": "d1", "title": "T"}\n', "missing", 1, "text"),
    ("corpus.jsonl", jsonl(CORPUS) + '{"_id": "d1", "text": "x"}', r"duplicate _id 'd1' \(first on", 4, "_id"),
    ("corpus.jsonl", "\n  \n", "no documents", None, None),
    ("queries.jsonl", jsonl(QUERIES) + '{"_id": "q2", "text": "Q"}\n', "duplicate _id 'q2'", 5, "_id"),
    ("queries.jsonl", '{"_id": "q1", "metadata": {}}\n', "missing", 1, "text"),
    ("queries.jsonl", '{"_id": "q1", "text": "Q", "metadata": [1]}', "must be an object", 1, "metadata"),
    ("queries.jsonl", query_line(min_hops=-1), "greater than or equal", 1, "metadata.min_hops"),
    ("queries.jsonl", query_line(answers="a"), "list of strings", 1, "metadata.answers"),
    ("queries.jsonl", query_line(answer="a", answers=["b"]), "not both", 1, "metadata.answers"),
    ("queries.jsonl", query_line(type=3), "valid string", 1, "metadata.type"),
    ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\n", "expected 3 tab-separated", 2, None),
    ("qrels/test.tsv", "q1\td1\thigh\n", "must be an integer, got 'high'", 1, "score"),
    ("qrels/test.tsv", qrels_tsv([("q1", "d1", 1), ("q1", "d9", 1)]), "unknown document id", 3, "corpus-id"),
    ("qrels/test.tsv", qrels_tsv([("q9", "d1", 1)]), "unknown query id 'q9'", 2, "query-id"),
    ("qrels/test.tsv", qrels_tsv([("q1", "d1", 1), ("q1", "d1", 0)]), "duplicate judge", 3, "corpus-id"),
    ("qrels/test.tsv", "query-id\tcorpus-id\tscore\n", "no judgements", None, None),
]


@pytest.mark.parametrize(("file", "text", "pattern", "line", "field"), BEIR_BAD_LINES)
def test_beir_malformed_file(
    tmp_path: Path, file: str, text: str, pattern: str, line: int | None, field: str | None
) -> None:
    folder = write_beir(tmp_path / "mini")
    (folder / file).write_text(text, encoding="utf-8")
    with pytest.raises(DataFormatError, match=pattern) as caught:
        load_beir(folder, split="test")
    assert_names(caught.value, folder / file, line, field)


def test_beir_not_utf8_names_the_line(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "mini")
    (folder / "corpus.jsonl").write_bytes(b'{"_id": "d1", "text": "x"}\n{"_id": "caf\xe9"}\n')
    with pytest.raises(DataFormatError, match="not valid UTF-8") as caught:
        load_beir(folder)
    assert_names(caught.value, folder / "corpus.jsonl", 2, None)


def _remove(relative: str) -> Callable[[Path], Path]:
    """A corruption that deletes ``relative`` from the folder and returns the path the error names."""

    def corrupt(folder: Path) -> Path:
        target = folder / relative
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
        return target

    return corrupt


def _empty_qrels(folder: Path) -> Path:
    """A corruption that leaves the qrels folder without files."""
    for path in (folder / "qrels").iterdir():
        path.unlink()
    return folder / "qrels"


@pytest.mark.parametrize(
    ("corrupt", "pattern"),
    [
        (_remove(""), "BEIR folder not found"),
        (_remove("corpus.jsonl"), "file not found"),
        (_remove("queries.jsonl"), "file not found"),
        (_remove("qrels"), "qrels folder not found"),
        (_empty_qrels, "no qrels files"),
    ],
)
def test_beir_missing_parts(tmp_path: Path, corrupt: Callable[[Path], Path], pattern: str) -> None:
    folder = write_beir(tmp_path / "mini")
    named = corrupt(folder)
    with pytest.raises(DataFormatError, match=pattern) as caught:
        load_beir(folder)
    assert_names(caught.value, named, None, None)


# --------------------------------------------------------------------------- HotpotQA: valid input


@pytest.mark.parametrize("fmt", ["array", "jsonl"])
def test_hotpotqa_load_valid(tmp_path: Path, fmt: str) -> None:
    path = write_hotpot(tmp_path / "hotpot_mini.json", hotpot_examples(), fmt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dataset = load_hotpotqa(path)
    assert dataset.name == "hotpot_mini"
    assert dataset.corpus.doc_ids == ["Alpha", "Beta", "Gamma", "Delta"]  # Alpha shared, loaded once
    alpha = dataset.corpus["Alpha"]
    assert (alpha.title, alpha.text) == ("Alpha", "Alpha is a town. The Beta flows through it.")
    assert alpha.metadata == {"source": "wikipedia"}
    h1, h2 = dataset.evalset
    assert (h1.qid, h1.type, h1.answer, h1.min_hops) == ("h1", "bridge", "Beta", 2)
    assert h1.gold_doc_ids == ("Alpha", "Beta")  # deduplicated, in order
    assert (h2.type, h2.answer, h2.gold_doc_ids) == ("comparison", "yes", ("Delta", "Alpha"))
    assert h1.metadata == {"level": "medium", "source_format": "hotpotqa", "layout": "original"}
    assert {q.split for q in dataset.evalset} == {"dev"}


def test_hotpotqa_defaults_and_split(tmp_path: Path) -> None:
    example = hotpot_examples()[0]
    del example["type"], example["level"]
    path = write_hotpot(tmp_path / "h.jsonl", [example], "jsonl")
    dataset = load_hotpotqa(path, name="hp", split="train")
    (question,) = dataset.evalset
    assert (dataset.name, question.type, question.split) == ("hp", "unlabeled", "train")
    assert question.metadata == {"source_format": "hotpotqa", "layout": "original"}


def test_hotpotqa_title_conflict_keeps_first_and_warns_once(tmp_path: Path) -> None:
    examples = hotpot_examples()
    examples[1]["context"][1] = ["Alpha", ["Alpha is a village."]]
    with pytest.warns(HotpotQAConflictWarning, match="1 paragraph.*'Alpha'") as record:
        dataset = load_hotpotqa(write_hotpot(tmp_path / "h.json", examples))
    assert len(record) == 1
    assert dataset.corpus["Alpha"].text == "Alpha is a town. The Beta flows through it."


def test_hotpotqa_through_beir_round_trip(tmp_path: Path) -> None:
    dataset = load_hotpotqa(write_hotpot(tmp_path / "h.json", hotpot_examples()))
    again = load_beir(save_beir(dataset, tmp_path / "beir", split="dev"))
    assert list(again.corpus) == list(dataset.corpus)
    assert list(again.evalset) == list(dataset.evalset)


# --------------------------------------------------------------------------- HotpotQA: malformed input


def _mutate(change: Callable[[dict[str, Any]], Any]) -> Callable[[list[dict[str, Any]]], list[Any]]:
    """A corruption that applies ``change`` to the second example."""

    def corrupt(examples: list[dict[str, Any]]) -> list[Any]:
        change(examples[1])
        return examples

    return corrupt


HOTPOT_BAD_EXAMPLES = [
    # (corruption of the two examples, message pattern, field); the second example is the bad one
    (lambda ex: [ex[0], 1], "expected a JSON object, got number", None),
    (_mutate(lambda e: e.update(_id=["h2"])), "must be a non-empty string or an integer, got array", "_id"),
    (lambda ex: [ex[0], ex[0]], "duplicate id 'h1', already in example 0", "_id"),
    (_mutate(lambda e: e.update(question=3)), "must be a string, got number", "question"),
    (_mutate(lambda e: e.update(question="")), "must not be empty", "question"),
    (_mutate(lambda e: e.pop("answer")), "missing", "answer"),
    (_mutate(lambda e: e.update(type=3)), "must be a string, got number", "type"),
    (_mutate(lambda e: e.update(context="Alpha")), "must be a list, got string", "context"),
    (_mutate(lambda e: e.update(context={"Alpha": []})), r"missing \(in example 1\)", "context.title"),
    (_mutate(lambda e: e["context"].append(["Zeta", "a sentence"])), r"\[title, \[sentence", "context[2]"),
    (_mutate(lambda e: e["context"].append(["Zeta"])), r"\[title, \[sentence.*got \['Zeta'\]", "context[2]"),
    (_mutate(lambda e: e.pop("supporting_facts")), "missing", "supporting_facts"),
    (_mutate(lambda e: e["supporting_facts"].insert(0, ["Delta", "0"])), "index", "supporting_facts[0]"),
]


@pytest.mark.parametrize("fmt", ["array", "jsonl"])
@pytest.mark.parametrize(("corrupt", "pattern", "field"), HOTPOT_BAD_EXAMPLES)
def test_hotpotqa_malformed_example(
    tmp_path: Path, fmt: str, corrupt: Callable[[list[Any]], list[Any]], pattern: str, field: str | None
) -> None:
    path = write_hotpot(tmp_path / "h.json", corrupt(hotpot_examples()), fmt)
    with pytest.raises(DataFormatError, match=pattern) as caught:
        load_hotpotqa(path)
    assert_names(caught.value, path, None if fmt == "array" else 2, field)


VALID_LINE = json.dumps(hotpot_examples()[0]).encode() + b"\n"
HOTPOT_BAD_FILES = [
    # (file bytes, message pattern, line)
    (b"", "empty file", None),
    (b" \n\t\n", "empty file", None),
    (b"[]", "no examples", None),
    (b'"examples"', "expected a JSON array of examples, JSON Lines of objects or a Parquet file", None),
    (b'[\n{"_id": "h1",\n "question": }\n]', "invalid JSON: Expecting value", 3),
    (VALID_LINE + b'{"_id": \n', "invalid JSON", 2),
    (VALID_LINE + b"\n[1]\n", "expected a JSON object, got array", 3),
    (b'[\n{"_id": "caf\xe9"}\n]', "not valid UTF-8", 2),
    (VALID_LINE + b'{"_id": "caf\xe9"}\n', "not valid UTF-8", 2),
]


@pytest.mark.parametrize(("content", "pattern", "line"), HOTPOT_BAD_FILES)
def test_hotpotqa_malformed_file(tmp_path: Path, content: bytes, pattern: str, line: int | None) -> None:
    path = tmp_path / "h.json"
    path.write_bytes(content)
    with pytest.raises(DataFormatError, match=pattern) as caught:
        load_hotpotqa(path)
    assert_names(caught.value, path, line, None)


def test_hotpotqa_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match="file not found") as caught:
        load_hotpotqa(tmp_path / "nope.json")
    assert_names(caught.value, tmp_path / "nope.json", None, None)


@pytest.mark.parametrize("load", [load_hotpotqa, load_musique])
@pytest.mark.parametrize(("content", "pattern"), [(b"[]", "no examples"),
                                                  (b"[1]", r"expected a JSON object, got number \(in example 0\)")])
def test_every_qa_loader_says_the_same_of_no_examples_and_of_an_example_not_an_object(
        tmp_path: Path, load: Callable[..., Any], content: bytes, pattern: str) -> None:
    """One check of a QA file's examples (at least one, each a JSON object) for every multi-hop QA loader."""
    path = tmp_path / "qa.json"
    path.write_bytes(content)
    with pytest.raises(DataFormatError, match=pattern):
        load(path)


def test_an_integer_id_is_an_integer_and_never_a_boolean_in_every_layout(tmp_path: Path) -> None:
    """One rule for an integer id (fields.is_int: an int, not a bool), in a BEIR corpus and in a QA file alike."""
    from rag_lab.loaders.beir import read_corpus

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": 7, "text": "x"}\n', encoding="utf-8")
    assert list(read_corpus(corpus)) == ["7"]
    corpus.write_text('{"_id": true, "text": "x"}\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match="must be a non-empty string or an integer, got boolean"):
        read_corpus(corpus)
    examples = hotpot_examples()
    examples[0]["_id"] = True
    with pytest.raises(DataFormatError, match="must be a non-empty string or an integer, got boolean"):
        load_hotpotqa(write_hotpot(tmp_path / "h.json", examples, "array"))


@pytest.mark.parametrize(("given", "read"), [(7, "7"), ("q-1", "q-1"), (True, None), ("  ", None), ([1], None)])
def test_a_questions_file_and_a_qa_file_take_the_same_ids(tmp_path: Path, given: Any, read: str | None) -> None:
    """One rule for an id given in a file (fields.id_text: an integer's digits, a non-empty string; anything else an
    error in the same words) for a documents folder's questions.jsonl and a HotpotQA file alike."""
    from rag_lab.loaders.documents_folder import load_documents_folder

    (tmp_path / "documents").mkdir()
    (tmp_path / "documents" / "a.txt").write_text("Alpha is a city.", encoding="utf-8")
    row = {"id": given, "question": "Where?", "answer": "Alpha"}
    (tmp_path / "questions.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    examples = hotpot_examples()
    examples[0]["_id"] = given
    hotpot = write_hotpot(tmp_path / "h.json", examples, "array")
    if read is None:
        for load in (lambda: load_documents_folder(tmp_path), lambda: load_hotpotqa(hotpot)):
            with pytest.raises(DataFormatError, match="must be a non-empty string or an integer, got"):
                load()
    else:
        assert load_documents_folder(tmp_path).evalset.questions[0].qid == read
        assert load_hotpotqa(hotpot).evalset.questions[0].qid == read
