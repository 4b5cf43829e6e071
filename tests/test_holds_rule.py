"""One rule says whether a paired difference shows its claim (:func:`rag_lab.stats.holds.holds`): a declared
finding, a measured row of the exploratory table and a robustness cell give its answer on every case, and no
other module compares an interval's bound with 0 to decide (read with :mod:`ast`)."""

from __future__ import annotations

import ast
import itertools
import math
from pathlib import Path

import pandas as pd
import pytest

from rag_lab.experiments.engine.comparisons import is_measured
from rag_lab.experiments.engine.findings import Finding
from rag_lab.stats.holds import holds, on_claimed_side
from tools.course.robustness_run import holds as robustness_holds

PACKAGE = Path(__file__).resolve().parent.parent / "rag_lab"
NAN = math.nan
ALPHA = 0.05
#: (p, lo, hi, delta, n): significant or not, each side of 0, straddling it, undefined, no questions, a
#: difference outside an equivalence margin with a small p (where the robustness table once said "holds").
CASES = list(itertools.product(
    (0.01, 0.2, NAN), ((0.02, 0.08, 0.05), (-0.08, -0.02, -0.05), (-0.03, 0.01, -0.01), (NAN, NAN, NAN),
                       (-0.2, 0.3, 0.1)), (0, 40)))
#: Where a bound may be compared with 0 for something other than a verdict: the colour of a row already measured.
NOT_A_VERDICT = {("report/page.py", "_measured_class")}


def _finding(direction: str, p: float, lo: float, hi: float, delta: float, n: int) -> Finding:
    return Finding(claim="c", metric="quality_f1", candidate="a", reference="b", direction=direction,  # type: ignore[arg-type]
                   margin=0.06, delta=delta, lo=lo, hi=hi, n=n, share_differ=0.1, mean=0.5, reference_mean=0.5, p=p)


@pytest.mark.parametrize("direction", ["above", "below", "none"])
def test_a_declared_finding_and_a_robustness_cell_follow_the_one_rule(direction: str) -> None:
    for p, (lo, hi, delta), n in CASES:
        expected = holds(direction, p, lo, hi, ALPHA, delta=delta, margin=0.06, n=n)  # type: ignore[arg-type]
        cell = {"p_holm": p, "lo": lo, "hi": hi, "delta": delta, "n": n}
        assert _finding(direction, p, lo, hi, delta, n).holds == expected, (direction, p, lo, hi, delta, n)
        assert robustness_holds({"direction": direction, "margin": 0.06}, cell, ALPHA) == expected, cell


def test_a_measured_row_follows_the_one_rule() -> None:
    for p, (lo, hi, _), _ in CASES:
        assert is_measured(pd.Series({"lo": lo, "hi": hi, "p_holm": p})) == holds("two-sided", p, lo, hi, ALPHA)
        assert is_measured(pd.Series({"lo": lo, "hi": hi})) == on_claimed_side("two-sided", lo, hi)


def test_the_rule() -> None:
    assert holds("above", 0.01, 0.02, 0.08) and not holds("above", 0.2, 0.02, 0.08) and not holds("above", NAN, 1, 2)
    assert holds("two-sided", None, -0.3, -0.1) and not holds("two-sided", 0.01, -0.1, 0.1)
    assert holds("none", 0.01, -0.02, 0.02, delta=0.0, margin=0.06) and not holds("none", 0.01, -0.2, 0.3, delta=0.1,
                                                                                     margin=0.06)
    assert not holds("above", 0.01, 0.02, 0.08, n=0)
    with pytest.raises(ValueError, match="direction"):
        on_claimed_side("sideways", 0, 1)  # type: ignore[arg-type]


def _is_bound(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in ("lo", "hi")
    if isinstance(node, ast.Attribute):
        return node.attr in ("lo", "hi")
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value in ("lo", "hi") or node.slice.value.endswith(("_lo", "_hi"))
    return False


def bound_tests(source: str) -> list[tuple[str, int]]:
    """``(function, line)`` of each comparison of an interval bound (``lo``, ``x.hi``, ``row["real_lo"]``) with 0."""
    found = []
    for func in ast.walk(ast.parse(source)):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(func):
                if (isinstance(node, ast.Compare) and len(node.ops) == 1
                        and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value == 0
                        and _is_bound(node.left)):
                    found.append((func.name, node.lineno))
    return found


def test_no_other_module_compares_a_bound_with_zero() -> None:
    offenders = [f"{path.relative_to(PACKAGE)}:{line} ({name})" for path in sorted(PACKAGE.rglob("*.py"))
                 if path != PACKAGE / "stats" / "holds.py"
                 for name, line in bound_tests(path.read_text(encoding="utf-8"))
                 if (str(path.relative_to(PACKAGE)), name) not in NOT_A_VERDICT]
    assert not offenders, "ask rag_lab.stats.holds (holds, on_claimed_side):\n" + "\n".join(offenders)


def test_the_check_sees_the_old_rules() -> None:
    assert bound_tests('def f(cell):\n    return cell["lo"] > 0 if up else cell["hi"] < 0\n') == [("f", 2), ("f", 2)]
    assert bound_tests("def g(diff):\n    return diff.lo > 0\n") == [("g", 2)]
    assert bound_tests('def h(out):\n    return (out["real_lo"] > 0) | (out["real_hi"] < 0)\n') == [("h", 2), ("h", 2)]
