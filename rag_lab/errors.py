"""Errors that tell the user exactly what is wrong and where."""

from __future__ import annotations

from pathlib import Path


class RagLabError(Exception):
    """Base class of rag_lab's own errors."""


class DataFormatError(RagLabError, ValueError):
    """A data file is malformed. The message names the file, the line (if any) and the field."""

    def __init__(
        self,
        path: str | Path,
        message: str,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.reason = message
        where = self.path if line is None else f"{self.path}:{line}"
        what = f"field {field!r}: " if field else ""
        super().__init__(f"{where}: {what}{message}")


class ConfigError(RagLabError, ValueError):
    """A configuration value or file is invalid."""
