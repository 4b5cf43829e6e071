"""Prose lives in docs/ and in template files, not in the code (issue 40, item 4): no module docstring of
``rag_lab/`` runs over 15 lines (a module says what it is in a few lines and links to the docs page that holds
the method), and no string literal that is not a docstring is over 300 characters (generated prose and HTML go
into ``templates/`` as package data, word lists into tuples of words, SQL into a ``.sql`` file). Adjacent
literals count as one, as Python's AST merges them. Made to fail once each way: a 301-character literal added to
``rag_lab/paths.py`` was named (``rag_lab/paths.py:35: a string literal of 301 characters``), and
``rag_lab/paths.py`` added to ``ALLOWED`` failed the second test; both were removed again."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rag_lab"
MAX_DOCSTRING_LINES = 15
MAX_LITERAL_CHARS = 300

# Files still allowed to break a rule, each with why. The list only shrinks: a file listed here that no longer
# breaks any rule fails the test, so whoever fixes one removes it too.
ALLOWED: set[str] = set()


def _docstring_nodes(tree: ast.Module) -> set[int]:
    """The ids of the constants that are docstrings (of the module, a class or a function)."""
    owners = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, owners) and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str)}


def offences(path: Path, source: str) -> list[str]:
    """What in ``source`` breaks a rule, each as ``file:line: what``."""
    name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    tree = ast.parse(source)
    found = []
    doc = ast.get_docstring(tree, clean=False)
    if doc is not None and doc.count("\n") + 1 > MAX_DOCSTRING_LINES:
        found.append(f"{name}:1: module docstring of {doc.count(chr(10)) + 1} lines (at most "
                     f"{MAX_DOCSTRING_LINES}: what the module is, and a link to the docs page of the method)")
    docstrings = _docstring_nodes(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                and len(node.value) > MAX_LITERAL_CHARS):
            found.append(f"{name}:{node.lineno}: a string literal of {len(node.value)} characters (at most "
                         f"{MAX_LITERAL_CHARS}: prose and HTML into templates/, word lists into tuples)")
    return found


def package_offences() -> dict[str, list[str]]:
    by_file: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found = offences(path, path.read_text(encoding="utf-8"))
        if found:
            by_file[path.relative_to(ROOT).as_posix()] = found
    return by_file


def test_no_long_module_docstring_or_string_literal() -> None:
    found = package_offences()
    new = [line for name, lines in found.items() if name not in ALLOWED for line in lines]
    assert not new, "prose that belongs in docs/ or a template file:\n" + "\n".join(new)


def test_every_allowed_file_still_needs_it() -> None:
    found = package_offences()
    stale = sorted(name for name in ALLOWED if name not in found)
    assert not stale, f"no longer break a rule; remove them from ALLOWED: {stale}"
    missing = sorted(name for name in ALLOWED if not (ROOT / name).is_file())
    assert not missing, f"allowed files that do not exist: {missing}"


def test_the_rules_see_what_they_are_for(tmp_path: Path) -> None:
    """A long docstring and a long literal are named, adjacent literals count as one, docstrings of classes and
    functions and short literals pass."""
    long_doc = "\n".join(f"line {i}" for i in range(16))
    source = (f'"""{long_doc}"""\n\nX = ("{"a" * 200}"\n     "{"b" * 101}")\nY = "{"c" * 300}"\n\n\n'
              f'def f():\n    """{"d" * 400}"""\n\n\nclass C:\n    """{long_doc}"""\n')
    found = offences(tmp_path / "mod.py", source)
    assert found == [
        "mod.py:1: module docstring of 16 lines (at most 15: what the module is, and a link to the docs page of "
        "the method)",
        "mod.py:18: a string literal of 301 characters (at most 300: prose and HTML into templates/, word lists "
        "into tuples)",
    ]
    assert offences(tmp_path / "ok.py", '"""Short."""\n\nX = "' + "e" * 300 + '"\n') == []
