"""Precomputed vectors shipped in ``data/`` (``vectors/<model>.npz``: embedding-cache keys, see
:class:`~rag_lab.embedding.EmbeddingCache`, and their float32 vectors, built by :mod:`rag_lab.data_build.vectors`),
which :class:`~rag_lab.embedding.CachedEmbedder` consults after its on-disk cache and before the model. What they
hold and how they are rebuilt: data/README.md, "Precomputed vectors"."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from rag_lab.errors import DataFormatError
from rag_lab.paths import DATA_DIR

#: Where a dataset folder keeps its vectors, one file per model.
FOLDER = "vectors"


def vector_file(dataset_dir: str | Path, model_id: str) -> Path:
    """The file of ``model_id``'s vectors in ``dataset_dir`` (the model name made file-safe)."""
    return Path(dataset_dir) / FOLDER / (re.sub(r"[^A-Za-z0-9._-]+", "_", model_id) + ".npz")


class ShippedVectors:
    """Every shipped vector of one model, from ``vectors/<model>.npz`` in the given dataset folders
    (default: every folder in ``data/``), looked up by embedding-cache key."""

    def __init__(self, model_id: str, dataset_dirs: Iterable[str | Path] | None = None) -> None:
        self.model_id = model_id
        if dataset_dirs is None:  # every folder in data/ (none when the package runs without its data/)
            dataset_dirs = sorted(p for p in DATA_DIR.iterdir() if p.is_dir()) if DATA_DIR.is_dir() else []
        self.files = [f for f in (vector_file(d, model_id) for d in dataset_dirs) if f.is_file()]
        self._rows: dict[str, np.ndarray] = {}
        for path in self.files:
            keys, vectors = read_vector_file(path)
            self._rows.update(zip(keys, vectors, strict=True))

    def get(self, keys: Sequence[str]) -> list[np.ndarray | None]:
        return [self._rows.get(key) for key in keys]

    def __len__(self) -> int:
        return len(self._rows)


@lru_cache(maxsize=8)
def shipped_vectors(model_id: str) -> ShippedVectors:
    """The shipped vectors of ``model_id`` in ``data/`` (read once per process)."""
    return ShippedVectors(model_id)


def read_vector_file(path: Path) -> tuple[list[str], np.ndarray]:
    """(keys, float32 vectors) from one shipped file; a clear error for anything else."""
    try:
        with np.load(path, allow_pickle=False) as data:
            keys, vectors = data["keys"], data["vectors"]
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise DataFormatError(path, f"not a shipped-vectors file (npz with 'keys' and 'vectors'): {exc}") from exc
    if keys.ndim != 1 or vectors.ndim != 2 or len(keys) != len(vectors) or vectors.dtype != np.float32:
        raise DataFormatError(path, f"need 1-d keys and a float32 matrix with one row per key, got keys "
                                    f"{keys.shape} and vectors {vectors.shape} {vectors.dtype}")
    return [k.decode() if isinstance(k, bytes) else str(k) for k in keys.tolist()], vectors
