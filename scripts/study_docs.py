#!/usr/bin/env python
"""Rewrite the docs' study tables from the recorded claims (``data/recorded/<sweep>_claims.json``, written by
``scripts/recorded_findings.py``): each study block of ``STUDIES`` in each page that holds its markers. No number
in those tables is typed by hand; ``tests/test_study.py`` fails when a page's block differs from its render.

    source scripts/env.sh
    python scripts/study_docs.py          # rewrite the blocks
    python scripts/study_docs.py --check  # exit 1 when a block is stale
"""

from __future__ import annotations

import argparse
import sys

from rag_lab.errors import ConfigError
from rag_lab.experiments.study import block_of, markdown_table, render_block, study_parts
from rag_lab.paths import DATA_DIR, SWEEPS_DIR

REPO_ROOT = DATA_DIR.parent
#: The studies with blocks in the pages (each the ``family.study`` its sweep files name).
STUDIES = ("v3", "twins", "disclosure")
#: The pages that carry study blocks: the docs, and each recorded study page.
PAGES = ("docs/simulate-then-verify.md", "README.md", *sorted(f"data/recorded/{p.name}"
                                                              for p in (DATA_DIR / "recorded").glob("*.md")))


def rendered(name: str) -> str:
    """The block of study ``name``, rendered from its parts' claims files."""
    return markdown_table(study_parts(name, SWEEPS_DIR, DATA_DIR / "recorded"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only check; exit 1 when a block is stale")
    args = parser.parse_args()
    stale = []
    for page in PAGES:
        path = REPO_ROOT / page
        text = path.read_text(encoding="utf-8")
        new = text
        for name in STUDIES:
            try:
                block_of(text, name)
            except ConfigError:
                continue
            new = render_block(new, name, rendered(name))
        if new != text:
            stale.append(page)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    print(("stale: " if args.check else "rewrote: ") + (", ".join(stale) or "nothing"))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
