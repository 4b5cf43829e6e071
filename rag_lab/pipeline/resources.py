"""Shared, read-only retrieval resources for a corpus: chunks, indexes and relevance scores.

One :class:`CorpusResources` serves every pipeline candidate of a sweep: indexes are built once
per retriever kind, query results and relevance scores are memoised, and embeddings go through
the on-disk cache, so candidates that differ only downstream reuse all of it."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import numpy as np

from rag_lab.chunking import ChunkingConfig, chunk_corpus, chunk_text_for_embedding
from rag_lab.embedding import Embedder, default_embedder
from rag_lab.index import DenseIndex, HybridIndex, SearchIndex, make_index
from rag_lab.index.base import Hits
from rag_lab.records import Chunk, Corpus

_WORD = re.compile(r"[a-z0-9][a-z0-9_\-.%#@]*")
STOPWORDS = frozenset((
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "are", "was", "were", "be", "been", "by",
    "with", "at", "from", "as", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "does", "do",
    "did", "can", "could", "should", "would", "will", "it", "its", "this", "that", "these", "those", "there", "their",
    "them", "they", "we", "our", "us", "you", "your", "i", "me", "my", "has", "have", "had", "not", "no", "yes",
    "than", "then", "so", "if", "about", "into", "over", "under", "again", "any", "all", "both", "each", "more",
    "most", "other", "some", "such", "only", "own", "same", "too", "very", "just", "now", "today", "currently",
    "current"))


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` without stop words (for lexical relevance)."""
    return {w.strip(".") for w in _WORD.findall(text.lower())} - STOPWORDS - {""}


class CorpusResources:
    """Chunks of a corpus and everything computed from them that pipelines share."""

    def __init__(self, corpus: Corpus, embedder: Embedder | None = None, chunking: ChunkingConfig | None = None):
        self.corpus = corpus
        self.embedder = embedder if embedder is not None else default_embedder()
        self.chunks: list[Chunk] = chunk_corpus(corpus, chunking)
        self.chunk = {c.chunk_id: c for c in self.chunks}
        self._indexes: dict[str, SearchIndex] = {}
        self._hits: dict[tuple[str, str, int], Hits] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.RLock()

    # --- documents ---------------------------------------------------------------------------

    def source_of(self, chunk_id: str) -> str:
        """The source type (``metadata["source"]``) of a chunk's document; ``""`` if unset."""
        return str(self.corpus[self.chunk[chunk_id].doc_id].metadata.get("source", ""))

    def doc_of(self, chunk_id: str) -> str:
        return self.chunk[chunk_id].doc_id

    # --- search ------------------------------------------------------------------------------

    def index(self, kind: str) -> SearchIndex:
        with self._lock:
            if kind not in self._indexes:
                self._indexes[kind] = make_index(kind, self.embedder)  # kinds that do not embed ignore it
                self._indexes[kind].build(self.chunks)
            return self._indexes[kind]

    def search(self, kind: str, query: str, k: int) -> Hits:
        """The ``k`` best chunks for ``query`` (memoised per retriever, query and k)."""
        key = (kind, query, k)
        with self._lock:
            if key not in self._hits:
                self._hits[key] = self.index(kind).search([query], k)[0]
            return self._hits[key]

    def search_vector(self, kind: str, vector: np.ndarray, text: str, k: int) -> Hits:
        """Search with a ready embedding (HyDE). Dense kinds use the vector; BM25 uses ``text``;
        hybrid fuses the vector's dense ranking with BM25 on ``text``."""
        index = self.index(kind)
        if isinstance(index, DenseIndex):
            return index.search_vectors(vector[None, :], k)[0]
        if isinstance(index, HybridIndex):
            return index.search_vector(vector, text, k)
        return self.search(kind, text, k)

    # --- relevance on one common scale --------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit embeddings of ``texts``, memoised in memory (and on disk by the embedder's cache)."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
            if missing:
                for text, vec in zip(missing, self.embedder.embed(missing), strict=True):
                    self._vectors[text] = vec
            return np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, self.embedder.dim))

    def relevance(self, queries: str | Sequence[str], texts: Sequence[str]) -> list[float]:
        """Relevance of each text: its best cosine similarity over ``queries`` (the question, and
        the refined queries of later hops, whose targets need not resemble the question)."""
        queries = [queries] if isinstance(queries, str) else list(dict.fromkeys(queries))
        if not texts:
            return []
        return [float(s) for s in (self.embed(texts) @ self.embed(queries).T).max(axis=1)]

    def chunk_relevance(self, queries: str | Sequence[str], chunk_ids: Sequence[str]) -> list[float]:
        return self.relevance(queries, [chunk_text_for_embedding(self.chunk[c]) for c in chunk_ids])


def lexical_relevance(question: str, text: str) -> float:
    """Share of the question's content words found in ``text``, mapped to [-1, 1]."""
    words = content_words(question)
    if not words:
        return -1.0
    return 2.0 * len(words & content_words(text)) / len(words) - 1.0
