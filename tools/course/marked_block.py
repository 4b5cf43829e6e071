"""A generated block inside a hand-written file: the text between a begin and an end marker line, rewritten by
code and compared by tests (the lesson map in notebooks/README.md, the quickstart findings in README.md).

>>> text = "intro\\n<!-- a -->\\nold\\n<!-- b -->\\nrest"
>>> marked_block(text, "<!-- a -->", "<!-- b -->", "the block")
'<!-- a -->\\nold\\n<!-- b -->'
>>> replace_marked(text, "<!-- a -->", "<!-- b -->", "<!-- a -->\\nnew\\n<!-- b -->", "the block")
'intro\\n<!-- a -->\\nnew\\n<!-- b -->\\nrest'
"""

from __future__ import annotations

from rag_lab.errors import ConfigError

__all__ = ["marked_block", "replace_marked"]


def _span(text: str, begin: str, end: str, what: str) -> tuple[int, int]:
    start = text.find(begin)
    stop = text.find(end, start + len(begin)) if start >= 0 else -1
    if stop < 0:
        raise ConfigError(f"no {what}: a line {begin!r}, then {end!r}")
    return start, stop + len(end)


def marked_block(text: str, begin: str, end: str, what: str) -> str:
    """The block of ``text`` from ``begin`` to ``end``, markers included; an error naming ``what`` without them."""
    start, stop = _span(text, begin, end, what)
    return text[start:stop]


def replace_marked(text: str, begin: str, end: str, block: str, what: str) -> str:
    """``text`` with its block from ``begin`` to ``end`` (markers included) replaced by ``block``."""
    start, stop = _span(text, begin, end, what)
    return text[:start] + block + text[stop:]
