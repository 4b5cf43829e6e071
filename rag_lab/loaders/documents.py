"""Read a folder of text and Markdown files as documents: one file, one document, its id the file's path under the
folder (``handbook/leave.md``), its title the Markdown file's first ``# heading`` or else the file name without its
ending, its text the whole file. The layout in full: docs/your-own-data.md."""

from __future__ import annotations

from pathlib import Path

from rag_lab.errors import DataFormatError
from rag_lab.loaders.jsonl import read_text
from rag_lab.records import Document

#: The endings of the files read as documents (any other file in the folder is an error, so none is left out
#: unnoticed); names starting with a dot (``.DS_Store``, ``.git/``) are skipped.
DOCUMENT_SUFFIXES = (".txt", ".md", ".markdown")
_MARKDOWN = (".md", ".markdown")
#: How many offending files an error lists by name.
_SHOWN = 10


def read_documents(folder: Path) -> list[Document]:
    """The documents of ``folder`` and its subfolders, sorted by id. A folder with no document, a file of another
    kind, a file that is not UTF-8 and a document with no text are errors naming the files."""
    if not folder.is_dir():
        raise DataFormatError(folder, "documents folder not found")
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not _hidden(p, folder))
    others = [p for p in files if p.suffix.lower() not in DOCUMENT_SUFFIXES]
    if others:
        raise DataFormatError(folder, f"not a text or Markdown document: {_names(others, folder)}; documents are "
                                      f"{', '.join(DOCUMENT_SUFFIXES)} files: convert these to text, or move them "
                                      "out of the folder")
    if not files:
        raise DataFormatError(folder, f"no documents: put one {' or '.join(DOCUMENT_SUFFIXES)} file per document "
                                      "in it")
    documents = [_document(path, folder) for path in files]
    empty = [path for path, doc in zip(files, documents, strict=True) if not doc.text.strip()]
    if empty:
        raise DataFormatError(folder, f"{len(empty)} empty document(s), which no retriever can find: "
                                      f"{_names(empty, folder)}; give each its text, or remove it")
    return documents


def document_id(path: Path, folder: Path) -> str:
    """A document's id: its path under the documents folder, with ``/`` between folders."""
    return path.relative_to(folder).as_posix()


def _document(path: Path, folder: Path) -> Document:
    text = read_text(path)
    doc_id = document_id(path, folder)
    return Document(doc_id=doc_id, title=_title(path, text), text=text, metadata={"file": doc_id})


def _title(path: Path, text: str) -> str:
    """A Markdown file's first line when it is a ``# heading``, else the file name without its ending."""
    if path.suffix.lower() in _MARKDOWN:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        if first.startswith("# ") and first[2:].strip():
            return first[2:].strip()
    return path.stem


def _hidden(path: Path, folder: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(folder).parts)


def _names(paths: list[Path], folder: Path) -> str:
    shown = ", ".join(document_id(p, folder) for p in paths[:_SHOWN])
    return shown + (f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else "")
