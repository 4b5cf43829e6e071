"""What a configuration changes against another, as a label: the dotted keys that differ
(:func:`config_changes`) written ``round_cap.max_rounds=1, disclosure.disclosed=true`` (:func:`changes_label`).
The results table, the summary, the figures and the widgets label candidates with these."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_MISSING = object()


def config_changes(config: Mapping[str, Any], reference: Mapping[str, Any],
                   order: Iterable[str] = ()) -> dict[str, Any]:
    """The dotted keys whose value in ``config`` (a flat config dict) differs from ``reference``, with
    ``config``'s value; keys in ``order`` first (e.g. a sweep's swept keys), then the rest sorted."""
    keys = [*dict.fromkeys(k for k in order if k in config), *sorted(k for k in config if k not in set(order))]
    return {k: config[k] for k in keys if reference.get(k, _MISSING) != config[k]}


def format_param(value: Any) -> str:
    """A parameter value as written in a label: ``true``/``false``, ``none``, numbers as given, tuples joined."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(format_param(v) for v in value) + ")"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def changes_label(changes: Mapping[str, Any], same: str = "base") -> str:
    """``round_cap.max_rounds=1, disclosure.disclosed=true``; ``same`` when nothing changed."""
    return ", ".join(f"{k}={format_param(v)}" for k, v in changes.items()) or same
