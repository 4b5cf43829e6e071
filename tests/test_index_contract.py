"""The contract every index kind keeps, run over the index registry (``rag_lab.index.INDEX_KINDS``), and a
toy index kind that shows a new kind is one class plus one registry line: the factory, loading, the
retrieval policy, the pipeline, ``rag-lab retrieval-eval`` and this contract all take it from there."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Self

import pytest
from fakes import HashEmbedder, corpus_of

from rag_lab.errors import ConfigError
from rag_lab.index import INDEX_KINDS, SearchIndex, build_index, load_index, make_index
from rag_lab.index.base import Hits, read_meta
from rag_lab.records import Chunk

TEXTS = [
    "password reset instructions for the account login page",
    "the quarterly revenue report for the finance team",
    "new smartphone battery lasts two full days",
    "the zyxqorp protocol handles encrypted satellite uplinks",
    "gardening tips for growing tomatoes in summer",
    "how to reset a forgotten password on the login screen",
]


def chunks() -> list[Chunk]:
    return [Chunk(chunk_id=f"d{i}#0", doc_id=f"d{i}", position=0, title="", text=t, start=0, end=len(t))
            for i, t in enumerate(TEXTS)]


class ToyIndex(SearchIndex):
    """A toy index kind: a chunk scores the number of query words it contains."""

    name: ClassVar[str] = "toy"

    def __init__(self) -> None:
        super().__init__()
        self.words: list[Counter[str]] = []

    def _build(self, chunks: Sequence[Chunk]) -> None:
        self.words = [Counter(re.findall(r"\w+", c.text.lower())) for c in chunks]

    def _search(self, queries: list[str], k: int) -> list[Hits]:
        out = []
        for query in queries:
            terms = set(re.findall(r"\w+", query.lower()))
            scored = [(cid, float(sum(w[t] for t in terms))) for cid, w in zip(self.chunk_ids, self.words, strict=True)]
            out.append(sorted((h for h in scored if h[1] > 0), key=lambda h: -h[1])[:k])
        return out

    def save(self, folder: str | Path) -> Path:
        self._require_built()
        return self._write_meta(folder, words=[dict(w) for w in self.words])

    @classmethod
    def load(cls, folder: str | Path, embedder=None) -> Self:
        meta = read_meta(folder, cls.name)
        index = cls()
        index._restore(meta)
        index.words = [Counter(w) for w in meta["words"]]
        return index


@pytest.fixture
def toy_kind():
    """The one registry line, undone after the test."""
    INDEX_KINDS.add(ToyIndex.name, ToyIndex)
    yield ToyIndex.name
    INDEX_KINDS.remove(ToyIndex.name)


def check_index_contract(kind: str, tmp_path: Path) -> None:
    """What every index kind must do: refuse misuse clearly, return at most k hits of built chunks best
    first, find the chunk that shares the query's rare word, and come back equal from save + load."""
    embedder = HashEmbedder()
    index = make_index(kind, embedder)
    assert isinstance(index, INDEX_KINDS[kind]) and index.name == kind
    with pytest.raises(RuntimeError, match="build or load"):
        index.search(["x"], 1)
    with pytest.raises(ValueError, match="zero chunks"):
        index.build([])
    with pytest.raises(ValueError, match="duplicate"):
        index.build(chunks() + chunks()[:1])
    index.build(chunks())
    assert len(index) == len(TEXTS)
    with pytest.raises(ValueError, match="k must be"):
        index.search(["x"], 0)
    assert index.search([], 3) == []
    queries = ["zyxqorp satellite uplinks", "password reset login", "tomatoes"]
    hits = index.search(queries, k=2)
    assert len(hits) == len(queries)
    for one in hits:
        assert len(one) <= 2
        assert {cid for cid, _ in one} <= set(index.chunk_ids)
        scores = [s for _, s in one]
        assert scores == sorted(scores, reverse=True)
    assert hits[0][0][0] == "d3#0" and hits[2][0][0] == "d4#0"
    assert {cid for cid, _ in hits[1]} == {"d0#0", "d5#0"}
    folder = index.save(tmp_path / kind)
    assert json.loads((folder / "index.json").read_text())["kind"] == kind
    loaded = load_index(folder, embedder)
    assert type(loaded) is type(index) and loaded.chunk_ids == index.chunk_ids
    assert loaded.search(queries, k=2) == hits
    with pytest.raises(ValueError, match="unknown parameter"):
        make_index(kind, embedder, no_such_parameter=1)


@pytest.mark.parametrize("kind", INDEX_KINDS.names())
def test_every_index_kind_keeps_the_contract(kind: str, tmp_path: Path) -> None:
    check_index_contract(kind, tmp_path)


def test_a_toy_index_kind_is_one_class_and_one_registry_line(toy_kind: str, tmp_path: Path, capsys) -> None:
    check_index_contract(toy_kind, tmp_path)
    # the retrieval policy names it (its field type is checked against the registry) ...
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig
    from rag_lab.records import Question

    config = PipelineConfig().with_params({"retrieval.retriever": toy_kind, "router.enabled": False})
    assert config.get("retrieval.retriever") == "toy"
    # ... and the pipeline retrieves with it
    corpus = corpus_of({f"d{i}": t for i, t in enumerate(TEXTS)})
    resources = CorpusResources(corpus, HashEmbedder())
    assert isinstance(resources.index(toy_kind), ToyIndex)
    from rag_lab.llm.simulator import SimulatedBackend

    question = Question(qid="q", text="Which protocol handles encrypted satellite uplinks?", answer="zyxqorp")
    result, trace = Pipeline(config, resources, SimulatedBackend(profile="ideal")).run(question)
    retrieved = {cid for step in trace.steps if step.kind == "retrieve" for cid in step.retrieved}
    assert "d3#0" in retrieved
    # the widgets offer it
    from rag_lab.widgets.controls import field_spec

    assert "toy" in field_spec("retrieval.retriever").choices


def test_an_unregistered_kind_is_refused_everywhere_with_the_choices() -> None:
    from rag_lab.pipeline import PipelineConfig

    with pytest.raises(ConfigError, match="unknown index kind 'toy'; choose one of dense, exact, bm25, hybrid"):
        make_index("toy")
    with pytest.raises(ConfigError, match="unknown index kind 'toy'"):
        PipelineConfig().with_params({"retrieval.retriever": "toy"})
    with pytest.raises(ConfigError, match="already registered"):
        INDEX_KINDS.add("bm25", ToyIndex)


def test_build_index_builds_the_registered_class(tmp_path: Path) -> None:
    for kind in INDEX_KINDS:
        assert type(build_index(kind, chunks(), HashEmbedder())) is INDEX_KINDS[kind]
