"""Process-wide state the widgets share: one loaded dataset and one :class:`CorpusResources` per
dataset (indexes, memoised searches and embeddings), and one long-lived cached simulator backend
per profile, so every widget and every run after the first is fast."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping

from rag_lab.llm.base import LLMBackend
from rag_lab.llm.factory import make_backend, simulator_profile
from rag_lab.loaders import load_dataset
from rag_lab.pipeline import CorpusResources
from rag_lab.records import Dataset

#: The simulator seed of the default backend: the one sweeps use for seed 0, so both share cache entries.
DEFAULT_SEED = 0

_LOCK = threading.Lock()
_DATA: dict[str, tuple[Dataset, CorpusResources]] = {}
_BACKENDS: dict[str, LLMBackend] = {}


def shared_data(dataset: str) -> tuple[Dataset, CorpusResources]:
    """The dataset ``dataset`` (a shipped name or a path) and its corpus resources, built once per process."""
    with _LOCK:
        if dataset not in _DATA:
            loaded = load_dataset(dataset)
            _DATA[dataset] = (loaded, CorpusResources(loaded.corpus))
        return _DATA[dataset]


def simulator_backend(profile: str = "typical", knobs: Mapping[str, float | str] | None = None) -> LLMBackend:
    """The simulator with ``profile`` (and ``knobs`` overridden, as in a sweep's ``backend.knobs``, e.g.
    ``{"synonym_spinning": 0.6}``) behind the default response cache, kept open for the process."""
    key = json.dumps([profile, dict(knobs or {})], sort_keys=True)
    with _LOCK:
        if key not in _BACKENDS:
            resolved = simulator_profile(profile, knobs) if knobs else profile
            _BACKENDS[key] = make_backend("sim", profile=resolved, seed=DEFAULT_SEED)
        return _BACKENDS[key]
