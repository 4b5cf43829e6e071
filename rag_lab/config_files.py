"""Reading YAML/JSON configuration files and explaining validation errors, for every config kind."""

from __future__ import annotations

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


def read_mapping(path: str | Path, what: str) -> dict[str, Any]:
    """The mapping stored in a YAML or JSON (``.json``) file; ``what`` names the file kind in errors
    (e.g. "config", "sweep"). An empty YAML file is an empty mapping."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what} file ({exc.strerror})") from None
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
