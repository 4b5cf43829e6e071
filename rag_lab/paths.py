"""Where rag_lab reads shipped data and keeps its caches."""

from __future__ import annotations

import functools
import importlib.resources
import os
import string
import warnings
from pathlib import Path

#: The repository's ``data/`` folder (shipped synthetic world lives in ``data/world``).
DATA_DIR = Path(__file__).resolve().parent.parent / "data"
#: The repository's ``sweeps/`` folder (the shipped sweep files, e.g. the recorded real-model sweeps).
SWEEPS_DIR = DATA_DIR.parent / "sweeps"


def cache_dir() -> Path:
    """Root of rag_lab's on-disk caches: ``$RAG_LAB_CACHE`` or ``~/.cache/rag_lab``."""
    root = Path(os.environ.get("RAG_LAB_CACHE") or Path.home() / ".cache" / "rag_lab")
    root.mkdir(parents=True, exist_ok=True)
    return root


@functools.cache
def package_text(package: str, name: str) -> str:
    """The text of a file shipped inside a rag_lab package (a template, a schema: package data in
    ``pyproject.toml``), as it is on disk."""
    return importlib.resources.files(package).joinpath(name).read_text(encoding="utf-8")


def template(package: str, name: str) -> string.Template:
    """A ``$name`` template shipped inside ``package`` (``rag_lab.report``'s ``templates/delta_note.html``), its
    file's final newline dropped: the text is what the code used to hold as a literal."""
    return string.Template(package_text(package, name).removesuffix("\n"))


class CacheFullWarning(UserWarning):
    """A cache under :func:`cache_dir` could not be written because its disk is full: the run goes on uncached
    (the same answers, computed again), and says so once."""


_FULL_CACHES: set[str] = set()


def warn_cache_full(path: Path, reason: object) -> None:
    """Say once per cache folder and process that the disk holding the cache at ``path`` is full and the run goes
    on without caching there (each cache in the folder stops writing when it meets the full disk itself)."""
    folder = str(Path(path).resolve().parent)
    if folder not in _FULL_CACHES:
        _FULL_CACHES.add(folder)
        warnings.warn(f"the disk holding the cache folder {folder} is full ({reason}, writing {Path(path).name}); "
                      "going on without caching there: the results are the same, computed again instead of read",
                      CacheFullWarning, stacklevel=3)
