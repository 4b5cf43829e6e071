"""The contract every index kind keeps (:func:`rag_lab.testing.check_index`), run over the index registry
(``rag_lab.index.INDEX_KINDS``); a toy index kind that shows a new kind is one class plus one registry line:
the factory, loading, the retrieval policy, the pipeline, ``rag-lab retrieval-eval`` and this contract all
take it from there; and broken toy kinds that the check refuses, each naming the rule it breaks."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Self

import pytest

from rag_lab.errors import ConfigError
from rag_lab.index import INDEX_KINDS, SearchIndex, build_index, make_index
from rag_lab.index.base import Hits, read_meta
from rag_lab.records import Chunk
from rag_lab.testing import INDEX_TEXTS, ContractViolation, HashEmbedder, check_index, corpus_of, index_chunks

TEXTS = list(INDEX_TEXTS)


def chunks() -> list[Chunk]:
    return index_chunks(TEXTS)


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


@pytest.mark.parametrize("kind", INDEX_KINDS.names())
def test_every_index_kind_keeps_the_contract(kind: str, tmp_path: Path) -> None:
    check_index(kind, tmp_path)


def test_a_toy_index_kind_is_one_class_and_one_registry_line(toy_kind: str, tmp_path: Path, capsys) -> None:
    check_index(toy_kind, tmp_path)
    check_index(ToyIndex, tmp_path / "as-a-class")
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


class WorstFirst(ToyIndex):
    def _search(self, queries: list[str], k: int) -> list[Hits]:
        return [sorted(h, key=lambda x: x[1]) for h in super()._search(queries, k)]


class OneTooMany(ToyIndex):
    def _search(self, queries: list[str], k: int) -> list[Hits]:
        return super()._search(queries, k + 1)


class IgnoresTheQuery(ToyIndex):
    def _search(self, queries: list[str], k: int) -> list[Hits]:
        return [[(cid, 1.0) for cid in self.chunk_ids[:k]] for _ in queries]


class ForgetsOnLoad(ToyIndex):
    @classmethod
    def load(cls, folder: str | Path, embedder=None) -> Self:
        index = super().load(folder, embedder)
        index.words = [Counter() for _ in index.words]
        return index


class SearchesAnything(ToyIndex):
    def search(self, queries, k):  # skips the base class's checks (no build, k < 1)
        return self._search(list(queries), max(k, 1)) if self.chunk_ids else [[] for _ in queries]


@pytest.mark.parametrize(("broken", "rule"), [
    (WorstFirst, "hits best first"),
    (OneTooMany, "at most k hits"),
    (IgnoresTheQuery, "the rare word's chunk first"),
    (ForgetsOnLoad, "load gives it back"),
    (SearchesAnything, "search before build"),
])
def test_check_index_refuses_a_broken_index_naming_the_rule(broken: type[ToyIndex], rule: str, tmp_path: Path) -> None:
    with pytest.raises(ContractViolation, match=f"^index contract, rule '{rule}': index kind 'toy'") as caught:
        check_index(broken, tmp_path)
    assert caught.value.contract == "index" and caught.value.rule == rule
