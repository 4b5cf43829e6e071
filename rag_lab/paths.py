"""Where rag_lab reads shipped data and keeps its caches."""

from __future__ import annotations

import os
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
