"""Lexical search with BM25 (bm25s)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Self

import bm25s
import numpy as np

from rag_lab.chunking import chunk_text_for_embedding
from rag_lab.embedding import Embedder
from rag_lab.errors import ConfigError
from rag_lab.index.base import Hits, SearchIndex, read_meta, require_files, top_k
from rag_lab.records import Chunk

#: Scoring variants bm25s implements.
BM25_METHODS = ("robertson", "lucene", "atire", "bm25l", "bm25+")
_ENGINE = "bm25s"
_ENGINE_FILES = ("params.index.json", "vocab.index.json", "data.csc.index.npy", "indices.csc.index.npy",
                 "indptr.csc.index.npy")


class BM25Index(SearchIndex):
    """BM25 over the lower-cased word tokens of each chunk's title and text.

    ``k1`` and ``b`` are the usual BM25 constants, ``method`` the bm25s scoring variant, ``stopwords`` a bm25s stop-word
    language (``"en"``, ``"de"``, ...) or ``None``. Only chunks sharing at least one token with the query are returned,
    so a query with no known token has no hits."""

    name: ClassVar[str] = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75, method: str = "lucene", stopwords: str | None = "en") -> None:
        if k1 < 0:
            raise ConfigError(f"k1 must be >= 0, got {k1}")
        if not 0 <= b <= 1:
            raise ConfigError(f"b must be in [0, 1], got {b}")
        if method not in BM25_METHODS:
            raise ConfigError(f"unknown BM25 method {method!r}; choose one of {BM25_METHODS}")
        if stopwords is not None:
            try:
                bm25s.tokenize("", stopwords=stopwords, show_progress=False)
            except ValueError:
                raise ConfigError(
                    f"unknown stop-word language {stopwords!r} (bm25s knows e.g. 'en', 'de', 'fr')"
                ) from None
        super().__init__()
        self.k1 = k1
        self.b = b
        self.method = method
        self.stopwords = stopwords
        self._engine: bm25s.BM25 | None = None

    def _tokenize(self, texts: list[str], return_ids: bool) -> list[list[str]] | bm25s.tokenization.Tokenized:
        return bm25s.tokenize(texts, stopwords=self.stopwords, return_ids=return_ids, show_progress=False)

    def _build(self, chunks: Sequence[Chunk]) -> None:
        tokens = self._tokenize([chunk_text_for_embedding(chunk) for chunk in chunks], return_ids=True)
        engine = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        # No "" token: queries are filtered to known tokens here, and bm25s cannot add
        # it to an empty vocabulary. A corpus without tokens divides 0 by 0 harmlessly.
        with np.errstate(divide="ignore", invalid="ignore"):
            engine.index(tokens, create_empty_token=False, show_progress=False)
        self._engine = engine

    def _search(self, queries: list[str], k: int) -> list[Hits]:
        assert self._engine is not None
        vocab = self._engine.vocab_dict
        indices, indptr = self._engine.scores["indices"], self._engine.scores["indptr"]
        hits = []
        for tokens in self._tokenize(queries, return_ids=False):
            ids = [vocab[token] for token in tokens if token in vocab]
            if not ids:
                hits.append([])
                continue
            matching = np.unique(np.concatenate([indices[indptr[i] : indptr[i + 1]] for i in ids]))
            scores = self._engine.get_scores_from_ids(ids)[matching]
            best = top_k(scores, k)
            hits.append(self._hits(matching[best], scores[best]))
        return hits

    def save(self, folder: str | Path) -> Path:
        self._require_built()
        assert self._engine is not None
        folder = Path(folder)
        self._engine.save(folder / _ENGINE, show_progress=False)
        return self._write_meta(folder, params=self.params)

    @classmethod
    def load(cls, folder: str | Path, embedder: Embedder | str | None = None) -> Self:
        """Read a saved BM25 index; ``embedder`` is accepted for a uniform API and unused."""
        meta = read_meta(folder, cls.name)
        require_files(folder, *(f"{_ENGINE}/{name}" for name in _ENGINE_FILES))
        index = cls(**meta["params"])
        index._restore(meta)
        index._engine = bm25s.BM25.load(Path(folder) / _ENGINE)
        return index
