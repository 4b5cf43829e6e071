"""The dataset layouts, by name (:data:`LAYOUTS`): how to tell each one from a path and how to read it; the one list
:func:`rag_lab.loaders.load_dataset`, :func:`rag_lab.loaders.shipped_datasets` and :func:`layouts_text` read.
A new layout is one detector (it sees a :class:`Source`) and one loader::

    LAYOUTS.add("csv", Layout(detect=lambda source: source.path.suffix == ".csv", load=load_csv,
                              what="a CSV file of question,answer rows", suffixes=(".csv",)))"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from rag_lab.errors import DataFormatError
from rag_lab.loaders import beir, documents_folder, hotpotqa, musique, world
from rag_lab.loaders.rows import Where, read_records
from rag_lab.records import Dataset
from rag_lab.registry import Registry

__all__ = ["LAYOUTS", "QA_SUFFIXES", "Layout", "Source", "data_suffixes", "detect_layout", "layouts_text"]

#: File endings of the multi-hop QA layouts' files (the container itself is told from the content).
QA_SUFFIXES = (".json", ".jsonl", ".parquet")


class Source:
    """A dataset path as the detectors see it: ``path``, and for a file its records, read once on demand.
    A file that is no JSON array, JSON Lines or Parquet file has no records; its read error is kept
    (:attr:`read_error`) for the message when no layout claims the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.read_error: DataFormatError | None = None

    @cached_property
    def records(self) -> list[tuple[Where, Any]]:
        """The file's records with their locations (empty for a folder or an unreadable file)."""
        if not self.path.is_file():
            return []
        try:
            return list(read_records(self.path))
        except DataFormatError as exc:
            self.read_error = exc
            return []

    @property
    def first(self) -> dict[str, Any] | None:
        """The file's first record when it is a JSON object, else None."""
        first = self.records[0][1] if self.records else None
        return first if isinstance(first, dict) else None

    def has(self, *keys: str) -> bool:
        """Whether the first record has every one of ``keys``."""
        return self.first is not None and all(key in self.first for key in keys)


@dataclass(frozen=True)
class Layout:
    """One dataset layout: ``detect(source)`` tells it, ``load(source, name, split)`` reads it; ``what``
    describes it for help texts and errors; ``suffixes`` are the endings of its data files (empty for a
    folder layout): a ``data/`` folder holding one such file is a shipped dataset."""

    detect: Callable[[Source], bool]
    load: Callable[[Source, str | None, str | None], Dataset]
    what: str
    suffixes: tuple[str, ...] = ()

    @property
    def is_folder(self) -> bool:
        return not self.suffixes


#: The layouts, in the order they are tried.
LAYOUTS: Registry[Layout] = Registry("dataset layout")


def detect_layout(source: Source, folders: bool) -> Layout | None:
    """The first registered layout (folder layouts for a folder, file layouts for a file) that detects
    ``source``, else None."""
    return next((layout for layout in LAYOUTS.values() if layout.is_folder == folders and layout.detect(source)), None)


def data_suffixes() -> tuple[str, ...]:
    """The file endings of every file layout's data files, once each."""
    return tuple(dict.fromkeys(s for layout in LAYOUTS.values() for s in layout.suffixes))


def layouts_text(folders: bool | None = None) -> str:
    """The registered layouts as one phrase ("a X, a Y or a Z"): the folder ones, the file ones, or all."""
    whats = [layout.what for layout in LAYOUTS.values() if folders is None or layout.is_folder == folders]
    return whats[0] if len(whats) == 1 else f"{', '.join(whats[:-1])} or {whats[-1]}"


def _qa_file(load: Callable[..., Dataset], **fixed: Any) -> Callable[[Source, str | None, str | None], Dataset]:
    """A multi-hop QA loader called with the records the detectors already read."""
    return lambda source, name, split: load(source.path, name=name, split=split or "dev", records=source.records,
                                            **fixed)


LAYOUTS.add("world", Layout(
    lambda source: world.is_world_folder(source.path),
    lambda source, name, split: world.load_world(source.path, name=name or source.path.name),
    f"a synthetic-world folder ({', '.join(world.WORLD_FILES)})"))
LAYOUTS.add("beir", Layout(
    lambda source: beir.is_beir_folder(source.path),
    lambda source, name, split: beir.load_beir(source.path, split=split, name=name),
    "a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)"))
LAYOUTS.add("documents", Layout(
    lambda source: documents_folder.is_documents_folder(source.path),
    lambda source, name, split: documents_folder.load_documents_folder(source.path, name=name, split=split),
    "a documents folder (documents/ of .txt or .md files, questions.csv or questions.jsonl)"))
LAYOUTS.add("2wikimultihopqa", Layout(
    lambda source: source.has(*hotpotqa.TWOWIKI_KEYS), _qa_file(hotpotqa.load_hotpotqa, variant=hotpotqa.TWOWIKI),
    "a 2WikiMultihopQA file (examples with 'context' and 'evidences')", QA_SUFFIXES))
LAYOUTS.add("hotpotqa", Layout(
    lambda source: source.has(*hotpotqa.HOTPOTQA_KEYS), _qa_file(hotpotqa.load_hotpotqa, variant=hotpotqa.HOTPOTQA),
    "a HotpotQA file (examples with 'context'; original or Hugging Face layout)", QA_SUFFIXES))
LAYOUTS.add("musique", Layout(
    lambda source: source.has(*musique.MUSIQUE_KEYS), _qa_file(musique.load_musique),
    "a MuSiQue file (examples with 'paragraphs')", QA_SUFFIXES))
