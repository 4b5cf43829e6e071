#!/usr/bin/env python
"""Bring the lessons' "Where it holds:" banners in line with a regenerated robustness table.

Each banner quotes, word for word, :func:`tools.course.banners.where_line` of every robustness row its
notebook quotes (``tests/test_course.py`` checks it). When ``python -m tools.course robustness`` rewrites the
table, those words change; this replaces, in each notebook's percent-format ``.py`` pair, the old words (read from the table
before the change) with the new ones (the shipped table), and re-wraps the banner's lines. The prose around
them is left alone: read the diff, then run ``bash scripts/sync_notebooks.sh``.

    git show HEAD:data/robustness.json > /tmp/old_robustness.json
    python -m tools.course robustness --recorded-only
    python scripts/update_banners.py /tmp/old_robustness.json

Exit status 1 when an old phrase is not found in a banner that quotes its row (reworded by hand: fix it there).
A row new to the table has no old words to replace: it is named, and its words go into the banner by hand.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:   # the course's tooling (tools/course/) sits beside the library, not in it
    sys.path.insert(0, str(REPO))

import tools.course  # noqa: E402, F401  (it puts notebooks/ on sys.path: the course's helpers, lessons)
from lessons.robustness import load_table  # noqa: E402
from tools.course.banners import quoted_keys, where_line  # noqa: E402

NOTEBOOKS = REPO / "notebooks"
#: The banner's line width, "# > " included (the widest banner line when this was written).
WIDTH = 116
PREFIX = "# > "


def _banner_paragraphs(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) line ranges of the first cell's quoted paragraphs (runs of ``# > text`` lines)."""
    spans, start = [], None
    for i, line in enumerate(lines):
        if line.startswith("# %%") and i > 0 and spans:
            break
        quoted = line.startswith(PREFIX) and line.strip() != "# >"
        if quoted and start is None:
            start = i
        elif not quoted and start is not None:
            spans.append((start, i))
            start = None
    return spans


def update(path: Path, old_table, new_table, keys: list[str]) -> list[str]:
    """Rewrite ``path``'s banner with the new words of ``keys`` (those the old table has: a new row has no old
    words); the keys whose old words were not found."""
    lines = path.read_text(encoding="utf-8").split("\n")
    missing = []
    known = {row["key"] for row in old_table.findings}
    for key in [k for k in keys if k in known]:
        old, new = where_line(key, old_table), where_line(key, new_table)
        if old == new:
            continue
        for start, end in _banner_paragraphs(lines):
            text = " ".join(line[len(PREFIX):].strip() for line in lines[start:end])
            if old in text:
                text = text.replace(old, new)
                wrapped = textwrap.wrap(text, width=WIDTH - len(PREFIX), break_long_words=False,
                                        break_on_hyphens=False)
                lines[start:end] = [PREFIX + w for w in wrapped]
                break
        else:
            missing.append(key)
    path.write_text("\n".join(lines), encoding="utf-8")
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old_table", type=Path, help="the robustness table (JSON) before it was regenerated")
    args = parser.parse_args(argv)
    old_table, new_table = load_table(args.old_table), load_table()
    failed = False
    for path in sorted(NOTEBOOKS.glob("*.py")):
        keys = quoted_keys(path.read_text(encoding="utf-8"))
        for key in [k for k in keys if k not in {row["key"] for row in old_table.findings}]:
            print(f"{path.name}: {key!r} is new in the table: write its words into the banner by hand "
                  f"({where_line(key, new_table)})", file=sys.stderr)
        for key in update(path, old_table, new_table, keys) if keys else []:
            print(f"{path.name}: the banner does not carry the old words of {key!r}; update it by hand", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
