"""Shared test set-up: offline model loading and a repo-local cache that persists between runs."""

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAG_LAB_CACHE", str(Path(__file__).resolve().parent.parent / ".cache" / "rag_lab"))


def _weight(item) -> int:
    """0 for a test that starts a local model, 1 for a notebook nbmake runs or a test marked slow or notebook,
    2 for the rest."""
    if item.get_closest_marker("local_model"):
        return 0
    heavy = item.path.suffix == ".ipynb" or item.get_closest_marker("slow") or item.get_closest_marker("notebook")
    return 1 if heavy else 2


def pytest_collection_modifyitems(session, config, items):
    """The heavy tests first (a stable sort: within a weight, the collection order). pytest-xdist's
    ``--dist loadfile`` hands out files in the order their first test appears, so the files that take
    a minute start at once on both workers and the quick ones fill the gaps at the end, instead of a
    one-minute file starting last while the other worker idles."""
    items.sort(key=_weight)
