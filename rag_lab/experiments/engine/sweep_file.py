"""Reading a sweep: a YAML/JSON sweep file, a dict or a :class:`~rag_lab.experiments.engine.sweep.SweepSpec`
turned into one validated spec (every path in the file read relative to it: the dataset, the base config, the
paired sweep, the profile and the cassette), and a spec turned into its replay."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_lab.config_files import read_mapping
from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.sweep import SweepSpec
from rag_lab.llm.sim.profile import is_profile_file
from rag_lab.loaders import is_dataset_name
from rag_lab.loaders.twins import TWINS_SUFFIX


def load_sweep_spec(source: SweepSpec | Mapping[str, Any] | str | Path) -> SweepSpec:
    """A :class:`SweepSpec` from a spec, a dict, or a YAML/JSON sweep file (whose relative ``dataset`` path,
    ``base``, ``pairs_with``, profile file and cassette are read relative to it; its errors name the file)."""
    if isinstance(source, SweepSpec):
        return source
    path = None if isinstance(source, Mapping) else Path(source)
    data = dict(source) if path is None else _file_data(path)
    try:
        return SweepSpec.from_dict(data)
    except ConfigError as exc:
        if path is None:
            raise
        raise ConfigError(f"{path}: {exc}") from None


def _file_data(path: Path) -> dict[str, Any]:
    data = read_mapping(path, "sweep")
    if _relative(data.get("dataset")) and not is_dataset_name(data["dataset"]):
        data["dataset"] = _dataset_path(data["dataset"], path)
    for key in ("base", "pairs_with"):
        if _relative(data.get(key)):
            data[key] = str(path.parent / data[key])
    backend = data.get("backend")
    if isinstance(backend, dict):
        backend = dict(backend)
        if _relative(backend.get("profile")) and is_profile_file(backend["profile"]):
            backend["profile"] = str(path.parent / backend["profile"])
        if _relative(backend.get("cassette")):
            backend["cassette"] = str(path.parent / backend["cassette"])
        data["backend"] = backend
    return data


def _dataset_path(dataset: str, sweep_file: Path) -> str:
    """A relative dataset path of ``sweep_file``, made absolute from the file's folder (so the spec, and the run it
    makes, is the same whatever the current directory). When only the current directory holds it — as
    sweep files were read before every path was relative to the file — the error says so."""
    resolved = os.path.normpath(os.path.abspath(sweep_file.parent / dataset))
    if not any(Path(p).exists() for p in _with_and_without_twins(resolved)) and any(
            Path(p).exists() for p in _with_and_without_twins(dataset)):
        raise ConfigError(f"{sweep_file}: dataset {dataset!r}: no such dataset at {resolved}; a dataset path in a "
                          f"sweep file is read relative to the file, and {dataset!r} is only found relative to the "
                          f"current directory: write {os.path.relpath(os.path.abspath(dataset), sweep_file.parent)!r}"
                          " or an absolute path")
    return resolved


def _with_and_without_twins(path: str) -> tuple[str, ...]:
    return (path, path.removesuffix(TWINS_SUFFIX)) if path.endswith(TWINS_SUFFIX) else (path,)


def replay_spec(spec: SweepSpec) -> SweepSpec:
    """``spec`` answered from its backend's cassette alone (same candidates, same questions)."""
    if spec.backend.cassette is None:
        raise ConfigError(f"sweep {spec.name!r} names no cassette to replay (backend.cassette)")
    return spec.with_backend(replay=True)


def _relative(value: Any) -> bool:
    return isinstance(value, str) and not Path(value).is_absolute()
