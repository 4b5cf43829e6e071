"""The configs of a sweep's candidates: read back as stored (:func:`completed`), which one a choice picks
(:func:`pick_config`: a stated finding's ``candidate`` and ``reference``, checked before a sweep runs by
:func:`check_claims`, and :meth:`~rag_lab.experiments.engine.results.SweepResult.reference`), and what one changes
against another (:func:`config_changes`), written ``round_cap.max_rounds=1, disclosure.disclosed=true``
(:func:`changes_label`), as the results table, the summary, the figures and the widgets label candidates."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import yaml

from rag_lab.errors import ConfigError, NotFound
from rag_lab.pipeline.config import stored_parameters

_ABSENT = object()


def completed(flat: Mapping[str, Any]) -> dict[str, Any]:
    """A flat config as a run directory stores and reads it back: JSON values, with the parameters left out of
    ids at their default put back and the retired ones dropped (:func:`~rag_lab.pipeline.config.stored_parameters`)."""
    return stored_parameters(json.loads(json.dumps(dict(flat))))


def pick_config(configs: Mapping[str, Mapping[str, Any]], choice: Any, base: Mapping[str, Any],
                what: str) -> tuple[str, str]:
    """The config id ``choice`` picks of ``configs`` (config id → ``{"config": flat config, "candidate_ids":
    [...]}``), and by which rule: None picks the config equal to ``base`` (``base``), or the first when none is
    (``first``); a string, a candidate or config id (``given``); a mapping of dotted keys to values, the one config
    that has all of them (``given``). A choice that picks nothing, or several, is a :class:`~rag_lab.errors.NotFound`
    whose message starts with ``what`` (e.g. ``run: reference``) and says what the candidates have."""
    if choice is None:
        found = next((k for k, c in configs.items() if c["config"] == base), None)
        return (found, "base") if found is not None else (next(iter(configs)), "first")
    if isinstance(choice, str):
        found = next((k for k, c in configs.items() if choice == k or choice in c["candidate_ids"]), None)
        if found is None:
            raise NotFound(f"{what} {choice!r} is no candidate or config id of the sweep; name it by its settings "
                           "instead, e.g. {round_cap.max_rounds: 1}")
        return found, "given"
    if not isinstance(choice, Mapping):
        raise TypeError(f"{what} must be None, a candidate or config id, or a dict of dotted keys, "
                        f"got {type(choice).__name__}")
    matches = [k for k, c in configs.items() if all(c["config"].get(key, _ABSENT) == v for key, v in choice.items())]
    if len(matches) == 1:
        return matches[0], "given"
    if not matches:
        raise NotFound(f"{what} {as_written(choice)} matches no candidate of the sweep "
                       f"({_values_swept(configs, choice)}); pick one the grid has")
    raise NotFound(f"{what} {as_written(choice)} matches {len(matches)} candidates; add settings that pick exactly one")


def check_claims(claims: Sequence[Mapping[str, Any]], configs: Mapping[str, Mapping[str, Any]],
                 base: Mapping[str, Any], source: str) -> None:
    """Raise a :class:`~rag_lab.errors.ConfigError` unless every claim's ``candidate`` and ``reference`` pick
    exactly one of ``configs`` (:func:`pick_config`), and two different ones; ``base``: the base config (a claim
    without reference compares to it); ``source`` names the sweep file or run directory in the message."""
    if not configs:
        return
    for number, claim in enumerate(claims, start=1):
        what = f"{source}: finding {number}" + (f" ({claim['claim']})" if claim.get("claim") else "")
        cand, _ = pick_config(configs, claim["candidate"], base, f"{what}: candidate")
        ref, _ = pick_config(configs, claim.get("reference"), base, f"{what}: reference")
        if cand == ref:
            raise ConfigError(f"{what}: candidate {as_written(claim['candidate'])} and reference "
                              f"{as_written(claim.get('reference'))} pick the same config ({cand}); a finding "
                              "compares two different configs")


def _values_swept(configs: Mapping[str, Mapping[str, Any]], choice: Mapping[str, Any]) -> str:
    """What the candidates have for each key ``choice`` names: ``round_cap.max_rounds is 1 or 2``."""
    parts = []
    for key in choice:
        values = [c["config"].get(key, _ABSENT) for c in configs.values()]
        seen = list(dict.fromkeys(json.dumps(v) for v in values if v is not _ABSENT))
        parts.append(f"{key} is {' or '.join(seen)} in its candidates" if seen else f"no candidate has {key}")
    return "; ".join(parts)


def as_written(choice: Any) -> str:
    """A finding's ``candidate`` or ``reference`` as a sweep file writes it: ``{round_cap.max_rounds: 7}``."""
    if choice is None:
        return "(the base config)"
    if isinstance(choice, str):
        return repr(choice)
    return yaml.safe_dump(dict(choice), default_flow_style=True, sort_keys=False, width=1000).strip()


def config_changes(config: Mapping[str, Any], reference: Mapping[str, Any],
                   order: Iterable[str] = ()) -> dict[str, Any]:
    """The dotted keys whose value in ``config`` (a flat config dict) differs from ``reference``, with
    ``config``'s value; keys in ``order`` first (e.g. a sweep's swept keys), then the rest sorted."""
    keys = [*dict.fromkeys(k for k in order if k in config), *sorted(k for k in config if k not in set(order))]
    return {k: config[k] for k in keys if reference.get(k, _ABSENT) != config[k]}


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
