"""Execute the course notebooks and write each as standalone HTML (plotly embedded), with an index.

``python -m tools.course export`` (the main job runs it) executes every ``notebooks/NN_*.ipynb`` top to bottom
in a fresh kernel, its working directory the notebooks folder, and writes ``<out>/<name>.html`` and
``<out>/index.html`` (each notebook's status and run time), and the run times of the notebooks that ran
as ``<out>/run_times.json`` (``python -m tools.course map --times`` puts them in the course's lesson map).
Figures are rendered with plotly's offline ``notebook`` renderer, so the HTML carries plotly.js itself and opens
without a network.

A notebook that fails is still written — with the error in the failing cell — and the index marks it
failed; the command then exits non-zero after the others are done, so one bad notebook loses nothing
else.
"""

from __future__ import annotations

import html
import json
import os
import string
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_lab.errors import RagLabError

#: Environment of the executing kernel: offline plotly with plotly.js embedded in the first figure.
KERNEL_ENV = {"PLOTLY_RENDERER": "notebook"}


@dataclass(frozen=True)
class ExportedNotebook:
    name: str
    html: Path
    seconds: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def course_notebooks(folder: Path) -> list[Path]:
    """The course's notebooks in order: ``NN_*.ipynb`` sorted by name."""
    return sorted(Path(folder).glob("[0-9][0-9]_*.ipynb"))


def _select(folder: Path, only: Sequence[str] | None) -> list[Path]:
    paths = course_notebooks(folder)
    if not paths:
        raise RagLabError(f"no course notebooks (NN_*.ipynb) in {folder}")
    if not only:
        return paths

    def matches(path: Path, name: str) -> bool:  # a name, an NN prefix, or the file name
        return path.stem.startswith(name) or path.name == name

    chosen = [p for p in paths if any(matches(p, n) for n in only)]
    unknown = [n for n in only if not any(matches(p, n) for p in paths)]
    if unknown:
        raise RagLabError(f"no notebook matches {unknown} in {folder} (have: {[p.stem for p in paths]})")
    return chosen


def _title(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.startswith("# "):
            return cell.source.splitlines()[0][2:].strip()
    return ""


def export_one(path: Path, out: Path, timeout: int = 600) -> ExportedNotebook:
    """Execute ``path`` and write ``out/<name>.html``; an error is recorded, not raised."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    from nbconvert import HTMLExporter

    nb = nbformat.read(path, as_version=4)
    started = time.monotonic()
    error = None
    saved = {k: os.environ.get(k) for k in KERNEL_ENV}
    os.environ.update(KERNEL_ENV)  # the kernel inherits this process's environment
    try:
        # No widget state: it cannot run without a kernel, and a FigureWidget's state carries its own
        # copy of plotly.js (megabytes per notebook); a widget shows its static note (widgets/static.py).
        NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=False,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    except CellExecutionError as exc:
        error = f"{exc.ename}: {exc.evalue}"
    except (CellTimeoutError, DeadKernelError) as exc:
        error = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    seconds = time.monotonic() - started
    nb.metadata.pop("widgets", None)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    target = out / f"{path.stem}.html"
    target.write_text(body, encoding="utf-8")
    return ExportedNotebook(path.stem, target, seconds, error)


def write_index(results: Iterable[ExportedNotebook], titles: dict[str, str], out: Path) -> Path:
    rows = []
    for r in results:
        status = "ok" if r.ok else f"failed: {html.escape(r.error or '')}"
        rows.append(f"<tr><td><a href='{html.escape(r.html.name)}'>{html.escape(r.name)}</a></td>"
                    f"<td>{html.escape(titles.get(r.name, ''))}</td><td>{r.seconds:.0f} s</td><td>{status}</td></tr>")
    index = (Path(__file__).parent / "templates" / "export_index.html").read_text(encoding="utf-8")
    page = string.Template(index.removesuffix("\n")).substitute(rows="".join(rows))
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    times = {"seconds": {r.name: round(r.seconds, 1) for r in results if r.ok}}
    (out / "run_times.json").write_text(json.dumps(times, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return index


def export_notebooks(folder: Path, out: Path, only: Sequence[str] | None = None, timeout: int = 600,
                     echo=print) -> list[ExportedNotebook]:
    """Execute the chosen course notebooks of ``folder`` one after the other and write their HTML and the index."""
    import nbformat

    folder, out = Path(folder), Path(out)
    paths = _select(folder, only)
    out.mkdir(parents=True, exist_ok=True)
    titles = {p.stem: _title(nbformat.read(p, as_version=4)) for p in paths}
    results = []
    for path in paths:
        result = export_one(path, out, timeout)
        results.append(result)
        echo(f"{path.stem}: {'ok' if result.ok else 'FAILED'} in {result.seconds:.0f} s -> {result.html}"
             + (f" ({result.error})" if result.error else ""))
        write_index(results, titles, out)  # kept current: an interrupted export still has an index
    return results
