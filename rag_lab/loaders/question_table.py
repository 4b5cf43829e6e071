"""Read the questions of a documents folder from a CSV file (a header row, then one question per row) or a JSON
Lines file (one object per line), with the same fields in both: ``question``, and optionally ``id``, ``answer``,
``aliases``, ``gold_doc_ids``, ``answerable``, ``type``, ``split``, ``min_hops`` and metadata. Every problem is a
:class:`DataFormatError` naming the file, the line and the field. The fields in full: docs/your-own-data.md."""

from __future__ import annotations

import csv
import difflib
import io
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rag_lab.errors import DataFormatError
from rag_lab.loaders.fields import ID_EXPECTED, derived_id, id_text, is_int
from rag_lab.loaders.jsonl import json_type, read_jsonl, read_text
from rag_lab.records import UNLABELED, Question

#: The fields a question row may have (a CSV column ``metadata.<key>`` or a JSON ``metadata`` object adds metadata).
FIELDS = ("id", "question", "answer", "aliases", "gold_doc_ids", "answerable", "type", "split", "min_hops")
LIST_FIELDS = ("aliases", "gold_doc_ids")
#: What separates the items of a list field in a CSV cell.
CSV_LIST_SEPARATOR = "|"
METADATA_PREFIX = "metadata."
#: The type of an unanswerable question that names none (as MuSiQue and the world label them).
UNANSWERABLE = "unanswerable"
_BOOLEAN = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def read_questions(path: Path, doc_ids: Collection[str], split: str) -> tuple[list[Question], list[str]]:
    """The questions of a ``.csv`` or ``.jsonl`` file, in file order, with the loader's notes (ids it derived).
    ``doc_ids`` are the documents a gold id may name; ``split`` labels a question whose row gives none."""
    rows = _csv_rows(path) if path.suffix.lower() == ".csv" else _jsonl_rows(path)
    questions: list[Question] = []
    first_line: dict[str, int] = {}
    derived = 0
    for line, row in rows:
        qid = row.get("id")
        if qid is None:
            derived += 1
            text = row.get("question")
            qid = derived_id(text if isinstance(text, str) else "", first_line)
        elif qid in first_line:
            raise DataFormatError(path, f"duplicate id {qid!r} (first on line {first_line[qid]})", line=line,
                                  field="id")
        first_line[qid] = line
        questions.append(_question(row, qid, doc_ids, split, path, line))
    if not questions:
        raise DataFormatError(path, "no questions: give one question per row")
    notes = [f"{derived} of {len(questions)} question(s) had no 'id'; each got the stable id 'q-' + the first 16 "
             "hex digits of the SHA-1 of its question text"] if derived else []
    return questions, notes


def _question(row: dict[str, Any], qid: str, doc_ids: Collection[str], split: str, path: Path, line: int) -> Question:
    """One question from a row whose values have their JSON types (a CSV row's cells already converted)."""
    def fail(message: str, field: str) -> DataFormatError:
        return DataFormatError(path, message, line=line, field=field)

    text = row.get("question")
    if not isinstance(text, str) or not text.strip():
        raise fail("missing: every row needs its question text", "question")
    answer, aliases = row.get("answer"), row.get("aliases") or []
    gold = row.get("gold_doc_ids") or []
    answerable = row.get("answerable")
    if answerable is False:
        if answer is not None or aliases:
            raise fail("an unanswerable question has no answer: leave 'answer' and 'aliases' empty, or set "
                       "answerable to true", "answer" if answer is not None else "aliases")
        if gold:
            raise fail("an unanswerable question has no gold documents: leave it empty, or set answerable to true",
                       "gold_doc_ids")
    elif answer is None:
        raise fail("missing: give the answer, or mark the question unanswerable (answerable: false)", "answer")
    for doc_id in gold:
        if doc_id not in doc_ids:
            raise fail(f"unknown document {doc_id!r}: no file documents/{doc_id}{_did_you_mean(doc_id, doc_ids)}",
                       "gold_doc_ids")
    fields = {"qid": qid, "text": text.strip(), "answer": answer, "answer_aliases": aliases, "gold_doc_ids": gold,
              "type": row.get("type") or (UNANSWERABLE if answerable is False else UNLABELED),
              "split": row.get("split") or split, "metadata": row.get("metadata") or {}}
    if row.get("min_hops") is not None:
        fields["min_hops"] = row["min_hops"]
    try:
        return Question.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        names = {"qid": "id", "text": "question", "answer_aliases": "aliases"}
        field = names.get(str(error["loc"][0]), str(error["loc"][0])) if error["loc"] else None
        raise DataFormatError(path, error["msg"].removeprefix("Value error, "), line=line, field=field) from None


def _did_you_mean(doc_id: str, doc_ids: Collection[str]) -> str:
    """``; did you mean 'x.md'?`` for the document ids nearest ``doc_id`` (its name with an ending first)."""
    with_ending = [d for d in doc_ids if d.rsplit(".", 1)[0] == doc_id]
    near = with_ending or difflib.get_close_matches(doc_id, list(doc_ids), n=1)
    return f"; did you mean {near[0]!r}? (an id is the file's path under documents/, with its ending)" if near else ""


# --------------------------------------------------------------------------- JSON Lines


def _jsonl_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each line's object, its fields checked for their JSON types."""
    for line, row in read_jsonl(path):
        unknown = sorted(set(row) - set(FIELDS) - {"metadata"})
        if unknown:
            raise DataFormatError(path, f"unknown field(s) {unknown}: a question has {', '.join(FIELDS)} and "
                                        "'metadata' (an object of anything else)", line=line, field=unknown[0])
        yield line, {key: _json_value(key, value, path, line) for key, value in row.items()}


def _json_value(key: str, value: Any, path: Path, line: int) -> Any:
    def wrong(expected: str) -> DataFormatError:
        return DataFormatError(path, f"must be {expected}, got {json_type(value)} {value!r:.60}", line=line, field=key)

    if value is None:
        return None
    if key == "id":
        if (text := id_text(value)) is None:
            raise wrong(ID_EXPECTED)
        return text
    if key in LIST_FIELDS:
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise wrong("a list of non-empty strings")
        return value
    if key == "answerable" and not isinstance(value, bool):
        raise wrong("true or false")
    if key == "min_hops" and not is_int(value):
        raise wrong("an integer")
    if key == "metadata" and not isinstance(value, dict):
        raise wrong("an object")
    if key in ("question", "answer", "type", "split"):
        if not isinstance(value, str):
            raise wrong("a string")
        return value.strip() or None  # an empty answer would be contained in every reply: it counts as none
    return value


# --------------------------------------------------------------------------- CSV


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each data row of a CSV file (header first; blank rows skipped) as the fields a JSON line would have."""
    if not path.is_file():
        raise DataFormatError(path, "file not found")
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [cell.strip() for cell in next(reader)]
    except StopIteration:
        raise DataFormatError(path, "empty file: give a header row (question,answer,...) and one row per "
                                    "question") from None
    except csv.Error as exc:
        raise DataFormatError(path, f"not a valid CSV file ({exc})", line=reader.line_num) from None
    _check_header(header, path)
    try:
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) > len(header):
                raise DataFormatError(path, f"{len(cells)} cells but the header has {len(header)} columns (a cell "
                                            "holding a comma needs double quotes)", line=reader.line_num)
            row = dict(zip(header, cells, strict=False))
            yield reader.line_num, _csv_fields(row, path, reader.line_num)
    except csv.Error as exc:
        raise DataFormatError(path, f"not a valid CSV file ({exc})", line=reader.line_num) from None


def _check_header(header: list[str], path: Path) -> None:
    if "question" not in header:
        hint = (" (columns are separated by commas; this header looks separated by "
                f"{'semicolons' if ';' in header[0] else 'tabs'})"
                if len(header) == 1 and (";" in header[0] or "\t" in header[0]) else "")
        raise DataFormatError(path, f"the header row has no 'question' column{hint}; columns are "
                                    f"{', '.join(FIELDS)} and metadata.<key>", line=1, field="question")
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise DataFormatError(path, "the header names this column twice", line=1, field=name)
        seen.add(name)
        if name not in FIELDS and not (name.startswith(METADATA_PREFIX) and len(name) > len(METADATA_PREFIX)):
            raise DataFormatError(path, f"unknown column: columns are {', '.join(FIELDS)}, and metadata.<key> for "
                                        "anything else to keep", line=1, field=name or "(empty header cell)")


def _csv_fields(row: dict[str, str], path: Path, line: int) -> dict[str, Any]:
    """A CSV row's cells as typed fields: empty cells are absent, lists split at ``|``, answerable a boolean."""
    fields: dict[str, Any] = {}
    metadata: dict[str, str] = {}
    for name, cell in row.items():
        value = cell.strip()
        if not value:
            continue
        if name.startswith(METADATA_PREFIX):
            metadata[name.removeprefix(METADATA_PREFIX)] = value
        elif name in LIST_FIELDS:
            fields[name] = [item.strip() for item in value.split(CSV_LIST_SEPARATOR) if item.strip()]
        elif name == "answerable":
            if value.lower() not in _BOOLEAN:
                raise DataFormatError(path, f"must be true or false (yes/no, 1/0), got {value!r}", line=line, field=name)
            fields[name] = _BOOLEAN[value.lower()]
        elif name == "min_hops":
            if not value.isdigit():
                raise DataFormatError(path, f"must be a whole number, got {value!r}", line=line, field=name)
            fields[name] = int(value)
        else:
            fields[name] = value
    if metadata:
        fields["metadata"] = metadata
    return fields
