"""Metric families are rows of :data:`rag_lab.evaluation.families.FAMILIES`, and no module but that one reads a
metric name's prefix: the source of ``rag_lab/`` (read with :mod:`ast`, nothing imported) holds no string that is
a family's prefix or starts a prefix test with one (``startswith("cost_")``, ``removeprefix("quality_")``, a
regex ``^(quality|cost)_``). Plus what each family says: its side, its value when absent, its replayability."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pytest

from rag_lab.evaluation.families import (
    FAMILIES,
    absent_value,
    family_name,
    is_cost,
    is_metric,
    is_quality,
    is_reproducible,
    metric_columns,
    short_name,
)
from rag_lab.evaluation.metric_table import METRICS

PACKAGE = Path(__file__).resolve().parent.parent / "rag_lab"
REGISTRY = PACKAGE / "evaluation" / "families.py"
PREFIXES = tuple(family.prefix for family in FAMILIES.values())
PREFIX_CALLS = {"startswith", "removeprefix", "match", "fullmatch", "search", "compile"}
#: A regex alternation of family names (``(quality|cost)_``).
ALTERNATION = re.compile("|".join(rf"\b{re.escape(p[:-1])}\|" for p in PREFIXES))


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring constants (a docstring may say ``cost_*``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def prefix_tests(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every metric-prefix test in ``source``: a string constant that is a family's prefix
    (bound to a name or passed anywhere), a regex alternation of family names, or a constant starting with a
    prefix handed to ``startswith``/``removeprefix``/a regex call."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if node.value in PREFIXES or ALTERNATION.search(node.value):
                found.append((node.lineno, node.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PREFIX_CALLS:
            args = [a for arg in node.args for a in (arg.elts if isinstance(arg, ast.Tuple) else [arg])]
            found += [(a.lineno, a.value) for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                      and a.value.lstrip("^").startswith(PREFIXES) and a.value not in PREFIXES]
    return sorted(set(found))


def test_no_metric_prefix_test_outside_the_family_registry() -> None:
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{line}: {text!r}"
                 for path in sorted(PACKAGE.rglob("*.py")) if path != REGISTRY
                 for line, text in prefix_tests(path.read_text(encoding="utf-8"))]
    assert not offenders, ("metric families are asked from rag_lab.evaluation.families (is_quality, is_cost, "
                           "absent_value, ...), not matched by prefix:\n" + "\n".join(offenders))


@pytest.mark.parametrize("source", [
    'cols = [c for c in frame.columns if c.startswith(("quality_", "cost_"))]',
    'COST_PREFIXES = ("cost_", "spent_", "run_")',
    '_METRIC = re.compile(r"^(quality|cost|spent|run)_[a-z0-9_]+$")',
    'ok = column.startswith("cost_calls_")',
    'name = column.removeprefix("quality_")',
])
def test_the_check_sees_each_form_of_prefix_test(source: str) -> None:
    assert prefix_tests(source)


def test_the_check_leaves_names_and_docstrings_alone() -> None:
    source = '"""Means of every ``quality_*`` and ``cost_*`` column."""\nCOL = "cost_llm_calls"\nf"cost_calls_{role}"\n'
    assert prefix_tests(source) == []


def test_every_registered_metric_is_in_a_family() -> None:
    assert [name for name in METRICS if not is_metric(name)] == []


def test_what_each_family_says() -> None:
    assert list(FAMILIES) == ["quality", "cost", "spent", "run"]
    assert family_name("cost_llm_calls") == "cost" and family_name("param_x") is None and family_name(3) is None
    assert is_quality("quality_f1") and not is_cost("quality_f1")
    assert all(is_cost(c) for c in ("cost_tokens", "spent_usd", "run_wall_latency_s"))
    assert absent_value("cost_calls_judge") == 0.0 and math.isnan(absent_value("quality_f1"))
    assert math.isnan(absent_value("candidate_id"))
    assert [c for c in ("seed", "quality_f1", "cost_usd", "spent_usd", "run_wall_latency_s")
            if is_reproducible(c)] == ["seed", "quality_f1", "cost_usd"]
    assert metric_columns(["candidate_id", "quality_f1", "param_k", "cost_usd"]) == ["quality_f1", "cost_usd"]
    assert short_name("cost_tokens") == "tokens" and short_name("param_k") == "param_k"
