"""Read the metadata of a GGUF model file (no llama.cpp needed): architecture, name, chat template.
:func:`read_metadata` reads the key/value pairs and keeps only the length of arrays (the tokenizer's
vocabularies), 0.09 s for a 1.1 GB file where PyPI ``gguf``'s reader takes 7-12 s; a file that is not GGUF or is
cut short raises :class:`~rag_lab.errors.ConfigError`."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import IO, Any

from rag_lab.errors import ConfigError

_MAGIC = b"GGUF"
#: GGUF value types → struct format of a scalar (8 string, 9 array are handled apart).
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_MAX_KEYS = 100_000


class _Reader:
    def __init__(self, fh: IO[bytes], path: Path) -> None:
        self.fh, self.path = fh, path

    def take(self, n: int) -> bytes:
        data = self.fh.read(n)
        if len(data) != n:
            raise ConfigError(f"{self.path}: GGUF file is cut short (wanted {n} bytes at offset {self.fh.tell()})")
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        return self.take(self.unpack("<Q")).decode("utf-8", errors="replace")

    def value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item, count = self.unpack("<I"), self.unpack("<Q")
            if item in _SCALARS:
                self.fh.seek(struct.calcsize(_SCALARS[item]) * count, 1)
            elif item == _STRING:
                for _ in range(count):
                    self.fh.seek(self.unpack("<Q"), 1)
            else:
                for _ in range(count):
                    self.value(item)
            return f"<array of {count}>"
        raise ConfigError(f"{self.path}: unknown GGUF value type {kind} at offset {self.fh.tell()}")


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The key/value metadata of the GGUF file at ``path`` (arrays as ``"<array of N>"``)."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            reader = _Reader(fh, path)
            if reader.take(4) != _MAGIC:
                raise ConfigError(f"{path}: not a GGUF file (it does not start with 'GGUF')")
            version = reader.unpack("<I")
            if version not in (2, 3):
                raise ConfigError(f"{path}: unsupported GGUF version {version}")
            reader.unpack("<Q")  # tensor count
            n_kv = reader.unpack("<Q")
            if n_kv > _MAX_KEYS:
                raise ConfigError(f"{path}: implausible GGUF metadata count {n_kv}")
            meta: dict[str, Any] = {"GGUF.version": version}
            for _ in range(n_kv):
                key = reader.string()
                meta[key] = reader.value(reader.unpack("<I"))
            return meta
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the GGUF file: {exc}") from None


def is_gguf(path: str | Path) -> bool:
    """Whether ``path`` is a file that starts with the GGUF magic."""
    try:
        with Path(path).open("rb") as fh:
            return fh.read(4) == _MAGIC
    except OSError:
        return False
