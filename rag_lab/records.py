"""Plain, validated records: documents, chunks, questions, and their containers, which convert to and from the
BEIR exchange dicts (corpus ``{doc_id: {"title", "text"}}``, queries ``{qid: text}``, qrels
``{qid: {doc_id: grade}}``, run ``{qid: {doc_id: score}}``; docs/design.md §4)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from rag_lab.errors import ConfigError

#: Question types of the synthetic world (docs/design.md §4). HotpotQA uses ``bridge`` and
#: ``comparison``; data without a type label gets ``unlabeled``.
WORLD_QUESTION_TYPES: tuple[str, ...] = ("single", "bridge", "comparison", "mismatch", "alias", "vague", "unanswerable",
                                         "stale")
UNLABELED = "unlabeled"

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


def relevant_docs(judged: Mapping[str, int]) -> tuple[str, ...]:
    """The documents of one query's qrels ``{doc_id: grade}`` that count as relevant (gold): grade > 0, in order."""
    return tuple(d for d, g in judged.items() if g > 0)


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Document(_Record):
    """One source document. ``metadata`` holds free-form fields such as ``source``
    (the source type used by source contracts), ``date`` or ``entity``."""

    doc_id: str = Field(min_length=1)
    title: str = ""
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)

    def to_beir(self) -> dict[str, Any]:
        return {"title": self.title, "text": self.text, **self.metadata}


class Chunk(_Record):
    """A contiguous piece of a document. ``chunk_id`` is ``"{doc_id}#{position}"`` and
    stays stable as long as the document text and the chunking parameters do."""

    chunk_id: str = Field(min_length=1)
    doc_id: str = Field(min_length=1)
    position: int = Field(ge=0)
    title: str = ""
    text: str
    start: int = Field(ge=0, description="character offset of the chunk in the document text")
    end: int = Field(ge=0)


class Question(_Record):
    """An evaluation question.

    ``answer`` is the canonical gold answer (``None`` for unanswerable questions); ``answer_aliases`` are other strings
    that count as the same answer. ``gold_doc_ids`` are the documents that hold the evidence; ``min_hops`` is the least
    number of retrieval hops a careful system needs. ``hop_doc_ids`` lists gold documents in the order a reasoning chain
    visits them, only where the data says so (the world's bridge questions, MuSiQue's decomposition, 2WikiMultihopQA's
    evidence chain); it stays empty when the order is unknown (HotpotQA's supporting facts, BEIR qrels and comparison
    questions have no hop order)."""

    qid: str = Field(min_length=1)
    text: str = Field(min_length=1)
    type: str = UNLABELED
    answer: str | None = None
    answer_aliases: tuple[str, ...] = ()
    gold_doc_ids: tuple[str, ...] = ()
    hop_doc_ids: tuple[str, ...] = ()
    min_hops: int = Field(default=1, ge=0)
    split: str = "test"
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("answer_aliases", "gold_doc_ids", "hop_doc_ids", mode="before")
    @classmethod
    def _tuple(cls, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    @model_validator(mode="after")
    def _aliases_need_answer(self) -> Question:
        if self.answer is None and self.answer_aliases:
            raise ConfigError("answer_aliases given without an answer")
        stray = [d for d in self.hop_doc_ids if d not in self.gold_doc_ids]
        if stray:
            raise ConfigError(f"hop_doc_ids {stray} are not among gold_doc_ids")
        return self

    @model_serializer(mode="wrap")
    def _without_unknown_hops(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Dumps leave out an empty ``hop_doc_ids`` (the default), so files written before the
        field existed (the shipped world) are written byte for byte as before."""
        data = handler(self)
        if not self.hop_doc_ids:
            data.pop("hop_doc_ids", None)
        return data

    @property
    def answerable(self) -> bool:
        return self.answer is not None

    @property
    def gold_answers(self) -> tuple[str, ...]:
        """The canonical answer followed by its aliases (empty if unanswerable)."""
        return () if self.answer is None else (self.answer, *self.answer_aliases)


class Corpus:
    """An ordered collection of documents keyed by ``doc_id``."""

    def __init__(self, documents: Iterable[Document], name: str = "corpus") -> None:
        self.name = name
        self._docs: dict[str, Document] = {}
        for doc in documents:
            if doc.doc_id in self._docs:
                raise ConfigError(f"duplicate doc_id {doc.doc_id!r} in corpus {name!r}")
            self._docs[doc.doc_id] = doc

    def __len__(self) -> int:
        return len(self._docs)

    def __iter__(self) -> Iterator[Document]:
        return iter(self._docs.values())

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._docs

    def __getitem__(self, doc_id: str) -> Document:
        return self._docs[doc_id]

    @property
    def doc_ids(self) -> list[str]:
        return list(self._docs)

    def to_beir(self) -> dict[str, dict[str, Any]]:
        return {doc.doc_id: doc.to_beir() for doc in self}

    @classmethod
    def from_beir(cls, corpus: Mapping[str, Mapping[str, Any]], name: str = "corpus") -> Corpus:
        docs = []
        for doc_id, fields in corpus.items():
            fields = dict(fields)
            title = fields.pop("title", "") or ""
            text = fields.pop("text")
            docs.append(Document(doc_id=doc_id, title=title, text=text, metadata=fields))
        return cls(docs, name=name)

    def __repr__(self) -> str:
        return f"Corpus(name={self.name!r}, documents={len(self)})"


class EvalSet:
    """An ordered list of questions with unique ids."""

    def __init__(self, questions: Iterable[Question], name: str = "eval") -> None:
        self.name = name
        self.questions: list[Question] = list(questions)
        self._by_id: dict[str, Question] = {}
        for q in self.questions:
            if q.qid in self._by_id:
                raise ConfigError(f"duplicate qid {q.qid!r} in evaluation set {name!r}")
            self._by_id[q.qid] = q

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions)

    def __getitem__(self, qid: str) -> Question:
        return self._by_id[qid]

    @property
    def splits(self) -> list[str]:
        return sorted({q.split for q in self.questions})

    def type_counts(self) -> dict[str, int]:
        return dict(sorted(Counter(q.type for q in self.questions).items()))

    def select(self, split: str | None = None, types: Iterable[str] | None = None, limit: int | None = None,
               per_type: int | None = None) -> EvalSet:
        """A new evaluation set restricted to one split and some types, in order, keeping at most ``per_type`` questions
        of each type (the first ones), then at most ``limit`` questions. An unknown split is an error."""
        questions = self.questions
        if split is not None:
            if split not in self.splits:
                raise ConfigError(f"split {split!r} not in evaluation set {self.name!r}; available: {self.splits}")
            questions = [q for q in questions if q.split == split]
        if types is not None:
            wanted = set(types)
            questions = [q for q in questions if q.type in wanted]
        if per_type is not None:
            if per_type < 1:
                raise ConfigError(f"per_type must be >= 1, got {per_type}")
            taken: dict[str, int] = {}
            kept = []
            for q in questions:
                if taken.get(q.type, 0) < per_type:
                    taken[q.type] = taken.get(q.type, 0) + 1
                    kept.append(q)
            questions = kept
        if limit is not None:
            if limit < 0:
                raise ConfigError(f"limit must be >= 0, got {limit}")
            questions = questions[:limit]
        return EvalSet(questions, name=self.name)

    def queries(self) -> dict[str, str]:
        return {q.qid: q.text for q in self.questions}

    def qrels(self) -> Qrels:
        """Gold documents as BEIR qrels (grade 1). Questions without gold docs are omitted."""
        return {q.qid: {d: 1 for d in q.gold_doc_ids} for q in self.questions if q.gold_doc_ids}

    @classmethod
    def from_beir(cls, queries: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]], name: str = "eval",
                  split: str = "test") -> EvalSet:
        """Questions from BEIR queries + qrels; documents with grade > 0 are gold."""
        questions = [
            Question(
                qid=qid,
                text=text,
                gold_doc_ids=relevant_docs(qrels.get(qid, {})),
                split=split,
            )
            for qid, text in queries.items()
        ]
        return cls(questions, name=name)

    def __repr__(self) -> str:
        return f"EvalSet(name={self.name!r}, questions={len(self)})"


class GoldCoverage(_Record):
    """How many questions have all, some or none of their gold documents in the corpus.

    ``recall_ceiling`` is the mean, over questions with gold documents, of the share of
    their gold documents that the corpus holds: no retriever's Recall@k can exceed it."""

    questions_with_gold: int
    all_in_corpus: int
    some_in_corpus: int
    none_in_corpus: int
    recall_ceiling: float | None

    @property
    def complete(self) -> bool:
        return self.all_in_corpus == self.questions_with_gold

    def describe(self) -> str:
        """One line for reports."""
        if self.recall_ceiling is None:
            return "no question has gold documents"
        return (
            f"gold documents in the corpus: all for {self.all_in_corpus}, some for {self.some_in_corpus}, "
            f"none for {self.none_in_corpus} of {self.questions_with_gold} questions "
            f"(recall ceiling {self.recall_ceiling:.3f})"
        )


def gold_coverage(corpus: Corpus, questions: Iterable[Question]) -> GoldCoverage:
    """The :class:`GoldCoverage` of ``questions`` against ``corpus``."""
    shares = [sum(d in corpus for d in q.gold_doc_ids) / len(q.gold_doc_ids) for q in questions if q.gold_doc_ids]
    return GoldCoverage(questions_with_gold=len(shares), all_in_corpus=sum(s == 1.0 for s in shares),
                        some_in_corpus=sum(0.0 < s < 1.0 for s in shares), none_in_corpus=sum(s == 0.0 for s in shares),
                        recall_ceiling=sum(shares) / len(shares) if shares else None)


class Dataset:
    """A corpus together with its evaluation set.

    Every gold document must be in the corpus unless ``allow_missing_gold`` is set, as for retrieved paragraph pools
    (HotpotQA fullwiki, any file a retriever made): those questions are kept and :attr:`coverage` says how many lack
    gold documents. ``notes`` are one-line remarks from the loader (e.g. ids it had to derive)."""

    def __init__(self, corpus: Corpus, evalset: EvalSet, name: str, source: str = "", allow_missing_gold: bool = False,
                 notes: Iterable[str] = ()) -> None:
        self.coverage = gold_coverage(corpus, evalset)
        if not allow_missing_gold and not self.coverage.complete:
            unknown = sorted({d for q in evalset for d in q.gold_doc_ids if d not in corpus})
            shown = ", ".join(repr(d) for d in unknown[:5])
            raise ConfigError(f"dataset {name!r}: {len(unknown)} gold doc id(s) not in the corpus: {shown}")
        self.corpus = corpus
        self.evalset = evalset
        self.name = name
        self.source = source
        self.notes: tuple[str, ...] = tuple(notes)

    def __repr__(self) -> str:
        return f"Dataset(name={self.name!r}, documents={len(self.corpus)}, questions={len(self.evalset)})"
