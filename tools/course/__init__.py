"""Course authoring: the executed notebooks as HTML (:mod:`.export`), the lesson map of ``notebooks/README.md``
(:mod:`.map`), README's quickstart block (:mod:`.readme_quickstart`), the marked blocks they rewrite
(:mod:`.marked_block`), and the rendered course site with its pytest plugin and MkDocs hook (:mod:`.site`).
Run from the repository root: ``python -m tools.course export|map``. The method: docs/course.md."""

import sys
from pathlib import Path

#: The notebooks' folder, which holds the course's helpers (the ``lessons`` package, not in the library's wheel).
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
# the tools import ``lessons`` as a notebook's kernel does (it starts in notebooks/): put that folder on the path once
if str(NOTEBOOKS) not in sys.path:
    sys.path.insert(0, str(NOTEBOOKS))
