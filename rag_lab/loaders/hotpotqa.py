"""Load HotpotQA files (distractor setting) as a :class:`Dataset`.

A HotpotQA file is a JSON array of examples or JSON Lines with one example per
line (told apart by the first non-blank character). An example is an object with
``_id``, ``question``, ``answer``, optional ``type`` and ``level``,
``supporting_facts`` (``[[title, sentence index], ...]``) and ``context``
(``[[title, [sentence, ...]], ...]``).

Every context paragraph becomes a :class:`Document` whose ``doc_id`` is its
(Wikipedia) title, deduplicated across the whole file; the supporting titles of an
example are its question's gold documents. Problems raise :class:`DataFormatError`
naming the file, the line (JSON Lines, or the JSON error's line) and the field;
messages also give the 0-based example index.
"""

from __future__ import annotations

import codecs
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from rag_lab.errors import DataFormatError
from rag_lab.loaders.jsonl import json_type, read_jsonl
from rag_lab.records import UNLABELED, Corpus, Dataset, Document, EvalSet, Question

_CHUNK = 1 << 16


class HotpotQAConflictWarning(UserWarning):
    """Paragraphs with the same title but different text; the first one was kept."""


class _Where(NamedTuple):
    """Where an example sits: its file, its line (JSON Lines only) and its 0-based index."""

    path: Path
    line: int | None
    index: int

    def error(self, message: str, field: str | None = None) -> DataFormatError:
        """The error for a problem with this example."""
        message = f"{message} (in example {self.index})"
        return DataFormatError(self.path, message, line=self.line, field=field)


def load_hotpotqa(path: str | Path, name: str | None = None, split: str = "dev") -> Dataset:
    """Read a HotpotQA file into a :class:`Dataset` named ``name`` (default: the file stem),
    every question in ``split``.

    Paragraphs that repeat a title with different text keep the first text; a single
    :class:`HotpotQAConflictWarning` reports how many there were.
    """
    path = Path(path)
    if not path.is_file():
        raise DataFormatError(path, "file not found")
    documents: dict[str, Document] = {}
    questions: list[Question] = []
    first_seen: dict[str, _Where] = {}
    conflicts: list[str] = []
    for where, example in _examples(path):
        question, paragraphs = _parse_example(example, where, split)
        if question.qid in first_seen:
            first = _describe(first_seen[question.qid])
            raise where.error(f"duplicate _id {question.qid!r}, already in {first}", "_id")
        first_seen[question.qid] = where
        questions.append(question)
        for doc in paragraphs:
            if documents.setdefault(doc.doc_id, doc).text != doc.text:
                conflicts.append(doc.doc_id)
    if not questions:
        raise DataFormatError(path, "no examples")
    if conflicts:
        _warn_conflicts(path, conflicts)
    name = name or path.stem
    corpus = Corpus(documents.values(), name=name)
    return Dataset(corpus, EvalSet(questions, name=name), name=name, source=str(path))


def _describe(where: _Where) -> str:
    """``example 3`` or ``example 3, line 4``."""
    return f"example {where.index}" + ("" if where.line is None else f", line {where.line}")


def _warn_conflicts(path: Path, titles: list[str]) -> None:
    """One warning counting the paragraphs whose text differs from the kept one of that title."""
    distinct = list(dict.fromkeys(titles))
    shown = ", ".join(repr(t) for t in distinct[:3]) + (", ..." if len(distinct) > 3 else "")
    warnings.warn(
        f"{path}: {len(titles)} paragraph(s) repeat a title with different text; "
        f"kept the first text of each of {len(distinct)} title(s): {shown}",
        HotpotQAConflictWarning,
        stacklevel=3,
    )


def _examples(path: Path) -> Iterator[tuple[_Where, Any]]:
    """Yield each example with its location, from a JSON array or a JSON Lines file."""
    first = _first_char(path)
    if not first:
        raise DataFormatError(path, "empty file")
    if first == "[":
        for index, example in enumerate(_read_array(path)):
            yield _Where(path, None, index), example
    elif first == "{":
        for index, (line, example) in enumerate(read_jsonl(path)):
            yield _Where(path, line, index), example
    else:
        message = f"expected a JSON array of examples or JSON Lines of objects, file starts with {first!r}"
        raise DataFormatError(path, message)


def _first_char(path: Path) -> str:
    """The first non-whitespace character of the file after a UTF-8 BOM ('' if there is none)."""
    with path.open("rb") as handle:
        chunk = handle.read(_CHUNK).removeprefix(codecs.BOM_UTF8)
        while chunk:
            stripped = chunk.lstrip()
            if stripped:
                return chr(stripped[0])
            chunk = handle.read(_CHUNK)
    return ""


def _read_array(path: Path) -> list[Any]:
    """Parse a whole file holding a JSON array."""
    raw = path.read_bytes().removeprefix(codecs.BOM_UTF8)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(path, f"not valid UTF-8 ({exc.reason})", line=line) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        message = f"invalid JSON: {exc.msg} (column {exc.colno})"
        raise DataFormatError(path, message, line=exc.lineno) from None


def _parse_example(example: Any, where: _Where, split: str) -> tuple[Question, list[Document]]:
    """The question of one example and its context paragraphs as documents."""
    if not isinstance(example, dict):
        raise where.error(f"expected a JSON object, got {json_type(example)}")
    qid = _string(example, "_id", where, non_empty=True)
    text = _string(example, "question", where, non_empty=True)
    answer = _string(example, "answer", where)
    qtype = _string(example, "type", where, non_empty=True) if "type" in example else UNLABELED
    paragraphs = _context(example, where)
    gold = _supporting_titles(example, where)
    titles = {doc.doc_id for doc in paragraphs}
    for title in gold:
        if title not in titles:
            message = f"supporting title {title!r} is not in the example's context"
            raise where.error(message, "supporting_facts")
    level = {"level": example["level"]} if "level" in example else {}
    metadata = level | {"source_format": "hotpotqa"}
    question = Question(
        qid=qid,
        text=text,
        type=qtype,
        answer=answer,
        gold_doc_ids=gold,
        min_hops=len(gold),
        split=split,
        metadata=metadata,
    )
    return question, paragraphs


def _string(example: dict[str, Any], key: str, where: _Where, non_empty: bool = False) -> str:
    """The example's required string field ``key``."""
    if key not in example:
        raise where.error("missing", key)
    value = example[key]
    if not isinstance(value, str):
        raise where.error(f"must be a string, got {json_type(value)}", key)
    if non_empty and not value:
        raise where.error("must not be empty", key)
    return value


def _list(example: dict[str, Any], key: str, where: _Where) -> list[Any]:
    """The example's required list field ``key``."""
    if key not in example:
        raise where.error("missing", key)
    if not isinstance(example[key], list):
        raise where.error(f"must be a list, got {json_type(example[key])}", key)
    return example[key]


def _context(example: dict[str, Any], where: _Where) -> list[Document]:
    """The example's ``context`` paragraphs as documents (sentences joined, then stripped)."""
    documents = []
    for i, entry in enumerate(_list(example, "context", where)):
        if not (
            isinstance(entry, list)
            and len(entry) == 2
            and isinstance(entry[0], str)
            and entry[0]
            and isinstance(entry[1], list)
            and all(isinstance(s, str) for s in entry[1])
        ):
            message = f"must be [title, [sentence, ...]] with a non-empty title, got {entry!r:.100}"
            raise where.error(message, f"context[{i}]")
        title, sentences = entry
        text = "".join(sentences).strip()
        documents.append(Document(doc_id=title, title=title, text=text, metadata={"source": "wikipedia"}))
    return documents


def _supporting_titles(example: dict[str, Any], where: _Where) -> tuple[str, ...]:
    """The distinct titles of the example's ``supporting_facts``, in order."""
    titles: dict[str, None] = {}
    for i, fact in enumerate(_list(example, "supporting_facts", where)):
        if not (
            isinstance(fact, list)
            and len(fact) == 2
            and isinstance(fact[0], str)
            and isinstance(fact[1], int)
            and not isinstance(fact[1], bool)
        ):
            message = f"must be [title, sentence index], got {fact!r:.100}"
            raise where.error(message, f"supporting_facts[{i}]")
        titles[fact[0]] = None
    return tuple(titles)
