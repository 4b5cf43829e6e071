"""The documents-folder layout, for a user's own data: a folder holding ``documents/`` (one text or Markdown file per
document, :mod:`~rag_lab.loaders.documents`) and ``questions.csv`` or ``questions.jsonl`` (one question per row,
:mod:`~rag_lab.loaders.question_table`), read as it is. The layout in full: docs/your-own-data.md."""

from __future__ import annotations

from pathlib import Path

from rag_lab.errors import DataFormatError
from rag_lab.loaders.documents import read_documents
from rag_lab.loaders.question_table import read_questions
from rag_lab.records import Corpus, Dataset, EvalSet

DOCUMENTS_DIR = "documents"
#: The questions file, one of these names.
QUESTION_FILES = ("questions.csv", "questions.jsonl")
#: The split of a question whose row names none.
DEFAULT_SPLIT = "test"


def is_documents_folder(path: Path) -> bool:
    """Whether ``path`` holds a ``documents`` folder (the questions file is checked when it is read)."""
    return (path / DOCUMENTS_DIR).is_dir()


def load_documents_folder(folder: str | Path, name: str | None = None, split: str | None = None) -> Dataset:
    """Read a documents folder into a :class:`Dataset` named ``name`` (default: the folder's name); ``split``
    labels the questions whose row gives none (default ``test``). Every document and question is read and
    checked before anything is returned."""
    folder = Path(folder)
    if not is_documents_folder(folder):
        raise DataFormatError(folder, f"not a documents folder: it needs a {DOCUMENTS_DIR}/ folder and "
                                      f"{' or '.join(QUESTION_FILES)}")
    documents = read_documents(folder / DOCUMENTS_DIR)
    questions, notes = read_questions(_questions_file(folder), {d.doc_id for d in documents}, split or DEFAULT_SPLIT)
    name = name or folder.resolve().name
    return Dataset(Corpus(documents, name=name), EvalSet(questions, name=name), name=name, source=str(folder),
                   notes=notes)


def _questions_file(folder: Path) -> Path:
    found = [folder / f for f in QUESTION_FILES if (folder / f).is_file()]
    if len(found) != 1:
        problem = "two questions files: keep one" if found else "no questions file"
        raise DataFormatError(folder, f"{problem}; a documents folder holds {' or '.join(QUESTION_FILES)} beside "
                                      f"{DOCUMENTS_DIR}/")
    return found[0]
