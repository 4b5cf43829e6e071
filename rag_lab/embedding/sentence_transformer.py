"""The packaged all-MiniLM-L6-v2 (or any sentence-transformers folder) on PyTorch."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rag_lab.embedding.base import model_folder, normalize_rows
from rag_lab.errors import ConfigError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


@contextmanager
def no_loading_bars() -> Iterator[None]:
    """Loading a model without transformers' "Loading weights" progress bar (written to stderr, it would cut
    into a sweep's or an evaluation's own bar); the bars' setting is restored after."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


@lru_cache(maxsize=4)
def _load_sentence_transformer(path: str, device: str) -> SentenceTransformer:
    from sentence_transformers import SentenceTransformer

    with no_loading_bars():
        return SentenceTransformer(path, device=device)


class SentenceTransformerEmbedder:
    """A sentence-transformers model read from a local folder (the packaged all-MiniLM-L6-v2 by default). The model
    loads on first use and is shared by every instance in the process with the same folder and device."""

    def __init__(self, model_path: str | Path | None = None, batch_size: int = 64, device: str = "cpu") -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        self._path, self.model_id = model_folder(model_path)
        self.batch_size = batch_size
        self.device = device

    @property
    def model(self) -> SentenceTransformer:
        return _load_sentence_transformer(str(self._path), self.device)

    @property
    def dim(self) -> int:
        model = self.model
        # sentence-transformers >= 5 renamed get_sentence_embedding_dimension (now deprecated).
        size = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(size())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
        return normalize_rows(vectors)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(model_id={self.model_id!r}, device={self.device!r})"
