"""Fakes for tests, the project's and yours: a deterministic bag-of-words embedder (no model, no download),
corpus resources whose search is scripted, and a corpus from a ``{doc_id: text}`` mapping. The scripted LLM
backend is :class:`rag_lab.llm.scripted.ScriptedBackend` (also importable from :mod:`rag_lab.testing`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

from rag_lab.index.base import Hits
from rag_lab.pipeline.resources import CorpusResources
from rag_lab.records import Corpus, Document


class HashEmbedder:
    """A deterministic bag-of-words embedder: each word maps to a fixed random unit-ish
    vector (seeded by its hash); a text is the normalized sum of its words' vectors."""

    def __init__(self, dim: int = 64, model_id: str = "test/hash-bow") -> None:
        self.dim = dim
        self.model_id = model_id
        self.calls = 0
        self.texts_embedded = 0
        self._words: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        if word not in self._words:
            seed = int.from_bytes(hashlib.sha256(f"{self.model_id}|{word}".encode()).digest()[:8], "little")
            self._words[word] = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return self._words[word]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace(".", " ").replace("?", " ").split():
                out[row] += self._word(word)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)


class ScriptedResources(CorpusResources):
    """Corpus resources whose search returns scripted hits per query (any retriever kind), given as
    document ids (each document's first chunk is returned). Queries without a script return nothing.
    ``searched`` records every query in order."""

    def __init__(self, corpus: Corpus, hits: Mapping[str, Sequence[str]], embedder=None) -> None:
        super().__init__(corpus, embedder if embedder is not None else HashEmbedder())
        self.scripted = {q: list(ids) for q, ids in hits.items()}
        self.searched: list[str] = []

    def search(self, kind: str, query: str, k: int) -> Hits:
        self.searched.append(query)
        return [(f"{d}#0", 1.0 / (i + 1)) for i, d in enumerate(self.scripted.get(query, [])[:k])]

    def search_vector(self, kind, vector, text, k):
        self.searched.append(f"<vector>{text}")
        return []


def corpus_of(texts: Mapping[str, str], source: str = "wiki") -> Corpus:
    """A corpus of one-chunk documents ``{doc_id: text}`` (titles are the ids)."""
    return Corpus([Document(doc_id=d, title=d, text=t, metadata={"source": source}) for d, t in texts.items()])
