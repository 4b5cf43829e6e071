"""Dataset loaders: the shipped synthetic world and samples, BEIR folders, a user's own documents folder, and
multi-hop QA files (HotpotQA, 2WikiMultihopQA, MuSiQue) in their original and Hugging Face layouts; which one a
path holds is told by the layouts of :data:`~rag_lab.loaders.layouts.LAYOUTS`."""

from __future__ import annotations

import functools
from pathlib import Path

from rag_lab.errors import DataFormatError
from rag_lab.loaders.beir import is_beir_folder, load_beir, save_beir
from rag_lab.loaders.documents_folder import is_documents_folder, load_documents_folder
from rag_lab.loaders.hotpotqa import load_hotpotqa
from rag_lab.loaders.layouts import LAYOUTS, Layout, Source, data_suffixes, detect_layout, layouts_text
from rag_lab.loaders.musique import load_musique
from rag_lab.loaders.twins import TWINS_SUFFIX, twins_of
from rag_lab.loaders.world import is_world_folder, load_world
from rag_lab.paths import DATA_DIR
from rag_lab.records import Dataset

__all__ = [
    "LAYOUTS", "Layout", "dataset_help", "dataset_layout", "is_beir_folder", "is_dataset_name", "is_documents_folder",
    "is_world_folder", "load_beir", "load_dataset", "load_documents_folder", "load_hotpotqa", "load_musique",
    "load_qa_file", "load_world", "save_beir", "shipped_datasets", "twins_of"]


def _data_files(folder: Path) -> list[Path]:
    suffixes = data_suffixes()
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in suffixes)


def shipped_datasets() -> list[str]:
    """Names of the datasets shipped in ``data/``: each folder a layout of :data:`LAYOUTS` detects (a
    world or BEIR folder), or that holds exactly one data file a file layout detects (the real samples)."""
    if not DATA_DIR.is_dir():
        return []
    return sorted(p.name for p in DATA_DIR.iterdir() if p.is_dir() and _holds_a_dataset(p))


def _holds_a_dataset(folder: Path) -> bool:
    if detect_layout(Source(folder), folders=True) is not None:
        return True
    files = _data_files(folder)
    return len(files) == 1 and _file_has_layout(files[0], files[0].stat().st_mtime_ns, tuple(LAYOUTS))


@functools.lru_cache(maxsize=64)
def _file_has_layout(path: Path, mtime_ns: int, layouts: tuple[str, ...]) -> bool:
    """Whether a file layout detects ``path`` (reads the file: cached per file version and set of layouts)."""
    return detect_layout(Source(path), folders=False) is not None


def dataset_help() -> str:
    """What ``--dataset`` takes, from the shipped datasets and the registered layouts (help texts, errors)."""
    suffixes = ", ".join(data_suffixes())
    return (f"a shipped dataset name ({', '.join(shipped_datasets()) or 'none shipped'}), "
            f"{layouts_text(folders=True)}, or {layouts_text(folders=False)} ({suffixes}; the layout is told "
            f"from the content); any of them followed by {TWINS_SUFFIX!r} gives its unanswerable twins")


def is_dataset_name(text: str) -> bool:
    """Whether ``text`` names a shipped dataset or its twins (``hotpotqa_sample``, ``hotpotqa_sample_twins``),
    which a sweep file keeps as a name, never a path."""
    return text in shipped_datasets() or (text.endswith(TWINS_SUFFIX)
                                          and text[:-len(TWINS_SUFFIX)] in shipped_datasets())


def load_qa_file(path: str | Path, name: str | None = None, split: str = "dev") -> Dataset:
    """A dataset file, its layout told from the content by the file layouts of :data:`LAYOUTS` (HotpotQA,
    2WikiMultihopQA, MuSiQue, in JSON, JSON Lines or Parquet, and any layout registered later)."""
    source = Source(Path(path))
    layout = detect_layout(source, folders=False)
    if layout is None:
        raise _unknown_file(source)
    return layout.load(source, name, split)


def _unknown_file(source: Source) -> DataFormatError:
    """Why no file layout took ``source``: its read error, no examples, or a first record of no known layout."""
    if source.read_error is not None:
        return source.read_error
    if not source.records:
        return DataFormatError(source.path, "no examples")
    where, first = source.records[0]
    if not isinstance(first, dict):
        return where.error("expected a JSON object")
    return where.error(f"not an example of a known layout: expected {layouts_text(folders=False)}; "
                       f"keys are {sorted(first)[:8]}")


def load_dataset(name_or_path: str | Path, split: str | None = None) -> Dataset:
    """Load a shipped dataset by name, or a folder or file of any layout of :data:`LAYOUTS` (a world or
    BEIR folder, a HotpotQA, 2WikiMultihopQA or MuSiQue file in JSON, JSON Lines or Parquet).

    ``split`` picks a BEIR folder's qrels file and labels a QA file's questions (default ``dev``); a
    world carries its split on each question (select with :meth:`EvalSet.select`). A name or path followed by
    ``_twins`` (``hotpotqa_sample_twins``) gives the unanswerable twins of its questions
    (:func:`~rag_lab.loaders.twins.twins_of`)."""
    text = str(name_or_path)
    if (base := _twins_base(text)) is not None:
        return twins_of(load_dataset(base, split), name=Path(text).name)
    return _load_path(_dataset_path(name_or_path), split, name=text if text in shipped_datasets() else None)


def dataset_layout(name_or_path: str | Path) -> str:
    """The name in :data:`LAYOUTS` of the layout :func:`load_dataset` reads ``name_or_path`` with (for twins, their
    dataset's layout)."""
    if (base := _twins_base(str(name_or_path))) is not None:
        return dataset_layout(base)
    path = _dataset_path(name_or_path)
    layout = None
    if path.is_dir():
        layout = detect_layout(Source(path), folders=True)
        files = _data_files(path)
        if layout is None and len(files) == 1:
            path = files[0]
    if path.is_file():
        layout = detect_layout(Source(path), folders=False)
    if layout is None:
        raise DataFormatError(path, f"no layout reads it; give {dataset_help()}")
    return next(name for name, known in LAYOUTS.items() if known is layout)


def _twins_base(text: str) -> str | None:
    """The dataset whose twins ``text`` names (``hotpotqa_sample_twins``: a name ending in :data:`TWINS_SUFFIX` that is
    no shipped dataset and no existing path), else None."""
    if text.endswith(TWINS_SUFFIX) and text not in shipped_datasets() and not Path(text).exists():
        return text[:-len(TWINS_SUFFIX)]
    return None


def _dataset_path(name_or_path: str | Path) -> Path:
    """The folder of a shipped dataset's name, else the path given; one that does not exist is an error."""
    text = str(name_or_path)
    path = DATA_DIR / text if text in shipped_datasets() else Path(name_or_path)
    if not path.exists():
        raise DataFormatError(path, f"no such dataset; give {dataset_help()}")
    return path


def _load_path(path: Path, split: str | None, name: str | None = None) -> Dataset:
    if path.is_file():
        return load_qa_file(path, name=name, split=split or "dev")
    layout = detect_layout(Source(path), folders=True)
    if layout is not None:
        return layout.load(Source(path), name, split)
    files = _data_files(path)
    if len(files) != 1:
        found = f"found {[f.name for f in files]}" if files else "found none"
        raise DataFormatError(path, f"not a dataset folder: expected {layouts_text(folders=True)}, or a folder "
                                    f"holding one data file ({', '.join(data_suffixes())}); {found}")
    return load_qa_file(files[0], name=name or path.name, split=split or "dev")
