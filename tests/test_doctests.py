"""The examples in the docstrings run, in every test run (the quick loop too), as ``python -m pytest
--doctest-modules rag_lab`` runs them: with ELLIPSIS, and ``# doctest: +SKIP`` for an example that needs a
run directory, a browser or MLflow; the course's helpers' (notebooks/lessons/) too. Only the modules that hold an
example (``>>>`` in their source) are imported, so collecting this file stays cheap."""

from __future__ import annotations

import doctest
import importlib
import types
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "rag_lab"
#: The course's helpers beside the notebooks (importable as ``lessons``: pyproject.toml's pytest pythonpath).
LESSONS = PACKAGE.parent / "notebooks" / "lessons"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


WITH_EXAMPLES = sorted(module_name(p, package) for package in (PACKAGE, LESSONS) for p in package.rglob("*.py")
                       if ">>>" in p.read_text(encoding="utf-8"))


def run_examples(module: types.ModuleType) -> tuple[int, int, str]:
    """(examples tried, failed, the runner's report) of ``module``'s docstrings."""
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(module, module.__name__):
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    return result.attempted, result.failed, "".join(report)


def test_the_modules_with_examples_are_found() -> None:
    assert {"rag_lab.registry", "rag_lab.pipeline.config", "lessons.settings"} <= set(WITH_EXAMPLES)


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples_run(name: str) -> None:
    attempted, failed, report = run_examples(importlib.import_module(name))
    assert not failed, f"{failed} of {attempted} docstring example(s) of {name} fail:\n{report}"


def test_a_wrong_example_fails() -> None:
    """The runner sees a wrong example (made to fail once: registry.py's traceback example quoted the message
    as a KeyError would; UnknownName prints it bare)."""
    module = types.ModuleType("planted", '>>> from rag_lab.registry import Registry\n>>> Registry("x")["y"]\n'
                                         "Traceback (most recent call last):\n...\n"
                                         "rag_lab.registry.UnknownName: \"unknown x 'y'; choose one of \"\n")
    attempted, failed, report = run_examples(module)
    assert (attempted, failed) == (2, 1) and "UnknownName: unknown x 'y'" in report
