"""What a user can cause fails with the lab's own errors (``rag_lab.errors``): a bad file is a
``DataFormatError``, a bad setting or argument a ``ConfigError``; both are ``ValueError`` subclasses, so
``except ValueError`` still catches them, and the command line prints them without a traceback.

The modules below raise no bare ``ValueError`` (read with :mod:`ast`, nothing imported), except inside
pydantic validators, where pydantic turns a ``ValueError`` into its ``ValidationError`` (and the lab
turns that into a ``ConfigError``). Made to fail once: before the conversion it listed the 29 bare
raises of the nine modules it first covered; extended to every module but the statistics leaf, it listed 82
more in 42 modules before they were converted."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rag_lab.errors import ConfigError, DataFormatError, RagLabError

ROOT = Path(__file__).resolve().parent.parent

#: Every module of the package but the statistics, a leaf that imports no other layer and raises ``ValueError``
#: as numpy and scipy do: what any other module raises is a user's to fix (bad arguments, settings, data given in code).
USER_FACING = tuple(sorted(str(p.relative_to(ROOT)) for p in (ROOT / "rag_lab").rglob("*.py")
                           if "stats" not in p.relative_to(ROOT / "rag_lab").parts[:1]))
VALIDATORS = {"field_validator", "model_validator", "validator", "root_validator"}


def _is_validator(node: ast.AST) -> bool:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in VALIDATORS:
            return True
    return False


def bare_value_errors(source: str) -> list[int]:
    """Lines that raise a bare ``ValueError`` outside a pydantic validator."""
    lines: list[int] = []

    def visit(node: ast.AST, in_validator: bool) -> None:
        in_validator = in_validator or _is_validator(node)
        if isinstance(node, ast.Raise) and node.exc is not None and not in_validator:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id == "ValueError":
                lines.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, in_validator)

    visit(ast.parse(source), False)
    return lines


def test_user_facing_modules_raise_the_labs_errors() -> None:
    bare = [f"{path}:{line}" for path in USER_FACING
            for line in bare_value_errors((ROOT / path).read_text(encoding="utf-8"))]
    assert not bare, "raise ConfigError (or DataFormatError for a file) instead of ValueError:\n" + "\n".join(bare)


def test_the_check_sees_a_bare_raise_and_skips_validators() -> None:
    source = ("from pydantic import field_validator\n\nclass A:\n    @field_validator('x')\n    def v(cls, x):\n"
              "        raise ValueError('fine: pydantic wraps it')\n\n\ndef f(k):\n    if k < 1:\n"
              "        raise ValueError(f'k must be >= 1, got {k}')\n")
    assert bare_value_errors(source) == [11]


def test_the_hierarchy() -> None:
    assert issubclass(ConfigError, RagLabError) and issubclass(ConfigError, ValueError)
    assert issubclass(DataFormatError, RagLabError) and issubclass(DataFormatError, ValueError)


@pytest.mark.parametrize("call", [
    lambda: __import__("rag_lab.index.base", fromlist=["x"]).reciprocal_rank_fusion([["a"]], k=0),
    lambda: __import__("rag_lab.text_overlap", fromlist=["x"]).covered(["a"], ["a"], min_run=0),
    lambda: __import__("rag_lab.records", fromlist=["x"]).EvalSet([]).select(limit=-1),
], ids=["rrf-k", "min-run", "select-limit"])
def test_a_bad_argument_is_a_config_error(call) -> None:
    with pytest.raises(ConfigError):
        call()
