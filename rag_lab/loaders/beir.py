"""Load and save datasets in the BEIR folder layout: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``
(a score > 0 marks a gold document; only queries judged in the split become questions, as in BEIR). Any problem
raises :class:`DataFormatError` naming the file, the line and the field. The layout in full: docs/real-data.md."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Container, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rag_lab.errors import ConfigError, DataFormatError
from rag_lab.loaders.fields import is_int
from rag_lab.loaders.jsonl import json_type, read_jsonl, read_lines
from rag_lab.records import Corpus, Dataset, Document, EvalSet, Qrels, Question, relevant_docs

#: Header row of a BEIR qrels file.
QRELS_HEADER: tuple[str, ...] = ("query-id", "corpus-id", "score")

_DOC_KEYS = frozenset({"_id", "title", "text", "metadata"})
_QUERY_KEYS = frozenset({"_id", "text", "metadata"})
_QUESTION_META_KEYS = frozenset({"type", "answer", "answers", "answer_aliases", "min_hops"})
_LAYOUT = "a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv"
#: Record field name -> the name the user sees in the BEIR file.
_FILE_FIELD = {"doc_id": "_id", "qid": "_id"} | {k: f"metadata.{k}" for k in _QUESTION_META_KEYS}

R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)


def is_beir_folder(path: Path) -> bool:
    """Whether ``path`` holds ``corpus.jsonl``, ``queries.jsonl`` and a ``qrels`` folder."""
    return (path / "corpus.jsonl").is_file() and (path / "queries.jsonl").is_file() and (path / "qrels").is_dir()


def load_beir(folder: str | Path, split: str | None = None, name: str | None = None) -> Dataset:
    """Read a BEIR folder into a :class:`Dataset` named ``name`` (default: the folder name).

    ``split`` picks ``qrels/<split>.tsv``; when it is ``None`` the only qrels file is
    used, else ``test.tsv``, else it is an error that lists the available splits."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataFormatError(folder, "BEIR folder not found")
    corpus_path, queries_path = folder / "corpus.jsonl", folder / "queries.jsonl"
    for path in (corpus_path, queries_path):
        if not path.is_file():
            raise DataFormatError(path, f"file not found; {_LAYOUT}")
    split, qrels_path = _qrels_file(folder, split)

    documents = read_corpus(corpus_path)
    questions = _read_records(queries_path, lambda row, qid, path, line: _question(row, qid, split, path, line))
    qrels = _read_qrels(qrels_path, documents, questions)

    name = name or folder.resolve().name
    judged = (
        question.model_copy(update={"gold_doc_ids": relevant_docs(qrels[qid])})
        for qid, question in questions.items()
        if qid in qrels
    )
    corpus = Corpus(documents.values(), name=name)
    return Dataset(corpus, EvalSet(judged, name=name), name=name, source=str(folder))


def save_beir(dataset: Dataset, folder: str | Path, split: str = "test") -> Path:
    """Write ``dataset`` as a BEIR folder and return the folder.

    Every question is written to ``queries.jsonl`` and its gold documents, graded 1, to ``qrels/<split>.tsv``; loading
    the folder back gives each question ``split=<split>``. Questions without gold documents cannot appear in qrels, so
    they do not load back; a warning says how many there are."""
    qrels = dataset.evalset.qrels()
    qrels_rows = _qrels_rows(qrels)
    query_rows = [_query_row(q) for q in dataset.evalset]
    folder = Path(folder)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    _write_jsonl(folder / "corpus.jsonl", (_document_row(doc) for doc in dataset.corpus))
    _write_jsonl(folder / "queries.jsonl", query_rows)
    with (folder / "qrels" / f"{split}.tsv").open("w", encoding="utf-8", newline="\n") as handle:
        handle.writelines("\t".join(row) + "\n" for row in qrels_rows)
    unjudged = len(dataset.evalset) - len(qrels)
    if unjudged:
        warnings.warn(
            f"{unjudged} question(s) of {dataset.name!r} have no gold documents; BEIR qrels "
            f"cannot list them, so load_beir({str(folder)!r}) will not return them",
            stacklevel=2,
        )
    return folder


def _qrels_file(folder: Path, split: str | None) -> tuple[str, Path]:
    """The split to load and its qrels file, following the rules of :func:`load_beir`."""
    qrels_dir = folder / "qrels"
    if not qrels_dir.is_dir():
        raise DataFormatError(qrels_dir, f"qrels folder not found; {_LAYOUT}")
    available = sorted(p.stem for p in qrels_dir.glob("*.tsv") if p.is_file())
    if not available:
        raise DataFormatError(qrels_dir, "no qrels files (<split>.tsv) in the qrels folder")
    if split is None:
        if len(available) == 1:
            split = available[0]
        elif "test" in available:
            split = "test"
        else:
            raise DataFormatError(qrels_dir, f"several splits and none is 'test'; choose one with split=: {available}")
    elif split not in available:
        raise DataFormatError(qrels_dir, f"no qrels for split {split!r}; available: {available}")
    return split, qrels_dir / f"{split}.tsv"


def read_corpus(path: Path) -> dict[str, Document]:
    """The documents of a BEIR ``corpus.jsonl`` by ``_id``, in file order (an empty corpus, or a document with
    empty text, is an error)."""
    documents = _read_records(path, _document)
    if not documents:
        raise DataFormatError(path, "no documents; the corpus is empty")
    return documents


def _read_records(path: Path, parse: Callable[[dict[str, Any], str, Path, int], R]) -> dict[str, R]:
    """Parse each line of a BEIR JSONL file into a record, keyed by its unique ``_id``, in order."""
    records: dict[str, R] = {}
    first_line: dict[str, int] = {}
    for line_no, row in read_jsonl(path):
        record_id = _record_id(row, path, line_no)
        if record_id in first_line:
            raise DataFormatError(path, f"duplicate _id {record_id!r} (first on line {first_line[record_id]})",
                                  line=line_no, field="_id")
        first_line[record_id] = line_no
        records[record_id] = parse(row, record_id, path, line_no)
    return records


def _record_id(row: dict[str, Any], path: Path, line: int) -> str:
    """The row's ``_id`` as a non-empty string (integer ids are converted)."""
    if "_id" not in row:
        raise DataFormatError(path, "missing", line=line, field="_id")
    value = row["_id"]
    if is_int(value):
        return str(value)
    if not isinstance(value, str) or not value:
        message = f"must be a non-empty string or an integer, got {json_type(value)} {value!r}"
        raise DataFormatError(path, message, line=line, field="_id")
    return value


def _text(row: dict[str, Any], path: Path, line: int) -> str:
    """The row's required string ``text``."""
    if "text" not in row:
        raise DataFormatError(path, "missing", line=line, field="text")
    text = row["text"]
    if not isinstance(text, str):
        raise DataFormatError(path, f"must be a string, got {json_type(text)}", line=line, field="text")
    return text


def _metadata(row: dict[str, Any], reserved: frozenset[str], path: Path, line: int) -> dict[str, Any]:
    """The row's keys outside ``reserved``, merged with its ``metadata`` object (which wins)."""
    nested = row.get("metadata", {})
    if not isinstance(nested, dict):
        raise DataFormatError(path, f"must be an object, got {json_type(nested)}", line=line, field="metadata")
    return {k: v for k, v in row.items() if k not in reserved} | nested


def _document(row: dict[str, Any], doc_id: str, path: Path, line: int) -> Document:
    """A document from one ``corpus.jsonl`` row."""
    title = row.get("title")
    if title is None:
        title = ""
    elif not isinstance(title, str):
        raise DataFormatError(path, f"must be a string, got {json_type(title)}", line=line, field="title")
    text = _text(row, path, line)
    if not text.strip():
        raise DataFormatError(path, f"empty: document {doc_id!r} has no text, so no retriever can find it; give it "
                                    "its text or remove the line", line=line, field="text")
    metadata = _metadata(row, _DOC_KEYS, path, line)
    return _validated(Document, path, line, doc_id=doc_id, title=title, text=text, metadata=metadata)


def _question(row: dict[str, Any], qid: str, split: str, path: Path, line: int) -> Question:
    """A question (without gold documents yet) from one ``queries.jsonl`` row."""
    text = _text(row, path, line)
    metadata = _metadata(row, _QUERY_KEYS, path, line)
    fields = _question_fields(metadata, path, line)
    return _validated(Question, path, line, qid=qid, text=text, split=split, metadata=metadata, **fields)


def _question_fields(metadata: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    """Pop the question fields out of a query's ``metadata``; return them as keyword arguments."""
    fields = {key: metadata.pop(key) for key in _QUESTION_META_KEYS if key in metadata}
    if "answers" not in fields:
        return fields
    answers = fields.pop("answers")
    if "answer" in fields or "answer_aliases" in fields:
        message = "give either 'answers' or 'answer'/'answer_aliases', not both"
        raise DataFormatError(path, message, line=line, field="metadata.answers")
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise DataFormatError(path, "must be a list of strings", line=line, field="metadata.answers")
    if answers:
        fields["answer"], fields["answer_aliases"] = answers[0], answers[1:]
    return fields


def _validated(model: type[M], path: Path, line: int, **fields: Any) -> M:
    """``model(**fields)``, validated strictly; a validation error becomes a DataFormatError."""
    try:
        return model.model_validate(fields, strict=True)
    except ValidationError as exc:
        raise validation_error(path, line, exc, _FILE_FIELD) from None


def validation_error(path: Path, line: int, exc: ValidationError, names: Mapping[str, str] = {}) -> DataFormatError:
    """A record's first validation error, naming the file, the line and the field (``names``: record field →
    the name the file gives it)."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"]]
    field = ".".join([names.get(loc[0], loc[0]), *loc[1:]]) if loc else None
    return DataFormatError(path, error["msg"], line=line, field=field)


def _read_qrels(path: Path, doc_ids: Container[str], query_ids: Container[str]) -> Qrels:
    """Read a qrels TSV file, checking every row against the known document and query ids."""
    qrels: Qrels = {}
    for line_no, line in read_lines(path):
        cells = line.split("\t")
        if not line.strip() or (line_no == 1 and tuple(cells) == QRELS_HEADER):
            continue
        qid, doc_id, grade = _qrels_row(cells, path, line_no, doc_ids, query_ids)
        grades = qrels.setdefault(qid, {})
        if doc_id in grades:
            message = f"duplicate judgement of {qid!r} / {doc_id!r}"
            raise DataFormatError(path, message, line=line_no, field="corpus-id")
        grades[doc_id] = grade
    if not qrels:
        raise DataFormatError(path, "no judgements; the qrels file has no rows")
    return qrels


def _qrels_row(cells: list[str], path: Path, line: int, doc_ids: Container[str],
               query_ids: Container[str]) -> tuple[str, str, int]:
    """One qrels row as ``(query id, document id, grade)``, its ids known."""
    if len(cells) != len(QRELS_HEADER):
        message = f"expected 3 tab-separated columns (query-id, corpus-id, score), got {len(cells)}"
        raise DataFormatError(path, message, line=line)
    qid, doc_id, score = cells
    try:
        grade = int(score)
    except ValueError:
        raise DataFormatError(path, f"must be an integer, got {score!r}", line=line, field="score") from None
    if qid not in query_ids:
        message = f"unknown query id {qid!r} (not in queries.jsonl)"
        raise DataFormatError(path, message, line=line, field="query-id")
    if doc_id not in doc_ids:
        message = f"unknown document id {doc_id!r} (not in corpus.jsonl)"
        raise DataFormatError(path, message, line=line, field="corpus-id")
    return qid, doc_id, grade


def _document_row(doc: Document) -> dict[str, Any]:
    """A ``corpus.jsonl`` row; metadata keys that clash with BEIR keys go in nested ``metadata``."""
    row: dict[str, Any] = {"_id": doc.doc_id, "title": doc.title, "text": doc.text}
    row |= {k: v for k, v in doc.metadata.items() if k not in _DOC_KEYS}
    clashing = {k: v for k, v in doc.metadata.items() if k in _DOC_KEYS}
    if clashing:
        row["metadata"] = clashing
    return row


def _query_row(question: Question) -> dict[str, Any]:
    """A ``queries.jsonl`` row carrying the question fields in its ``metadata``."""
    clashing = sorted(_QUESTION_META_KEYS & question.metadata.keys())
    if clashing:
        raise ConfigError(
            f"question {question.qid!r}: metadata keys {clashing} clash with the question "
            "fields that BEIR stores in metadata"
        )
    fields = {"type": question.type, "answer": question.answer, "answer_aliases": list(question.answer_aliases),
              "min_hops": question.min_hops}
    return {"_id": question.qid, "text": question.text, "metadata": question.metadata | fields}


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write one JSON object per line, UTF-8, non-ASCII kept as is."""
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def _qrels_rows(qrels: Qrels) -> list[tuple[str, ...]]:
    """The rows of a qrels TSV file, header first; ids holding tabs or line breaks are an error."""
    rows = [(qid, doc, str(grade)) for qid, grades in qrels.items() for doc, grade in grades.items()]
    for qid, doc_id, _ in rows:
        if any(c in qid + doc_id for c in "\t\r\n"):
            raise ConfigError(f"id {qid!r} or {doc_id!r} holds a tab or line break; TSV cannot store it")
    return [QRELS_HEADER, *rows]
