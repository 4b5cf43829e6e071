#!/usr/bin/env bash
# Bring every notebook and its Jupytext percent-format .py pair in line: the newer file of each pair
# wins (jupytext --sync). Then every .ipynb is written as nbformat 4.5 with cell ids (jupytext adds
# ids, which an older 4.4 header does not allow) and no outputs. Run after editing either side;
# tests/test_course.py fails while a pair differs or a notebook does not validate.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
for py in notebooks/*.py; do
  jupytext --quiet --sync "$py"
done
python - <<'PY'
import glob
import uuid

import nbformat

for path in sorted(glob.glob("notebooks/*.ipynb")):
    nb = nbformat.read(path, as_version=4)
    before = nbformat.writes(nb)
    nb.nbformat_minor = max(nb.nbformat_minor, 5)
    for cell in nb.cells:
        cell.setdefault("id", uuid.uuid4().hex[:8])
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.validate(nb)
    if nbformat.writes(nb) != before:
        nbformat.write(nb, path)
        print(f"normalized {path}")
PY
