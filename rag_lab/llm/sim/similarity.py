"""Embedding similarity for the simulator: the packaged MiniLM behind the on-disk cache, with an
in-process LRU in front so repeated texts (the same evidence shown call after call) cost a dict
lookup. Texts missing from the LRU are embedded in one batch per call."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from rag_lab.embedding import Embedder, default_embedder

#: Similarities are rounded to this many decimals so that the last-bit noise of batched
#: embedding (a text embedded alone vs in a batch) cannot flip a decision.
ROUND_DECIMALS = 4


class Similarity:
    """Cosine similarities between texts, from unit embeddings of ``embedder`` (default: the
    packaged all-MiniLM-L6-v2 with its SQLite cache), memoised in an LRU of ``capacity`` vectors."""

    def __init__(self, embedder: Embedder | None = None, capacity: int = 200_000) -> None:
        self._embedder = embedder
        #: Names the embedder in cache identities; fixed at construction (the default embedder loads
        #: lazily, and a label that changed on first use would split the response cache).
        self.label = embedder.model_id if embedder is not None else "default"
        self.capacity = capacity
        self._lru: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.embedded = 0  # texts sent to the embedder (LRU misses)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = default_embedder()
        return self._embedder

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (one batched embedder call for the ones not in the LRU)."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._lru]
            if missing:
                fresh = self.embedder.embed(missing)
                self.embedded += len(missing)
                for text, vec in zip(missing, fresh, strict=True):
                    self._lru[text] = np.asarray(vec, dtype=np.float32)
            for t in texts:
                self._lru.move_to_end(t)
            while len(self._lru) > self.capacity:
                self._lru.popitem(last=False)
            if not texts:
                return np.zeros((0, 1), dtype=np.float32)
            return np.stack([self._lru[t] for t in texts])

    def to(self, query: str, texts: Sequence[str]) -> list[float]:
        """Cosine similarity of ``query`` with each of ``texts``, rounded (see :data:`ROUND_DECIMALS`)."""
        if not texts:
            return []
        vecs = self.vectors([query, *texts])
        return [round(float(s), ROUND_DECIMALS) for s in vecs[1:] @ vecs[0]]
