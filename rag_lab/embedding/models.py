"""The runtimes of the packaged all-MiniLM-L6-v2, by name (:data:`EMBEDDERS`): ``torch`` (sentence-transformers,
the default), ``onnx`` and ``onnx-int8`` (the ``onnx`` extra), and the process default embedder
(``$RAG_LAB_EMBEDDER``). Each runtime has its own ``model_id`` (``…#onnx``), so caches never mix their vectors."""

from __future__ import annotations

import os
from collections.abc import Callable

from rag_lab.embedding.base import EMBEDDER_ENV, Embedder
from rag_lab.embedding.cache import CachedEmbedder
from rag_lab.embedding.onnx_runtime import OnnxEmbedder
from rag_lab.embedding.sentence_transformer import SentenceTransformerEmbedder
from rag_lab.embedding.shipped import shipped_vectors
from rag_lab.errors import ConfigError
from rag_lab.registry import Registry

#: The runtimes of the packaged model: name → a factory of the uncached embedder. The one list of
#: embedder names (``rag-lab --embedder`` choices, ``$RAG_LAB_EMBEDDER``, the embedder tests).
EMBEDDERS: Registry[Callable[[], Embedder]] = Registry("embedder backend")
EMBEDDERS.add("torch", SentenceTransformerEmbedder)
EMBEDDERS.add("onnx", OnnxEmbedder)
EMBEDDERS.add("onnx-int8", lambda: OnnxEmbedder(quantize=True))


def embedder_backend(backend: str | None = None) -> str:
    """``backend``, or ``$RAG_LAB_EMBEDDER``, or ``"torch"``; checked against :data:`EMBEDDERS`."""
    name = backend or os.environ.get(EMBEDDER_ENV) or "torch"
    if name not in EMBEDDERS:
        source = "" if backend else f" (from ${EMBEDDER_ENV})"
        raise ConfigError(f"unknown embedder backend {name!r}{source}; choose one of {', '.join(EMBEDDERS)}")
    return name


def model_embedder(backend: str | None = None) -> Embedder:
    """The packaged all-MiniLM-L6-v2 on ``backend`` (see :func:`embedder_backend`), uncached."""
    return EMBEDDERS[embedder_backend(backend)]()


def default_embedder(backend: str | None = None) -> CachedEmbedder:
    """The packaged all-MiniLM-L6-v2 on ``backend`` (default: ``$RAG_LAB_EMBEDDER`` or torch) behind
    the default on-disk cache and the vectors shipped in ``data/`` for that model."""
    model = model_embedder(backend)
    return CachedEmbedder(model, shipped=shipped_vectors(model.model_id))


def resolve_embedder(embedder: Embedder | str | None) -> Embedder:
    """An embedder given as an object (kept), a backend name (:func:`default_embedder` of it) or None
    (the process default)."""
    if embedder is None or isinstance(embedder, str):
        return default_embedder(embedder)
    return embedder
