"""Field readers shared by the multi-hop QA loaders: typed fields with errors that say where,
and the stable ids given to records that have none."""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Container
from pathlib import Path
from typing import Any

from rag_lab.errors import DataFormatError
from rag_lab.loaders.jsonl import json_type
from rag_lab.loaders.rows import Where, read_records

#: Record keys that may hold the example id, in order of preference.
ID_KEYS = ("_id", "id")


def examples(path: Path, records: list[tuple[Where, Any]] | None = None) -> list[tuple[Where, Any]]:
    """The examples of a QA file with their locations: ``records`` when they were read already, else the file's;
    a file with none is an error."""
    records = list(read_records(path)) if records is None else records
    if not records:
        raise DataFormatError(path, "no examples")
    return records


def example_object(example: Any, where: Where) -> dict[str, Any]:
    """``example``, which must be a JSON object."""
    if not isinstance(example, dict):
        raise where.error(f"expected a JSON object, got {json_type(example)}")
    return example


def string(record: dict[str, Any], key: str, where: Where, non_empty: bool = False) -> str:
    """The record's required string field ``key``."""
    if key not in record:
        raise where.error("missing", key)
    value = record[key]
    if not isinstance(value, str):
        raise where.error(f"must be a string, got {json_type(value)}", key)
    if non_empty and not value.strip():
        raise where.error("must not be empty", key)
    return value


def listing(record: dict[str, Any], key: str, where: Where) -> list[Any]:
    """The record's required list field ``key``."""
    if key not in record:
        raise where.error("missing", key)
    if not isinstance(record[key], list):
        raise where.error(f"must be a list, got {json_type(record[key])}", key)
    return record[key]


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: What an id given in a QA file or a questions file must be, as its errors say.
ID_EXPECTED = "a non-empty string or an integer"


def id_text(value: Any) -> str | None:
    """An id as text: an integer's digits, a non-empty string as it is; None when ``value`` is neither."""
    if is_int(value):
        return str(value)
    return value if isinstance(value, str) and value.strip() else None


def record_id(record: dict[str, Any], where: Where) -> str | None:
    """The record's id from ``_id`` or ``id`` (integers become strings); ``None`` when it has neither."""
    for key in ID_KEYS:
        if key in record and record[key] is not None:
            value = record[key]
            if (text := id_text(value)) is None:
                raise where.error(f"must be {ID_EXPECTED}, got {json_type(value)} {value!r:.60}", key)
            return text
    return None


def derived_id(question: str, taken: Container[str]) -> str:
    """A stable id for a record without one: ``q-`` and 16 hex digits of the SHA-1 of the question
    text, with ``-2``, ``-3``... appended when the same question text occurs again."""
    base = "q-" + hashlib.sha1(question.encode("utf-8")).hexdigest()[:16]
    qid, n = base, 1
    while qid in taken:
        n += 1
        qid = f"{base}-{n}"
    return qid


class QuestionIds:
    """The ids a QA file's examples have taken so far: a given id must be new, a missing one is derived."""

    def __init__(self) -> None:
        self.first: dict[str, Where] = {}
        self.derived = 0

    def take(self, qid: str | None, question: str, where: Where, field: str) -> str:
        """``qid``, checked to be new, or when None the :func:`derived_id` of the question text."""
        if qid is None:
            qid, self.derived = derived_id(question, self.first), self.derived + 1
        elif qid in self.first:
            raise where.error(f"duplicate id {qid!r}, already in {self.first[qid].describe()}", field)
        self.first[qid] = where
        return qid

    def notes(self, path: Path, total: int) -> list[str]:
        """The one-line note a loader attaches (and warns) when it derived ids; none when it did not."""
        notes = [f"{self.derived} of {total} question(s) had no '_id' or 'id'; each got the stable id "
                 "'q-' + the first 16 hex digits of the SHA-1 of its question text"] if self.derived else []
        for note in notes:
            warnings.warn(f"{path}: {note}", stacklevel=3)
        return notes
