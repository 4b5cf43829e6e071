"""Read the records of a data file, whatever its container, told from the content: Parquet (``PAR1``), a JSON
array or JSON Lines. Every record comes with a :class:`Where` (file, line, index) that errors point at."""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from rag_lab.config_files import NotUtf8, check_no_foreign_bom
from rag_lab.errors import DataFormatError
from rag_lab.loaders.jsonl import read_jsonl, read_text

_CHUNK = 1 << 16
PARQUET_MAGIC = b"PAR1"
#: The optional dependency group that brings pyarrow.
PARQUET_EXTRA = "parquet"


class Where(NamedTuple):
    """Where a record sits: its file, its line (JSON Lines only) and its 0-based index."""

    path: Path
    line: int | None
    index: int

    def error(self, message: str, field: str | None = None) -> DataFormatError:
        """The error for a problem with this record."""
        return DataFormatError(self.path, f"{message} (in example {self.index})", line=self.line, field=field)

    def describe(self) -> str:
        """``example 3`` or ``example 3, line 4``."""
        return f"example {self.index}" + ("" if self.line is None else f", line {self.line}")


def container(path: Path) -> str:
    """``"parquet"``, ``"json"`` (an array) or ``"jsonl"``, from the file's first bytes."""
    if not path.is_file():
        raise DataFormatError(path, "file not found")
    with path.open("rb") as handle:
        head = handle.read(len(PARQUET_MAGIC))
        if head == PARQUET_MAGIC:
            return "parquet"
        try:
            check_no_foreign_bom(head)
        except NotUtf8 as exc:
            raise DataFormatError(path, exc.reason) from None
        handle.seek(0)
        chunk = handle.read(_CHUNK).removeprefix(codecs.BOM_UTF8)
        while chunk:
            stripped = chunk.lstrip()
            if stripped:
                first = chr(stripped[0])
                if first == "[":
                    return "json"
                if first == "{":
                    return "jsonl"
                message = (
                    "expected a JSON array of examples, JSON Lines of objects or a Parquet file; "
                    f"the file starts with {first!r}"
                )
                raise DataFormatError(path, message)
            chunk = handle.read(_CHUNK)
    raise DataFormatError(path, "empty file")


def read_records(path: Path) -> Iterator[tuple[Where, Any]]:
    """Yield each record of ``path`` with its location (see the module docstring)."""
    kind = container(path)
    if kind == "jsonl":
        for index, (line, record) in enumerate(read_jsonl(path)):
            yield Where(path, line, index), record
        return
    records = _read_parquet(path) if kind == "parquet" else _read_array(path)
    for index, record in enumerate(records):
        yield Where(path, None, index), record


def _read_array(path: Path) -> list[Any]:
    """Parse a whole file holding a JSON array."""
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        message = f"invalid JSON: {exc.msg} (column {exc.colno})"
        raise DataFormatError(path, message, line=exc.lineno) from None


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    """The rows of a Parquet file as plain dicts (nested structs and lists become dicts and lists)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        message = f"reading Parquet needs pyarrow; install the optional extra: pip install 'rag_lab[{PARQUET_EXTRA}]'"
        raise DataFormatError(path, message) from None
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises its own error types for corrupt files
        raise DataFormatError(path, f"not a readable Parquet file ({exc})") from None
    return table.to_pylist()
