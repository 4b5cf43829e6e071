"""Line-by-line reading of JSON Lines files with errors that name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rag_lab.config_files import NotUtf8, utf8_text
from rag_lab.errors import DataFormatError


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line of a JSON Lines file.

    Raises :class:`DataFormatError` for a missing file, bytes that are not UTF-8,
    invalid JSON, or a JSON value that is not an object."""
    for line_no, line in read_lines(path):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, f"invalid JSON: {exc.msg} (column {exc.colno})", line=line_no) from None
        if not isinstance(value, dict):
            raise DataFormatError(path, f"expected a JSON object, got {json_type(value)}", line=line_no)
        yield line_no, value


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for error messages."""
    if value is None:
        return "null"
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return names.get(type(value), type(value).__name__)


def read_text(path: Path) -> str:
    """A whole UTF-8 file (a byte-order mark accepted); bytes that are not UTF-8 are an error naming the file and the
    line (:func:`utf8_text`)."""
    try:
        return utf8_text(path.read_bytes())
    except NotUtf8 as exc:
        raise DataFormatError(path, exc.reason, line=exc.line) from None


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, text)`` for each line of a UTF-8 file (a byte-order mark accepted), without its
    line ending; a line that is not UTF-8 is an error naming the file and the line (:func:`utf8_text`)."""
    if not path.is_file():
        raise DataFormatError(path, "file not found")
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                text = utf8_text(raw, first=line_no == 1)
            except NotUtf8 as exc:
                raise DataFormatError(path, exc.reason, line=None if exc.line is None else line_no) from None
            yield line_no, text.rstrip("\r\n")
