"""Load a synthetic world written by :func:`rag_lab.world.write_world`."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from rag_lab.errors import DataFormatError
from rag_lab.loaders.beir import read_corpus, validation_error
from rag_lab.loaders.jsonl import read_jsonl
from rag_lab.records import Corpus, Dataset, EvalSet, Question

WORLD_FILES = ("corpus.jsonl", "questions.jsonl", "world.json")


def is_world_folder(path: Path) -> bool:
    return path.is_dir() and all((path / name).is_file() for name in WORLD_FILES)


def _with_hop_order(question: Question) -> Question:
    """World questions that name a ``bridge_entity`` list their gold documents hop by hop
    (the generator writes them in that order); other questions have no hop order."""
    if question.hop_doc_ids or "bridge_entity" not in question.metadata or len(question.gold_doc_ids) < 2:
        return question
    return question.model_copy(update={"hop_doc_ids": question.gold_doc_ids})


def load_world(folder: str | Path, name: str = "world") -> Dataset:
    """Read ``corpus.jsonl`` and ``questions.jsonl`` of a world folder into a :class:`Dataset`."""
    folder = Path(folder)
    if not is_world_folder(folder):
        missing = [n for n in WORLD_FILES if not (folder / n).is_file()]
        raise DataFormatError(folder, f"not a synthetic-world folder; missing {', '.join(missing)}")
    docs = read_corpus(folder / "corpus.jsonl").values()  # the world's corpus is in BEIR shape
    questions = []
    questions_path = folder / "questions.jsonl"
    for line, row in read_jsonl(questions_path):
        try:
            questions.append(_with_hop_order(Question.model_validate(row)))
        except ValidationError as exc:
            raise validation_error(questions_path, line, exc) from None
    try:
        return Dataset(Corpus(docs, name=name), EvalSet(questions, name=name), name=name, source=str(folder))
    except ValueError as exc:
        raise DataFormatError(folder, str(exc)) from None
