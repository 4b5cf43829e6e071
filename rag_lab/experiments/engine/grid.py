"""A parameter grid over dotted policy keys, its distinct candidates, and the stable ids that sweeps
resume by (:func:`config_id`, :func:`short_hash` over :func:`canonical_json`)."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_lab.errors import ConfigError
from rag_lab.pipeline import PipelineConfig

#: Grid keys with this prefix set the backend of a candidate (``backend.profile``, ``backend.knobs.<knob>``).
BACKEND_PREFIX = "backend."

GridSpec = Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]]


class Grid:
    """The candidates of a parameter grid: each one a ``{dotted key: value}`` dict.

    ``spec`` is a dict of dotted keys to non-empty value lists, or a list of such dicts (a
    conditional grid). An empty dict is one candidate that changes nothing (the base config). As in
    scikit-learn's ``ParameterGrid``, a dict's candidates are the product of its value lists with the keys in
    sorted order (the last key varies fastest); a list of dicts yields each dict's candidates in turn:

    >>> grid = Grid({"round_cap.max_rounds": [1, 2], "disclosure.disclosed": [False, True]})
    >>> len(grid), grid[1]
    (4, {'disclosure.disclosed': False, 'round_cap.max_rounds': 2})
    >>> conditional = Grid([{"hyde.enabled": [False]}, {"hyde.enabled": [True], "hyde.n_docs": [2, 4]}])
    >>> list(conditional)
    [{'hyde.enabled': False}, {'hyde.enabled': True, 'hyde.n_docs': 2}, {'hyde.enabled': True, 'hyde.n_docs': 4}]
    """

    def __init__(self, spec: GridSpec) -> None:
        entries = [spec] if isinstance(spec, Mapping) else spec
        if isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence):
            raise ConfigError(f"a grid is a dict of dotted keys to value lists, or a list of such dicts; "
                              f"got {type(spec).__name__}")
        if not entries:
            raise ConfigError("a grid given as a list needs at least one dict")
        self._entries: list[list[tuple[str, list[Any]]]] = [_entry(e, i) for i, e in enumerate(entries)]
        self._sizes = [math.prod(len(v) for _, v in e) for e in self._entries]

    def __len__(self) -> int:
        return sum(self._sizes)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for entry in self._entries:
            keys = [k for k, _ in entry]
            for values in itertools.product(*(v for _, v in entry)):
                yield dict(zip(keys, values, strict=True))

    def __getitem__(self, index: int) -> dict[str, Any]:
        """The candidate at ``index`` (negative indices count from the end), without expanding the grid."""
        n = len(self)
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"grid indices are integers, not {type(index).__name__}")
        if not -n <= index < n:
            raise IndexError(f"grid index {index} out of range for a grid of {n} candidates")
        index %= n
        for entry, size in zip(self._entries, self._sizes, strict=True):
            if index < size:
                params = {}
                for key, values in reversed(entry):  # the last key varies fastest
                    index, pos = divmod(index, len(values))
                    params[key] = values[pos]
                return dict(sorted(params.items()))
            index -= size
        raise AssertionError("unreachable: index was range-checked")

    def __repr__(self) -> str:
        return f"Grid({len(self)} candidates in {len(self._entries)} dict(s))"

    @property
    def keys(self) -> list[str]:
        """Every dotted key the grid sets anywhere, sorted."""
        return sorted({k for entry in self._entries for k, _ in entry})

    def resolve(self, base: PipelineConfig, backend: Any = None) -> list[GridCandidate]:
        """Validate every candidate against ``base`` and return the distinct configs, in grid order.

        Unknown keys and invalid values raise :class:`ConfigError` naming the candidate, before
        anything runs. Candidates that resolve to the same config (typically the baseline value
        listed in several dicts of a one-factor-at-a-time grid) **collapse** into the first one;
        its ``params`` become the union of the duplicates' params (they agree, since the configs
        are equal) and ``grid_indices`` lists every grid position it stands for.

        Keys under ``backend.`` (:data:`BACKEND_PREFIX`) set the candidate's backend instead of a policy:
        ``backend`` is the sweep's :class:`~rag_lab.experiments.engine.sweep.BackendSpec`, and each candidate's is
        ``backend.with_settings(...)``. Its ``flat`` config then holds those keys too, and its id hashes them."""
        backend_keys = [k for k in self.keys if k.startswith(BACKEND_PREFIX)]
        if backend_keys and backend is None:
            raise ConfigError(f"grid keys {backend_keys} set the backend: resolve the grid with the sweep's backend")
        check_keys(base, [k for k in self.keys if k not in backend_keys], "grid key")
        unique: dict[str, GridCandidate] = {}
        for index, params in enumerate(self):
            policy = {k: v for k, v in params.items() if k not in backend_keys}
            settings = {k.removeprefix(BACKEND_PREFIX): v for k, v in params.items() if k in backend_keys}
            try:
                config = base.with_params(policy)
                spec = backend.with_settings(settings) if settings else backend
            except ConfigError as exc:
                raise ConfigError(f"grid candidate {index} {params}: {exc}") from None
            flat = {**config.identity(), **(spec.flat(backend_keys) if backend_keys else {})}
            digest = short_hash(flat) if backend_keys else config_id(config)
            merged = {**unique[digest].params, **params} if digest in unique else params
            indices = (*unique[digest].grid_indices, index) if digest in unique else (index,)
            unique[digest] = GridCandidate(config_id=digest, params=merged, config=config, grid_indices=indices,
                                           backend=spec if backend_keys else None, flat=flat)
        return list(unique.values())


@dataclass(frozen=True)
class GridCandidate:
    """One distinct config of a grid: the params the grid set, the resolved config and its id."""

    config_id: str
    params: dict[str, Any]
    config: PipelineConfig
    grid_indices: tuple[int, ...]
    #: The candidate's own backend when the grid sets ``backend.*`` keys (None: the sweep's).
    backend: Any = None
    #: Every dotted key's value: the config's, and the ``backend.*`` keys the grid sets.
    flat: dict[str, Any] | None = None


def _entry(entry: Any, position: int) -> list[tuple[str, list[Any]]]:
    where = f"grid dict {position}"
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: expected a dict of dotted keys to value lists, got {type(entry).__name__}")
    items = []
    for key in sorted(entry):
        values = entry[key]
        if not isinstance(key, str):
            raise ConfigError(f"{where}: keys are dotted strings like 'crag.upper', got {key!r}")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise ConfigError(f"{where}, key {key!r}: expected a list of values, got {values!r}")
        if not values:
            raise ConfigError(f"{where}, key {key!r}: the value list is empty")
        items.append((key, list(values)))
    return items


def check_keys(base: PipelineConfig, keys: Sequence[str], what: str) -> None:
    """Raise a :class:`ConfigError` naming the first of ``keys`` that ``base`` has no setting for (``what``: the
    error's start, e.g. ``grid key``), before anything runs."""
    for key in keys:
        try:
            base.get(key)
        except ConfigError as exc:
            raise ConfigError(f"{what} {key!r}: {exc}") from None


def canonical_json(value: Any) -> str:
    """Sorted-key, compact JSON (tuples become lists): the text that identities are hashed from."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_jsonable)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"cannot serialise {type(value).__name__} in a sweep identity")


def short_hash(value: Any, length: int = 12) -> str:
    """The first ``length`` hex digits of SHA-256 over :func:`canonical_json` of ``value``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:length]


def config_id(config: PipelineConfig) -> str:
    """A stable short id of a resolved pipeline config (every parameter, not just the swept ones)."""
    return short_hash(config.identity())


