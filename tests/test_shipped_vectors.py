"""Vectors shipped with a dataset (rag_lab.embedding.shipped, built by rag_lab.data_build.vectors): the cached
embedder serves them for exactly their model and text, before computing; the shipped world's and HotpotQA sample's files cover
what every run on them embeds, and their vectors are the packaged model's; a broken file fails clearly."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rag_lab.data_build.vectors import dataset_texts, write_vector_file
from rag_lab.embedding import (
    DEFAULT_MODEL_ID,
    CachedEmbedder,
    EmbeddingCache,
    SentenceTransformerEmbedder,
    default_embedder,
)
from rag_lab.embedding.shipped import ShippedVectors, vector_file
from rag_lab.errors import DataFormatError
from rag_lab.paths import DATA_DIR
from rag_lab.testing import HashEmbedder


@pytest.fixture
def dataset(tmp_path):
    """A two-document dataset folder with vectors written by a hash embedder."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    example = {"_id": "q1", "question": "Where was Alpha born?", "answer": "Paris", "type": "bridge",
               "supporting_facts": [["Alpha", 0]],
               "context": [["Alpha", ["Alpha was born in Paris.", " She wrote two books."]],
                           ["Beta", ["Beta is a river in Spain."]]]}
    (folder / "tiny.json").write_text(json.dumps([example]), encoding="utf-8")
    return folder


def test_shipped_vectors_are_served_for_their_model_and_text_only(dataset, tmp_path):
    maker = HashEmbedder(model_id="model/a")
    path = write_vector_file(dataset, maker)
    assert path == vector_file(dataset, "model/a") and path.name == "model_a.npz"
    texts = dataset_texts(dataset)
    assert "Alpha. Alpha was born in Paris. She wrote two books." in texts  # the chunk as indexes see it
    assert {"Alpha was born in Paris.", "She wrote two books.", "Where was Alpha born?"} <= set(texts)

    inner = HashEmbedder(model_id="model/a")
    cached = CachedEmbedder(inner, EmbeddingCache(tmp_path / "emb.sqlite"), shipped=ShippedVectors("model/a", [dataset]))
    out = cached.embed(["Where was Alpha born?", "She wrote two books.", "a text nobody shipped"])
    assert inner.texts_embedded == 1  # only the unshipped text went to the model
    assert (cached.hits, cached.shipped_hits, cached.misses) == (2, 2, 1)
    np.testing.assert_allclose(out, maker.embed(["Where was Alpha born?", "She wrote two books.",
                                                 "a text nobody shipped"]), atol=1e-6)

    other = HashEmbedder(model_id="model/b")  # another model (or backend) never gets model/a's vectors
    cached_b = CachedEmbedder(other, EmbeddingCache(tmp_path / "emb.sqlite"), shipped=ShippedVectors("model/b", [dataset]))
    cached_b.embed(["Where was Alpha born?"])
    assert (cached_b.shipped_hits, cached_b.misses) == (0, 1)


@pytest.mark.parametrize("content", [b"not a zip", None])
def test_a_broken_shipped_file_names_itself(dataset, content):
    path = vector_file(dataset, "model/a")
    path.parent.mkdir()
    if content is None:  # a valid npz with the wrong contents
        np.savez(path, keys=np.array([b"k1", b"k2"]), vectors=np.zeros((3, 4), dtype=np.float32))
    else:
        path.write_bytes(content)
    with pytest.raises(DataFormatError, match="model_a.npz"):
        ShippedVectors("model/a", [dataset])


#: The shipped datasets that carry vectors: the world, the HotpotQA sample the real-data notebooks and the
#: real-model notebook run on, and the MuSiQue sample whose recorded sweeps the tests replay.
WITH_VECTORS = ("world", "hotpotqa_sample", "musique_sample")


@pytest.mark.parametrize("name", WITH_VECTORS)
def test_a_shipped_dataset_covers_every_text_a_run_embeds(name):
    shipped = ShippedVectors(DEFAULT_MODEL_ID, [DATA_DIR / name])
    texts = dataset_texts(DATA_DIR / name)
    found = shipped.get([EmbeddingCache.key(DEFAULT_MODEL_ID, t) for t in texts])
    missing = [t for t, v in zip(texts, found, strict=True) if v is None]
    assert not missing, (f"{len(missing)} {name} texts have no shipped vector (first: {missing[0]!r}); "
                         f"regenerate: rag-lab data build-vectors data/{name}")
    assert len(shipped) == len(texts)  # and nothing stale


@pytest.mark.slow
@pytest.mark.parametrize("name", WITH_VECTORS)
def test_the_shipped_vectors_are_the_packaged_models(name):
    minilm = SentenceTransformerEmbedder()
    texts = dataset_texts(DATA_DIR / name)
    sample = [texts[i] for i in np.random.default_rng(0).choice(len(texts), 24, replace=False)]
    shipped = ShippedVectors(DEFAULT_MODEL_ID, [DATA_DIR / name])
    found = np.stack(shipped.get([EmbeddingCache.key(DEFAULT_MODEL_ID, t) for t in sample]))
    np.testing.assert_allclose(found, minilm.embed(sample), atol=1e-5)
    assert default_embedder("torch").shipped is not None  # the default embedder consults them


def test_without_a_data_folder_nothing_is_shipped(monkeypatch, tmp_path):
    monkeypatch.setattr("rag_lab.embedding.shipped.DATA_DIR", tmp_path / "no-data-here")
    assert len(ShippedVectors(DEFAULT_MODEL_ID)) == 0
