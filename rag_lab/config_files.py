"""Reading YAML/JSON configuration files and explaining validation errors, for every config kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from rag_lab.errors import ConfigError


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
    """One line naming every field at fault: ``invalid <what>: crag.upper: ... (got 2.0)``."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or what
        got = f" (got {err['input']!r})" if "input" in err and not isinstance(err["input"], dict) else ""
        parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}{got}")
    return f"invalid {what}: " + "; ".join(parts)
