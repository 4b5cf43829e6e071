"""Shared test set-up: offline model loading and a repo-local cache that persists between runs."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAG_LAB_CACHE", str(Path(__file__).resolve().parent.parent / ".cache" / "rag_lab"))


@pytest.fixture(scope="session")
def world():
    """The shipped world dataset, loaded once per test session (read it, do not change it)."""
    from rag_lab.loaders import load_dataset

    return load_dataset("world")


def _weight(item) -> int:
    """0 for a test that starts a local model or is marked early, 1 for a notebook nbmake runs or a test marked slow
    or notebook, 2 for the rest."""
    if item.get_closest_marker("local_model") or item.get_closest_marker("early"):
        return 0
    heavy = item.path.suffix == ".ipynb" or item.get_closest_marker("slow") or item.get_closest_marker("notebook")
    return 1 if heavy else 2


def load_factor() -> float:
    """How much longer a test may take on this machine now: 1 on an idle machine, growing with the load that was
    already running when the session started (1-minute load average per core), at most 4. A second CPU-bound job
    on two cores makes it 1.5: the timeouts hold on a busy machine instead of failing a test that is only slow."""
    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return 1.0
    return min(4.0, 1.0 + max(0.0, load))


def pytest_configure(config):
    # one folder of replays for the session, the xdist workers and the notebooks' kernels (they inherit it): each
    # recorded sweep is replayed once and read by every test and notebook that replays it (lessons.notebook.REPLAYS_ENV)
    if not hasattr(config, "workerinput") and "RAG_LAB_REPLAYS" not in os.environ:
        config._rag_lab_replays = os.environ["RAG_LAB_REPLAYS"] = tempfile.mkdtemp(prefix="rag_lab_replays_")
    factor = float(os.environ.get("RAG_LAB_TIMEOUT_FACTOR", load_factor()))
    config._rag_lab_timeout_factor = factor
    os.environ["RAG_LAB_TIMEOUT_FACTOR"] = str(factor)   # for the tests' own waits (tests/timing.py) and workers
    if getattr(config.option, "nbmake_timeout", None):
        config.option.nbmake_timeout = int(config.option.nbmake_timeout * factor)


def pytest_unconfigure(config):
    replays = getattr(config, "_rag_lab_replays", None)
    if replays:
        shutil.rmtree(replays, ignore_errors=True)
        os.environ.pop("RAG_LAB_REPLAYS", None)


def pytest_collection_modifyitems(session, config, items):
    """The heavy tests first (a stable sort: within a weight, the collection order). pytest-xdist's
    ``--dist loadfile`` hands out files in the order their first test appears, so the files that take
    a minute start at once on both workers and the quick ones fill the gaps at the end, instead of a
    one-minute file starting last while the other worker idles. Every test's timeout (its marker's, else the
    configured one) is scaled by :func:`load_factor` (``RAG_LAB_TIMEOUT_FACTOR`` overrides it)."""
    items.sort(key=_weight)
    factor = getattr(config, "_rag_lab_timeout_factor", 1.0)
    default = float(config.getini("timeout") or 0)
    for item in items:
        marker = item.get_closest_marker("timeout")
        seconds = float(marker.args[0]) if marker and marker.args else float(marker.kwargs.get("timeout", default)) \
            if marker else default
        if seconds:
            item.add_marker(pytest.mark.timeout(seconds * factor), append=False)
