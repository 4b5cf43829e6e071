"""Structured-output validation: parse → validate → repair → deterministic fallback. The outcome is returned with
its reason: ``valid``, ``repaired`` (a valid object found inside the text), ``fallback``, ``invalid`` (no
fallback given; ``parsed`` is None) or ``text`` (no schema asked for)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ValidationError

Outcome = Literal["valid", "repaired", "fallback", "invalid", "text"]
Fallback = BaseModel | Callable[[str], BaseModel] | None

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_MAX_CANDIDATES = 64


class StructuredOutcome(NamedTuple):
    parsed: BaseModel | None
    outcome: Outcome
    reason: str


def _why(exc: ValidationError | json.JSONDecodeError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg} at char {exc.pos}"
    err = exc.errors()[0]
    if err["type"] == "json_invalid":
        return f"invalid JSON: {err['msg'].removeprefix('Invalid JSON: ')}"
    where = ".".join(str(p) for p in err["loc"]) or "object"
    return f"schema violation at {where}: {err['msg']}"


def embedded_objects(text: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Every decodable JSON object ``{...}`` embedded in ``text``, in order, with the text it was decoded from
    (at most :data:`_MAX_CANDIDATES`)."""
    decoder = json.JSONDecoder()
    seen = 0
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            obj, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):  # the json module recurses on deep nesting
            continue
        if isinstance(obj, dict):
            yield obj, text[start:end]
            seen += 1
            if seen >= _MAX_CANDIDATES:
                return


def _candidates(text: str) -> Iterator[tuple[str, str]]:
    """JSON objects embedded in ``text``: fenced blocks first, then every decodable ``{...}``."""
    for match in _FENCE.finditer(text):
        yield "code fence", match.group(1).strip()
    for _, span in embedded_objects(text):
        yield "embedded object", span


def validate_output(text: str, schema: type[BaseModel] | None, fallback: Fallback = None) -> StructuredOutcome:
    """Validate a model's raw ``text`` against ``schema`` (see the module doc for outcomes)."""
    if schema is None:
        return StructuredOutcome(None, "text", "")
    try:
        return StructuredOutcome(schema.model_validate_json(text.strip()), "valid", "")
    except (ValidationError, ValueError) as exc:
        first_error = _why(exc) if isinstance(exc, ValidationError | json.JSONDecodeError) else str(exc)
    for where, candidate in _candidates(text):
        try:
            parsed = schema.model_validate_json(candidate)
        except (ValidationError, ValueError):
            continue
        return StructuredOutcome(parsed, "repaired", f"{first_error}; used the {where}")
    if fallback is None:
        return StructuredOutcome(None, "invalid", first_error)
    parsed = fallback(first_error) if callable(fallback) else fallback
    return StructuredOutcome(parsed, "fallback", first_error)
