"""Unanswerable twins of a dataset's questions (:func:`twins_of`; :func:`rag_lab.loaders.load_dataset` gives them
for a name ending in :data:`TWINS_SUFFIX`): the same questions over the corpus without any document that supports
any question, so refusing is the right reply to every one. The construction and the metadata each twin carries:
docs/real-data.md, "Unanswerable twins"."""

from __future__ import annotations

from collections.abc import Iterable

from rag_lab.errors import ConfigError
from rag_lab.records import Corpus, Dataset, Document, EvalSet, Question
from rag_lab.text_overlap import normalize_answer

__all__ = ["TWINS_SUFFIX", "TWIN_QID_SUFFIX", "insufficient", "twin_count", "twins_of"]

#: A dataset name ending so names the twins of the dataset before it (``hotpotqa_sample_twins``).
TWINS_SUFFIX = "_twins"
#: A twin's qid is its original's with this ending (``5a8b57f2…~twin``).
TWIN_QID_SUFFIX = "~twin"
#: Answers this short or shorter (normalised tokens) are not searched for in the corpus: ``yes`` and ``no``
#: answer comparison questions and occur in any prose, so their presence says nothing about the evidence.
_YES_NO = frozenset({"yes", "no"})


def twins_of(dataset: Dataset, name: str | None = None) -> Dataset:
    """The unanswerable twins of every question of ``dataset`` with a gold document, over its corpus without any
    supporting document (and none of the same title): see the module doc. A dataset with no question that names
    its supporting documents has no twins (an error: there is nothing to remove)."""
    sources = [q for q in dataset.evalset if q.gold_doc_ids]
    if not sources:
        raise ConfigError(f"dataset {dataset.name!r} has no question with gold documents: twins remove the "
                          "supporting documents, so a question must name them")
    removed_titles = {_title(dataset.corpus, d) for q in sources for d in q.gold_doc_ids}
    kept = [doc for doc in dataset.corpus if doc.title not in removed_titles and doc.doc_id not in removed_titles]
    name = name or dataset.name + TWINS_SUFFIX
    corpus = Corpus(kept, name=name)
    index = _AnswerIndex(kept)
    questions = [_twin(q, dataset.corpus, index) for q in sources]
    flagged = sum(1 for q in questions if q.metadata["answer_in_corpus"])
    note = (f"unanswerable twins of {len(questions)} questions of {dataset.name!r}: {len(dataset.corpus) - len(kept)} "
            f"supporting documents removed (with every document of the same title), {len(kept)} kept; "
            f"{flagged} twin(s) flagged: a gold answer string is still in the corpus")
    return Dataset(corpus, EvalSet(questions, name=name), name=name, source=dataset.source,
                   notes=(*dataset.notes, note))


def _title(corpus: Corpus, doc_id: str) -> str:
    """A gold document's title (its id when the corpus lacks it: HotpotQA names documents by title)."""
    return corpus[doc_id].title or doc_id if doc_id in corpus else doc_id


def _twin(question: Question, corpus: Corpus, index: _AnswerIndex) -> Question:
    answers = question.gold_answers
    return Question(
        qid=question.qid + TWIN_QID_SUFFIX, text=question.text, type=question.type, answer=None,
        min_hops=question.min_hops, split=question.split,
        metadata={**question.metadata, "pair_id": question.qid, "original_answers": list(answers),
                  "removed_doc_ids": list(question.gold_doc_ids), "answer_in_corpus": index.holding(answers)})


class _AnswerIndex:
    """The kept documents' normalised texts, searched for a gold answer as a whole-token sequence (the rule of
    :func:`rag_lab.evaluation.answers.contains`)."""

    def __init__(self, documents: Iterable[Document]) -> None:
        self._texts = [(doc.doc_id, f" {normalize_answer(doc.title + ' ' + doc.text)} ") for doc in documents]

    def holding(self, answers: Iterable[str]) -> list[str]:
        """The ids of the documents that hold one of ``answers`` (a yes/no answer is never searched for)."""
        needles = [f" {a} " for a in map(normalize_answer, answers) if a and a not in _YES_NO]
        return [doc_id for doc_id, text in self._texts if any(n in text for n in needles)]


def insufficient(question: Question) -> bool:
    """Whether ``question`` is a twin whose corpus holds none of its original's gold answers (a clean twin: no
    flag). Claims on twins are tested on these alone."""
    return "pair_id" in question.metadata and not question.metadata.get("answer_in_corpus")


def twin_count(dataset: Dataset) -> tuple[int, int]:
    """(twins, flagged twins) of a twin dataset."""
    twins = [q for q in dataset.evalset if "pair_id" in q.metadata]
    return len(twins), sum(1 for q in twins if q.metadata.get("answer_in_corpus"))
