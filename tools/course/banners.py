"""The where clause each lesson's banner quotes, word for word: :func:`quoted_keys` finds the robustness rows a
notebook quotes, :func:`where_line` writes where one holds in the where-it-holds grid's symbols.
``scripts/update_banners.py`` rewrites the banners from them, ``tests/test_course.py`` checks them, and the lesson
map (:mod:`tools.course.map`) shows the headline's."""

from __future__ import annotations

import re

from lessons.robustness import RobustnessTable, load_table
from rag_lab.figures import where_grid

__all__ = ["quoted_keys", "where_line"]


def quoted_keys(code: str) -> list[str]:
    """The robustness rows a notebook's ``code`` quotes, in order: ``robustness.quote("key")``,
    ``robustness.quote(k) for k in [...]`` or ``findings_markdown(..., where=[...])``. Its banner must carry
    :func:`where_line` of each (``tests/test_course.py``; ``scripts/update_banners.py`` keeps them so)."""
    keys = re.findall(r'robustness\.quote\("([a-z0-9_]+)"\)', code)
    for where in re.findall(r"where=\[([^\]]*)\]", code):
        keys += re.findall(r'"([a-z0-9_]+)"', where)
    for listed in re.findall(r"robustness\.quote\(k\) for k in \[([^\]]*)\]", code):
        keys += re.findall(r'"([a-z0-9_]+)"', listed)
    return list(dict.fromkeys(keys))


def where_line(key: str, table: RobustnessTable | None = None) -> str:
    """Where robustness row ``key`` holds in one short line of the where-it-holds grid's symbols
    (:func:`rag_lab.figures.where_grid.where_line`): ``world ✓✓, HotpotQA ~~, MuSiQue ~~; Qwen2.5-Coder-1.5B:
    HotpotQA v2 ~, …``; the banners quote it, and the lesson map shows the headline's."""
    table = table if table is not None else load_table()
    return where_grid.where_line(where_grid.where_grid_info(table, [key]), key)
