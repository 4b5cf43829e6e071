"""Imports only go down the layers, and no modules import each other in a circle.

The layers, bottom up (docs/design.md, "Layers"): a module may import its own layer and the layers below,
never one above. Every import statement counts: at module level, inside a function (a lazy import of a
heavy package is fine, a lazy import that dodges a cycle is not: the cycle check sees it) and under
``TYPE_CHECKING``. Nothing in the package imports what lives beside it: the course's helpers (``lessons``, in
notebooks/) and its tools (``tools``). The test reads the source with :mod:`ast`; it imports nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "rag_lab"

#: Bottom-up. Each entry: the layer's name and its modules: a name covers the module and its submodules,
#: a name ending in ``*`` every module whose name starts so; the longest match decides.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("records", ("rag_lab.records", "rag_lab.errors", "rag_lab.paths", "rag_lab.config_files", "rag_lab.registry",
                 "rag_lab.text_overlap", "rag_lab.native_build", "rag_lab.sqlite_files")),
    ("loaders/world", ("rag_lab.loaders", "rag_lab.world")),
    ("chunking/embedding", ("rag_lab.chunking", "rag_lab.embedding")),
    ("index", ("rag_lab.index",)),
    ("llm", ("rag_lab.llm",)),
    ("pipeline", ("rag_lab.pipeline",)),
    ("evaluation", ("rag_lab.evaluation",)),
    ("stats", ("rag_lab.stats",)),
    # experiments by concern: the sweep engine, then search and racing over it, then the runner (a spec's grid or
    # search) and the package's front door, then the simulator against a real model (which runs sweeps)
    ("experiments/engine", ("rag_lab.experiments.engine",)),
    ("experiments/tuning", ("rag_lab.experiments.tuning",)),
    ("experiments", ("rag_lab.experiments",)),
    ("experiments/calibration", ("rag_lab.experiments.calibration",)),
    ("figures", ("rag_lab.figures", "rag_lab.report")),
    ("widgets", ("rag_lab.widgets",)),
    ("cli", ("rag_lab.cli", "rag_lab.data_build")),
    # the contract checks and fakes for plug-in authors: above everything, so nothing in the package imports them
    ("testing", ("rag_lab.testing",)),
)

#: Packages beside the library, not in its wheel, that no module of it imports: the course's helpers
#: (notebooks/lessons/, what the notebooks import) and its authoring tools (tools/).
OUTSIDE = ("lessons", "tools")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int:
    """The index of the layer holding ``module`` (the package ``rag_lab`` itself re-exports records)."""
    if module == "rag_lab":
        return 0
    best, depth = None, -1
    for i, (_, names) in enumerate(LAYERS):
        for name in names:
            hit = module.startswith(name[:-1]) if name.endswith("*") else (
                module == name or module.startswith(name + "."))
            if hit and len(name) > depth:
                best, depth = i, len(name)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS")
    return best


def imports_of(module: str) -> list[tuple[str, int]]:
    """``(imported rag_lab module, line)`` for every import statement of ``module``, at any depth."""
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if is_package else module.split(".")[:-1]
                base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
            # ``from pkg import sub`` imports the submodule pkg.sub when there is one
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for target in targets:
            if target == "rag_lab" or target.startswith("rag_lab."):
                while target not in MODULES:
                    target = target.rsplit(".", 1)[0]
                found.append((target, node.lineno))
    return found


def outside_imports() -> list[str]:
    """``module (line n) imports name`` for every import statement of the package, at any depth, of a package in
    :data:`OUTSIDE`."""
    found = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            found += [f"{module} (line {node.lineno}) imports {n}" for n in names if n.split(".")[0] in OUTSIDE]
    return found


def upward_imports() -> list[str]:
    bad = []
    for module in MODULES:
        mine = layer_of(module)
        for target, line in imports_of(module):
            theirs = layer_of(target)
            if theirs > mine:
                bad.append(f"{module} (line {line}) imports {target} "
                           f"(layer {LAYERS[mine][0]} imports {LAYERS[theirs][0]}, above it)")
    return bad


def import_cycles() -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), over every import statement;
    a package's ``__init__`` importing its own submodules is not a cycle by itself."""
    graph = {m: {t for t, _ in imports_of(m) if t != m} for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_imports_only_go_down_the_layers() -> None:
    bad = upward_imports()
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_nothing_in_the_package_imports_the_testing_kit() -> None:
    users = [f"{m} (line {line})" for m in MODULES if not m.startswith("rag_lab.testing")
             for target, line in imports_of(m) if target.startswith("rag_lab.testing")]
    assert not users, "rag_lab.testing is for tests only; imported by " + ", ".join(users)


def test_the_package_imports_nothing_beside_it() -> None:
    """The library runs without the repository around it: no module imports the course's helpers or tools. Made to
    fail once: a function-level ``from lessons.notebook import lesson_sweep`` added to rag_lab/widgets/session.py was
    named (``rag_lab.widgets.session (line 46) imports lessons.notebook``), then removed."""
    bad = outside_imports()
    assert not bad, "the course's helpers and tools are not in the wheel; imported by:\n" + "\n".join(bad)


def test_no_import_cycles() -> None:
    cycles = import_cycles()
    assert not cycles, "modules that import each other in a circle:\n" + "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("planted", ["upward", "cycle", "outside"])
def test_the_checks_see_a_planted_violation(planted: str, monkeypatch, tmp_path: Path) -> None:
    """The checks fail on a planted upward import (index imports the pipeline), a planted cycle made of
    two function-level imports (loaders -> world.generator stays in its layer but closes a circle) and a planted
    function-level import of the course's helpers (the figures import lessons.robustness)."""
    source = MODULES["rag_lab.index.base"].read_text(encoding="utf-8")
    planted_index = tmp_path / "base.py"
    if planted == "outside":
        figures = MODULES["rag_lab.figures.where_grid"].read_text(encoding="utf-8")
        planted_figures = tmp_path / "where_grid.py"
        planted_figures.write_text(figures + "\n\ndef _planted():\n    from lessons.robustness import load_table\n")
        monkeypatch.setitem(MODULES, "rag_lab.figures.where_grid", planted_figures)
        assert any(b.startswith("rag_lab.figures.where_grid (line") and b.endswith("imports lessons.robustness")
                   for b in outside_imports())
    elif planted == "upward":
        planted_index.write_text(source + "\n\ndef _planted():\n    from rag_lab.pipeline import PipelineConfig\n")
        monkeypatch.setitem(MODULES, "rag_lab.index.base", planted_index)
        assert any(b.startswith("rag_lab.index.base (line") and "imports rag_lab.pipeline" in b for b in upward_imports())
    else:
        chunking = MODULES["rag_lab.chunking"].read_text(encoding="utf-8")
        planted_chunking = tmp_path / "chunking.py"
        planted_chunking.write_text(chunking + "\n\ndef _planted():\n    from rag_lab.index import base\n")
        monkeypatch.setitem(MODULES, "rag_lab.chunking", planted_chunking)
        assert any({"rag_lab.chunking", "rag_lab.index.base"} <= set(c) for c in import_cycles())
        assert any("imports rag_lab.index" in b for b in upward_imports())
