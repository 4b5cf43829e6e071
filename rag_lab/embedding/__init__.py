"""Text embedders: the packaged MiniLM model (PyTorch or ONNX Runtime), an OpenAI-compatible API, an
on-disk cache and the vectors shipped with the datasets.

Every embedder follows the :class:`Embedder` protocol (:mod:`rag_lab.embedding.base`) and returns float32,
L2-normalized rows, so an inner product between two embeddings is their cosine similarity. The runtimes of
the packaged model are the registry :data:`EMBEDDERS` (:mod:`rag_lab.embedding.models`)."""

from rag_lab.embedding.base import DEFAULT_MODEL_ID, EMBEDDER_ENV, Embedder, normalize_rows, packaged_model_path
from rag_lab.embedding.cache import CachedEmbedder, EmbeddingCache
from rag_lab.embedding.models import EMBEDDERS, default_embedder, embedder_backend, model_embedder, resolve_embedder
from rag_lab.embedding.openai_api import OpenAIEmbedder
from rag_lab.embedding.sentence_transformer import SentenceTransformerEmbedder
from rag_lab.embedding.shipped import ShippedVectors, shipped_vectors

__all__ = ["DEFAULT_MODEL_ID", "EMBEDDERS", "EMBEDDER_ENV", "CachedEmbedder", "Embedder", "EmbeddingCache",
           "OpenAIEmbedder", "SentenceTransformerEmbedder", "ShippedVectors", "default_embedder", "embedder_backend",
           "model_embedder", "normalize_rows", "packaged_model_path", "resolve_embedder", "shipped_vectors"]
