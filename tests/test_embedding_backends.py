"""The packaged MiniLM on PyTorch and on ONNX Runtime: same vectors (to rounding), exported once and
cached, selectable per index, and never mixed in the embedding cache or in saved indexes."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.embedding import (
    DEFAULT_MODEL_ID,
    EMBEDDER_ENV,
    CachedEmbedder,
    EmbeddingCache,
    SentenceTransformerEmbedder,
    default_embedder,
    embedder_backend,
    resolve_embedder,
)
from rag_lab.errors import ConfigError
from rag_lab.index import build_index, load_index
from rag_lab.records import Chunk

pytest.importorskip("onnxruntime", reason="the onnx extra (scripts/test.sh installs it)")

from rag_lab.embedding.onnx_runtime import OnnxEmbedder  # noqa: E402

TEXTS = [
    "The payments service was rolled back after the checkout incident.",
    "Ada Lovelace was born in London in 1815.",
    "short",
    "",
    " ".join(["a very long text that must be truncated at the model's maximum sequence length"] * 40),
]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def onnx_root(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx")


@pytest.fixture(scope="module")
def onnx(onnx_root) -> OnnxEmbedder:
    return OnnxEmbedder(cache_root=onnx_root)


def test_backend_names_are_validated_and_read_from_the_environment(monkeypatch):
    monkeypatch.delenv(EMBEDDER_ENV, raising=False)
    assert embedder_backend() == "torch"
    monkeypatch.setenv(EMBEDDER_ENV, "onnx")
    assert embedder_backend() == "onnx" and embedder_backend("torch") == "torch"
    assert default_embedder().model_id == f"{DEFAULT_MODEL_ID}#onnx"
    monkeypatch.setenv(EMBEDDER_ENV, "tensorflow")
    with pytest.raises(ConfigError, match=r"unknown embedder backend 'tensorflow' \(from \$RAG_LAB_EMBEDDER\)"):
        embedder_backend()
    with pytest.raises(ConfigError, match="choose one of torch, onnx, onnx-int8"):
        resolve_embedder("cuda")


def test_onnx_vectors_match_pytorch_and_the_export_is_made_once(onnx, onnx_root):
    torch_vectors = SentenceTransformerEmbedder().embed(TEXTS)
    onnx_vectors = onnx.embed(TEXTS)
    assert onnx_vectors.dtype == np.float32 and onnx_vectors.shape == torch_vectors.shape
    np.testing.assert_allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(onnx_vectors, torch_vectors, atol=1e-4)
    # Order of the texts (and so of the length-sorted batches) does not change a vector.
    np.testing.assert_allclose(onnx.embed(TEXTS[::-1])[::-1], onnx_vectors, atol=1e-6)
    exported = sorted(onnx_root.rglob("*.onnx"))
    assert [p.name for p in exported] == ["model.onnx"]
    mtime = exported[0].stat().st_mtime_ns
    again = OnnxEmbedder(cache_root=onnx_root)
    again.embed(["x"])
    assert again.onnx_path == exported[0] and exported[0].stat().st_mtime_ns == mtime


def test_int8_is_a_separate_export_close_to_fp32(onnx, onnx_root):
    int8 = OnnxEmbedder(quantize=True, cache_root=onnx_root)
    assert int8.model_id == f"{DEFAULT_MODEL_ID}#onnx-int8" != onnx.model_id
    cosines = np.sum(int8.embed(TEXTS[:3]) * onnx.embed(TEXTS[:3]), axis=1)
    assert cosines.min() > 0.97
    assert int8.onnx_path.name == "model_int8.onnx" and int8.onnx_path.parent == onnx.onnx_path.parent


def test_onnx_and_pytorch_vectors_never_mix_in_the_cache(onnx, tmp_path):
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    torch_cached = CachedEmbedder(SentenceTransformerEmbedder(), cache)
    onnx_cached = CachedEmbedder(onnx, cache)
    assert torch_cached.model_id == DEFAULT_MODEL_ID and onnx_cached.model_id.endswith("#onnx")
    # A poisoned torch entry: if the ONNX embedder read torch's keys it would get this vector back.
    poison = np.zeros((1, 384), dtype=np.float32)
    poison[0, 0] = 1.0
    cache.put(DEFAULT_MODEL_ID, [TEXTS[0]], poison)
    assert onnx_cached.embed([TEXTS[0]])[0, 0] != 1.0 and onnx_cached.misses == 1
    assert torch_cached.embed([TEXTS[0]])[0, 0] == 1.0 and torch_cached.hits == 1
    assert len(cache) == 2
    assert cache.key(DEFAULT_MODEL_ID, TEXTS[0]) != cache.key(onnx.model_id, TEXTS[0])


def test_an_index_names_its_backend_and_loads_only_with_it(onnx, tmp_path):
    chunks = [Chunk(chunk_id=f"d{i}#0", doc_id=f"d{i}", position=0, text=t, start=0, end=len(t))
              for i, t in enumerate(TEXTS[:3])]
    index = build_index("exact", chunks, embedder=CachedEmbedder(onnx, EmbeddingCache(tmp_path / "e.sqlite")))
    assert index.model_id.endswith("#onnx")
    index.save(tmp_path / "idx")
    with pytest.raises(ValueError, match="built with embedding model .*#onnx"):
        load_index(tmp_path / "idx", embedder=CachedEmbedder(SentenceTransformerEmbedder(),
                                                             EmbeddingCache(tmp_path / "e.sqlite")))
    assert build_index("exact", chunks, embedder="torch").model_id == DEFAULT_MODEL_ID
