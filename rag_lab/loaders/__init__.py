"""Dataset loaders: the shipped synthetic world, BEIR folders and HotpotQA files."""

from __future__ import annotations

from pathlib import Path

from rag_lab.errors import DataFormatError
from rag_lab.loaders.beir import load_beir, save_beir
from rag_lab.loaders.hotpotqa import load_hotpotqa
from rag_lab.loaders.world import is_world_folder, load_world
from rag_lab.paths import DATA_DIR
from rag_lab.records import Dataset

__all__ = ["load_dataset", "load_beir", "save_beir", "load_hotpotqa", "load_world", "shipped_datasets"]


def shipped_datasets() -> list[str]:
    """Names of the datasets shipped in ``data/`` (e.g. ``world``)."""
    if not DATA_DIR.is_dir():
        return []
    return sorted(p.name for p in DATA_DIR.iterdir() if is_world_folder(p))


def load_dataset(name_or_path: str | Path, split: str | None = None) -> Dataset:
    """Load a shipped dataset by name, a world or BEIR folder, or a HotpotQA JSON/JSONL file.

    ``split`` only matters for BEIR folders (which qrels file to read); other formats carry
    their split on each question (select with :meth:`EvalSet.select`).
    """
    text = str(name_or_path)
    if text in shipped_datasets():
        return load_world(DATA_DIR / text, name=text)
    path = Path(name_or_path)
    if path.is_dir():
        return load_world(path, name=path.name) if is_world_folder(path) else load_beir(path, split=split)
    if path.is_file():
        return load_hotpotqa(path)
    raise DataFormatError(
        path,
        f"no such dataset; give a shipped name ({', '.join(shipped_datasets()) or 'none shipped'}), "
        "a BEIR or world folder, or a HotpotQA .json/.jsonl file",
    )
