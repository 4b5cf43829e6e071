"""Checking a sweep's stated findings against its candidates, before any question runs: each finding's ``candidate``
and ``reference`` must pick one config each, and two different ones, by the rule of
:meth:`rag_lab.experiments.engine.results.SweepResult.reference` (:func:`check_claims`: ``rag-lab sweep`` before it
runs, ``rag-lab report`` on a run directory; the error names the finding and its field)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from rag_lab.errors import ConfigError
from rag_lab.pipeline.config import stored_parameters

_ABSENT = object()


def completed(flat: Mapping[str, Any]) -> dict[str, Any]:
    """A flat config as a run directory stores and reads it back: JSON values, with the parameters left out of
    ids at their default put back and the retired ones dropped (:func:`~rag_lab.pipeline.config.stored_parameters`)."""
    return stored_parameters(json.loads(json.dumps(dict(flat))))


def check_claims(claims: Sequence[Mapping[str, Any]], configs: Mapping[str, Mapping[str, Any]],
                 base: Mapping[str, Any], source: str) -> None:
    """Raise a :class:`~rag_lab.errors.ConfigError` unless every claim's ``candidate`` and ``reference`` pick
    exactly one of ``configs`` (config id → ``{"config": flat config, "candidate_ids": [...]}``), and two
    different ones; ``base``: the base config (a claim without reference compares to it); ``source`` names the
    sweep file or run directory in the message."""
    if not configs:
        return
    for number, claim in enumerate(claims, start=1):
        what = f"{source}: finding {number}" + (f" ({claim['claim']})" if claim.get("claim") else "")
        cand = _pick(configs, claim["candidate"], "candidate", what)
        ref = _pick(configs, claim.get("reference"), "reference", what, base)
        if cand == ref:
            raise ConfigError(f"{what}: candidate {_as_written(claim['candidate'])} and reference "
                              f"{_as_written(claim.get('reference'))} pick the same config ({cand}); a finding "
                              "compares two different configs")


def _pick(configs: Mapping[str, Mapping[str, Any]], choice: Any, role: str, what: str,
          base: Mapping[str, Any] | None = None) -> str:
    """The config id ``choice`` picks (``role``: which field of the finding, for the message)."""
    if choice is None:
        found = next((k for k, c in configs.items() if c["config"] == base), None)
        return found if found is not None else next(iter(configs))
    if isinstance(choice, str):
        found = next((k for k, c in configs.items() if choice == k or choice in c["candidate_ids"]), None)
        if found is None:
            raise ConfigError(f"{what}: {role} {choice!r} is no candidate or config id of the sweep; name it by its "
                              "settings instead, e.g. {round_cap.max_rounds: 1}")
        return found
    matches = [k for k, c in configs.items() if all(c["config"].get(key, _ABSENT) == v for key, v in choice.items())]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ConfigError(f"{what}: {role} {_as_written(choice)} matches no candidate of the sweep "
                          f"({_values_swept(configs, choice)}); pick one the grid has")
    raise ConfigError(f"{what}: {role} {_as_written(choice)} matches {len(matches)} candidates; add settings that "
                      "pick exactly one")


def _values_swept(configs: Mapping[str, Mapping[str, Any]], choice: Mapping[str, Any]) -> str:
    """What the candidates have for each key ``choice`` names: ``round_cap.max_rounds is 1 or 2``."""
    parts = []
    for key in choice:
        values = [c["config"].get(key, _ABSENT) for c in configs.values()]
        seen = list(dict.fromkeys(json.dumps(v) for v in values if v is not _ABSENT))
        parts.append(f"{key} is {' or '.join(seen)} in its candidates" if seen else f"no candidate has {key}")
    return "; ".join(parts)


def _as_written(choice: Any) -> str:
    """A finding's ``candidate`` or ``reference`` as a sweep file writes it: ``{round_cap.max_rounds: 7}``."""
    if choice is None:
        return "(the base config)"
    if isinstance(choice, str):
        return repr(choice)
    return yaml.safe_dump(dict(choice), default_flow_style=True, sort_keys=False, width=1000).strip()
