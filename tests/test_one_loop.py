"""One loop runs (candidate, question) pairs: only rag_lab.experiments.engine.evaluator slices work units and opens a
store session, so a grid sweep, a search and a race cannot drift apart in how they chunk, store or show progress."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rag_lab"
LOOP = PACKAGE / "experiments" / "engine" / "evaluator.py"


def loop_calls(source: str) -> list[str]:
    """The calls in ``source`` that only the loop may make: building a ``WorkUnit``, opening a store session."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name in ("WorkUnit", "begin_session", "end_session"):
                found.append(f"{name} (line {node.lineno})")
    return found


def test_only_the_evaluator_slices_work_and_opens_sessions():
    others = {str(p.relative_to(PACKAGE)): calls for p in sorted(PACKAGE.rglob("*.py")) if p != LOOP
              for calls in [loop_calls(p.read_text(encoding="utf-8"))] if calls}
    assert not others, f"modules besides the evaluator that run the loop's steps: {others}"
    assert loop_calls(LOOP.read_text(encoding="utf-8")), "the evaluator no longer builds units or opens a session"


def test_the_check_sees_a_second_loop():
    planted = "def run(store, plan):\n    s = store.begin_session('serial', 1)\n    u = WorkUnit(candidate_id='c')\n"
    assert loop_calls(planted) == ["begin_session (line 2)", "WorkUnit (line 3)"]
