"""Dataset loaders: the shipped synthetic world and samples, BEIR folders, and multi-hop QA files
(HotpotQA, 2WikiMultihopQA, MuSiQue) in their original and Hugging Face layouts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rag_lab.errors import DataFormatError
from rag_lab.loaders.beir import load_beir, save_beir
from rag_lab.loaders.hotpotqa import load_hotpotqa
from rag_lab.loaders.musique import load_musique
from rag_lab.loaders.rows import Where, read_records
from rag_lab.loaders.world import is_world_folder, load_world
from rag_lab.paths import DATA_DIR
from rag_lab.records import Dataset

__all__ = [
    "load_dataset", "load_beir", "save_beir", "load_hotpotqa", "load_musique", "load_qa_file", "load_world",
    "shipped_datasets",
]

#: File endings of a shipped sample's data file (the layout itself is read from the content).
DATA_SUFFIXES = (".json", ".jsonl", ".parquet")


def is_beir_folder(path: Path) -> bool:
    return (path / "corpus.jsonl").is_file() and (path / "queries.jsonl").is_file() and (path / "qrels").is_dir()


def _data_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in DATA_SUFFIXES)


def shipped_datasets() -> list[str]:
    """Names of the datasets shipped in ``data/``: the ``world`` and the real samples
    (a folder that is a world or BEIR folder, or holds exactly one data file)."""
    if not DATA_DIR.is_dir():
        return []
    return sorted(
        p.name for p in DATA_DIR.iterdir()
        if p.is_dir() and (is_world_folder(p) or is_beir_folder(p) or len(_data_files(p)) == 1)
    )


def load_qa_file(path: str | Path, name: str | None = None, split: str = "dev") -> Dataset:
    """A multi-hop QA file, its dataset and layout told from the content: MuSiQue when the first
    example has ``paragraphs``, else HotpotQA (2WikiMultihopQA when it has ``evidences``)."""
    path = Path(path)
    records: list[tuple[Where, Any]] = list(read_records(path))
    if not records:
        raise DataFormatError(path, "no examples")
    where, first = records[0]
    if not isinstance(first, dict):
        raise where.error("expected a JSON object")
    if "paragraphs" in first:
        return load_musique(path, name=name, split=split, records=records)
    if "context" in first:
        return load_hotpotqa(path, name=name, split=split, records=records)
    raise where.error(
        "not a known multi-hop QA example: expected 'context' (HotpotQA, 2WikiMultihopQA) "
        f"or 'paragraphs' (MuSiQue); keys are {sorted(first)[:8]}"
    )


def load_dataset(name_or_path: str | Path, split: str | None = None) -> Dataset:
    """Load a shipped dataset by name, a world or BEIR folder, or a multi-hop QA file
    (HotpotQA, 2WikiMultihopQA or MuSiQue; JSON, JSON Lines or Parquet).

    ``split`` only matters for BEIR folders (which qrels file to read); other formats carry
    their split on each question (select with :meth:`EvalSet.select`).
    """
    text = str(name_or_path)
    if text in shipped_datasets():
        return _load_path(DATA_DIR / text, split, name=text)
    path = Path(name_or_path)
    if path.exists():
        return _load_path(path, split)
    raise DataFormatError(
        path,
        f"no such dataset; give a shipped name ({', '.join(shipped_datasets()) or 'none shipped'}), "
        "a BEIR or world folder, or a HotpotQA / 2WikiMultihopQA / MuSiQue file (.json, .jsonl, .parquet)",
    )


def _load_path(path: Path, split: str | None, name: str | None = None) -> Dataset:
    if path.is_file():
        return load_qa_file(path, name=name)
    if is_world_folder(path):
        return load_world(path, name=name or path.name)
    if is_beir_folder(path) or not _data_files(path):
        return load_beir(path, split=split, name=name)
    files = _data_files(path)
    if len(files) > 1:
        raise DataFormatError(path, f"a dataset folder holds one data file, found {[f.name for f in files]}")
    return load_qa_file(files[0], name=name or path.name)
