"""Reading a sweep: a YAML/JSON sweep file, a dict or a :class:`~rag_lab.experiments.engine.sweep.SweepSpec`
turned into one validated spec (paths in the file read relative to it), and a spec turned into its replay."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_lab.config_files import read_mapping
from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.sweep import BackendSpec, SweepSpec
from rag_lab.llm.sim.profile import is_profile_file


def load_sweep_spec(source: SweepSpec | Mapping[str, Any] | str | Path) -> SweepSpec:
    """A :class:`SweepSpec` from a spec, a dict, or a YAML/JSON sweep file (whose relative ``base``, profile
    file and cassette are read relative to it; its errors name the file)."""
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
    if _relative(data.get("base")):
        data["base"] = str(path.parent / data["base"])
    if _relative(data.get("pairs_with")):
        data["pairs_with"] = str(path.parent / data["pairs_with"])
    backend = data.get("backend")
    if isinstance(backend, dict):
        backend = dict(backend)
        if _relative(backend.get("profile")) and is_profile_file(backend["profile"]):
            backend["profile"] = str(path.parent / backend["profile"])
        if _relative(backend.get("cassette")):
            backend["cassette"] = str(path.parent / backend["cassette"])
        data["backend"] = backend
    return data


def replay_spec(spec: SweepSpec) -> SweepSpec:
    """``spec`` answered from its backend's cassette alone (same candidates, same questions)."""
    if spec.backend.cassette is None:
        raise ConfigError(f"sweep {spec.name!r} names no cassette to replay (backend.cassette)")
    backend = BackendSpec.model_validate({**spec.backend.model_dump(), "replay": True})
    return spec.model_copy(update={"backend": backend})


def _relative(value: Any) -> bool:
    return isinstance(value, str) and not Path(value).is_absolute()
