"""The docstrings' cross-references (``:func:`...```, ``:class:`...```) name things that exist: the Griffe
extension of the API pages (``scripts/griffe_crossrefs.py``) turns each into a link and reports each that
names nothing, which fails ``mkdocs build --strict``. Here it runs without MkDocs: over the package (the
quick loop sees a stale reference without building the site, when the docs extra is installed) and over a
planted package that shows what it links, what it leaves as code and what it reports."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import pytest

griffe = pytest.importorskip("griffe")  # the docs extra (mkdocstrings-python) brings it; the full test command installs it

ROOT = Path(__file__).resolve().parent.parent


def extension(package: str):
    spec = importlib.util.spec_from_file_location("griffe_crossrefs", ROOT / "scripts" / "griffe_crossrefs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SphinxCrossRefs(package)


def load(search_path: Path, name: str = "rag_lab"):
    ext = extension(name)
    package = griffe.load(name, search_paths=[str(search_path)], extensions=griffe.load_extensions(ext),
                          docstring_parser=None)
    return package, ext


def test_every_cross_reference_in_the_package_names_something() -> None:
    _, ext = load(ROOT)
    assert not ext.broken, "docstrings cite names that do not exist:\n" + "\n".join(ext.broken)


def test_links_code_and_reports(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    package = tmp_path / "toylab"
    package.mkdir()
    (package / "__init__.py").write_text(
        '"""See :func:`toylab.mod.good`, :func:`~toylab.mod.good`, :class:`Thing`, :meth:`Thing.go`, :mod:`.mod`,\n'
        ":func:`json.dumps`, :class:`ValueError`, :meth:`the call <toylab.mod.Thing.go>`,\n"
        ':func:`toylab.mod.gone` and :func:`nowhere`."""\n\nfrom toylab.mod import Thing\n')
    (package / "mod.py").write_text(
        '"""Helpers: :func:`_private` and :meth:`Sub.go` (inherited)."""\n\n\ndef good():\n    """Good."""\n\n\n'
        "def _private():\n    pass\n\n\nclass Thing:\n    def go(self):\n        pass\n\n\nclass Sub(Thing):\n    pass\n")
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.griffe_crossrefs"):
        loaded, ext = load(tmp_path, "toylab")
    top = loaded.docstring.value
    for linked in ("[`toylab.mod.good`][toylab.mod.good]", "[`good`][toylab.mod.good]", "[`Thing`][toylab.mod.Thing]",
                   "[`Thing.go`][toylab.mod.Thing.go]", "[`mod`][toylab.mod]", "[`the call`][toylab.mod.Thing.go]"):
        assert linked in top
    for code in ("``json.dumps``", "``ValueError``", "``toylab.mod.gone``", "``nowhere``"):
        assert code in top
    assert "[`Sub.go`][toylab.mod.Thing.go]" in loaded["mod"].docstring.value
    assert "``_private``" in loaded["mod"].docstring.value
    assert len(ext.broken) == 2 and "toylab.mod.gone, which does not exist" in ext.broken[0]
    assert "toylab/__init__.py:1: the docstring of toylab cites :func:`nowhere`, which names nothing" in ext.broken[1]
    assert [r.getMessage() for r in caplog.records] == ext.broken
