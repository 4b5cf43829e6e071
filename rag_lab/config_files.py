"""Reading YAML/JSON configuration files and explaining validation errors, for every config kind; the one rule
for the encoding of a file a user writes (:func:`utf8_text`: UTF-8, a byte-order mark accepted), which the
dataset loaders follow too."""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from rag_lab.errors import ConfigError

#: A field whose name says it holds a secret (``api_key``, ``token``, ``password`` …): its value is never echoed.
SECRET_FIELD = re.compile(r"(^|[_.-])(api[_-]?key|key|token|secret|password|passwd|credentials?|auth)($|[_.-])",
                          re.IGNORECASE)
#: A value that looks like a credential whatever its field (``sk-…`` API keys, bearer tokens).
SECRET_VALUE = re.compile(r"^\s*((sk|pk|rk)-[A-Za-z0-9_-]{6,}|bearer\s)", re.IGNORECASE)
#: What a rejected secret's error says instead of its value.
SECRET_HINT = "a secret, not shown: rag-lab reads API keys from the environment only; set OPENAI_API_KEY instead"


#: What every error about a file's encoding asks the user to do.
SAVE_AS_UTF8 = "save it as UTF-8"
#: Byte-order marks of the encodings that are not UTF-8 (UTF-32 first: its little-endian mark starts like UTF-16's).
FOREIGN_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
                (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


class NotUtf8(ValueError):
    """Bytes that are not UTF-8 text: ``reason`` says what they look like (ending in :data:`SAVE_AS_UTF8`),
    ``line`` is the 1-based line of the first bad byte (None when the whole file is in another encoding)."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


def utf8_text(raw: bytes, first: bool = True) -> str:
    """``raw`` decoded as UTF-8, a leading UTF-8 byte-order mark dropped (``first``: the bytes start a file).
    A UTF-16 or UTF-32 file (told by its byte-order mark, or without one by its NUL bytes) and bytes that are
    not UTF-8 raise :class:`NotUtf8`, never a text with stray characters."""
    if first:
        check_no_foreign_bom(raw)
        raw = raw.removeprefix(codecs.BOM_UTF8)
    if b"\x00" in raw:
        line = raw.count(b"\n", 0, raw.index(b"\x00")) + 1
        raise NotUtf8(f"NUL bytes: the file looks like UTF-16 without a byte-order mark, or is not text; "
                      f"{SAVE_AS_UTF8}", line)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NotUtf8(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {column}: {exc.reason}); "
                      f"{SAVE_AS_UTF8}", line) from None


def check_no_foreign_bom(head: bytes) -> None:
    """Raise :class:`NotUtf8` when the file starting with ``head`` is UTF-16 or UTF-32 by its byte-order mark."""
    for bom, encoding in FOREIGN_BOMS:
        if head.startswith(bom):
            raise NotUtf8(f"the file is {encoding} (it starts with the byte-order mark {bom.hex(' ')}); "
                          f"{SAVE_AS_UTF8}")


def read_mapping(path: str | Path, what: str) -> dict[str, Any]:
    """The mapping stored in a YAML or JSON (``.json``) file; ``what`` names the file kind in errors
    (e.g. "config", "sweep"). An empty YAML file is an empty mapping; a byte-order mark is accepted in both,
    and a file in another encoding than UTF-8 is an error naming it (:func:`utf8_text`)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what} file ({exc.strerror})") from None
    try:
        text = utf8_text(raw)
    except NotUtf8 as exc:
        where = path if exc.line is None else f"{path}:{exc.line}"
        raise ConfigError(f"{where}: cannot read {what} file: {exc.reason}") from None
    kind = "JSON" if path.suffix == ".json" else "YAML"
    try:
        data = json.loads(text) if kind == "JSON" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: not valid {kind}: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a {what} file must hold a mapping, got {type(data).__name__}")
    return data


def explain_validation(exc: ValidationError, what: str) -> str:
    """One line naming every field at fault: ``invalid <what>: crag.upper: ... (got 2.0)``; a secret's value
    is never shown (:func:`shown_input`)."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or what
        got = f" ({shown_input(where, err['input'])})" if "input" in err and not isinstance(err["input"], dict) else ""
        parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}{got}")
    return f"invalid {what}: " + "; ".join(parts)


def is_secret(where: str, value: object) -> bool:
    """Whether the value at the dotted field ``where`` is (or may be) a credential: by the field's name, or by
    the look of a string in it."""
    if SECRET_FIELD.search(where.rsplit(".", 1)[-1]):
        return True
    values = value if isinstance(value, list | tuple) else [value]
    return any(isinstance(v, str) and SECRET_VALUE.match(v) for v in values)


def shown_input(where: str, value: object) -> str:
    """How an error shows the rejected ``value`` of field ``where``: ``got 2.0``, or for a secret
    :data:`SECRET_HINT` (never the value)."""
    return SECRET_HINT if is_secret(where, value) else f"got {value!r}"
