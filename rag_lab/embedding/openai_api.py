"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from rag_lab.embedding.base import normalize_rows
from rag_lab.errors import ConfigError


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint.

    ``model_id`` is ``"openai:{model}"`` so cached vectors never mix with local models.
    The API key comes from ``api_key`` or ``$OPENAI_API_KEY`` and is handed to the
    client only; it is never kept on this object, logged or cached."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 batch_size: int = 256) -> None:
        from openai import OpenAI

        if not model:
            raise ConfigError("OpenAIEmbedder needs a model name")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise ConfigError("OpenAIEmbedder needs an API key: pass api_key or set OPENAI_API_KEY")
        self.model = model
        self.model_id = f"openai:{model}"
        self.base_url = base_url
        self.batch_size = batch_size
        self._client = OpenAI(api_key=key, base_url=base_url)
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        """The vector size, learned from the first response (one probe request if needed)."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed in batches of ``batch_size``. Empty strings, which the API rejects, are sent as a single space."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [text or " " for text in texts[start : start + self.batch_size]]
            response = self._client.embeddings.create(model=self.model, input=batch)
            data = sorted(response.data, key=lambda item: item.index)
            if len(data) != len(batch):
                raise RuntimeError(f"embedding endpoint returned {len(data)} vectors for {len(batch)} texts")
            rows.extend(item.embedding for item in data)
        vectors = normalize_rows(np.asarray(rows, dtype=np.float32))
        if self._dim is None:
            self._dim = vectors.shape[1]
        elif vectors.shape[1] != self._dim:
            raise RuntimeError(f"embedding size changed from {self._dim} to {vectors.shape[1]}")
        return vectors

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r})"
