#!/usr/bin/env python
"""Execute a lesson's worked answers: run the notebook, then each exercise's answer code (the ```python fences
inside its ``<details>`` under ``## Try this``) in a cell added after the notebook's own, in the same kernel, as a
learner would. Prints one line per exercise (ok, the error, or "no code"), exit status 1 if any answer failed.

    python scripts/run_worked_answers.py notebooks/14_capstone.ipynb [--timeout 1800]

Run from the repository root; the notebook runs in its own folder (its relative paths hold).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

EXERCISE = re.compile(r"^(\d+)\. ", re.M)
FENCE = re.compile(r"```python\n(.*?)```", re.S)


def answers(nb: nbformat.NotebookNode) -> list[tuple[int, list[str]]]:
    """Each numbered exercise under ``## Try this``: its number and its answer's code fences."""
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    if "## Try this" not in text:
        return []
    text = text[text.index("## Try this"):]
    starts = [m.start() for m in EXERCISE.finditer(text)]
    out = []
    for i, start in enumerate(starts):
        item = text[start:starts[i + 1] if i + 1 < len(starts) else len(text)]
        details = re.search(r"<details>(.*?)</details>", item, re.S)
        out.append((int(EXERCISE.match(item).group(1)), FENCE.findall(details.group(1)) if details else []))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebook", type=Path, help="a lesson notebook (.ipynb)")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds a cell may run (default 1800)")
    args = parser.parse_args(argv)
    nb = nbformat.read(args.notebook, as_version=4)
    items = answers(nb)
    own = len(nb.cells)
    for _, fences in items:
        nb.cells += [nbformat.v4.new_code_cell(code) for code in fences]
    client = NotebookClient(nb, timeout=args.timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(args.notebook.parent)}})
    failed = False
    start = time.perf_counter()
    with client.setup_kernel():
        for index in range(own):
            client.execute_cell(nb.cells[index], index)
        print(f"{args.notebook.name}: the notebook ran in {time.perf_counter() - start:.0f} s")
        index = own
        for number, fences in items:
            if not fences:
                print(f"  exercise {number}: no code (a prose answer)")
                continue
            begin = time.perf_counter()
            try:
                for _ in fences:
                    client.execute_cell(nb.cells[index], index)
                    index += 1
                print(f"  exercise {number}: ok ({time.perf_counter() - begin:.0f} s)")
            except CellExecutionError as exc:
                failed = True
                print(f"  exercise {number}: FAILED: {str(exc).strip().splitlines()[-1]}")
                index = own + sum(len(f) for n, f in items if n <= number)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
