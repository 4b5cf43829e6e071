"""The rendered course: the notebooks as the test command executed them, published in the MkDocs site. Two halves,
one module: a pytest plugin (``python -m pytest notebooks -p tools.course.site --keep-executed DIR``) that keeps
every notebook nbmake executed, with a sidecar of its run; and a MkDocs hook (``hooks:`` in ``mkdocs.yml``) that
makes a page of each ``notebooks/NN_*.ipynb`` from its executed copy (:func:`page_notebook`) and an index of the
lessons, or fails the build naming the notebooks without one when ``extra.course.require_executed`` is true.
How it is made: docs/course.md, "The course, rendered"."""

from __future__ import annotations

import hashlib
import html
import json
import logging
import re
import shutil
import tempfile
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

#: Where the test command keeps the executed notebooks (``--keep-executed``; mkdocs.yml ``extra.course.executed``).
EXECUTED = "reports/executed"
#: The site's folder of lesson pages.
COURSE_DIR = "course"
#: The site's copy of plotly.js, loaded by every lesson page that draws a figure.
PLOTLY_ASSET = "assets/plotly.min.js"
PLOTLY_JSON = "application/vnd.plotly.v1+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_LESSON = re.compile(r"^(\d\d_[A-Za-z0-9_]+)\.ipynb(#.*)?$")
_EXTERNAL = ("http://", "https://", "mailto:", "#")
_REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc=(['\"])(https?://[^'\"]*)?\1[^>]*>\s*</script>")


# ---------------------------------------------------------------------------------------------------------
# Keeping executed notebooks


def source_digest(nb) -> str:
    """A digest of a notebook's cells (type and source): equal for a notebook and its executed copy."""
    cells = [[c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"])] for c in nb["cells"]]
    return hashlib.sha256(json.dumps(cells).encode()).hexdigest()[:16]


def keep_executed(nb, name: str, seconds: float, error: str | None, out: str | Path) -> Path:
    """Write the executed notebook ``nb`` as ``out/<name>.ipynb`` and its run as ``out/<name>.json``."""
    import nbformat

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))  # a copy: the caller's notebook is left alone
    nb.metadata.pop("widgets", None)  # widget state needs a kernel; a FigureWidget's carries megabytes of plotly.js
    target = out / f"{name}.ipynb"
    nbformat.write(nb, target)
    run = {"name": name, "seconds": round(float(seconds), 1), "ok": error is None, "error": error,
           "finished": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "source": source_digest(nb)}
    (out / f"{name}.json").write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
    return target


def kept_run(out: str | Path, name: str) -> dict[str, Any] | None:
    """The sidecar of ``name`` in ``out`` (``None`` when it was not kept, or its notebook is missing)."""
    out = Path(out)
    side, nb = out / f"{name}.json", out / f"{name}.ipynb"
    if not (side.exists() and nb.exists()):
        return None
    return json.loads(side.read_text(encoding="utf-8"))


def write_run_times(out: str | Path) -> Path:
    """``out/run_times.json`` from the sidecars: the passing notebooks' seconds, as the export writes it."""
    out = Path(out)
    seconds = {}
    for side in sorted(out.glob("[0-9][0-9]_*.json")):
        run = json.loads(side.read_text(encoding="utf-8"))
        if run.get("ok"):
            seconds[run["name"]] = run["seconds"]
    target = out / "run_times.json"
    target.write_text(json.dumps({"seconds": seconds, "made_by": "pytest notebooks -p tools.course.site "
                                  "--keep-executed"}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return target


# pytest plugin: loaded with `-p tools.course.site`; does nothing without --keep-executed.

def pytest_addoption(parser) -> None:
    parser.getgroup("rag_lab course").addoption(
        "--keep-executed", metavar="DIR", default=None,
        help="also write each notebook nbmake executes, outputs and all, to DIR/<name>.ipynb with its run "
             "time in DIR/<name>.json (the rendered course in the MkDocs site reads them)")


def pytest_configure(config) -> None:
    out = config.getoption("--keep-executed", default=None)
    if not out:
        return
    import nbmake.pytest_items as items

    if getattr(items.NotebookRun, "_rag_lab_keeps", None):
        return
    base = items.NotebookRun
    root = Path(str(config.rootpath))

    class KeepingRun(base):  # nbmake's own run, timed, its executed notebook written after it
        _rag_lab_keeps = True

        def execute(self):
            started = time.monotonic()
            name = Path(self.filename).stem
            try:
                result = super().execute()
            except BaseException as exc:  # pytest-timeout's signal, an interrupt: the run's outputs are lost
                import nbformat

                error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300]
                keep_executed(nbformat.read(self.filename, as_version=4), name, time.monotonic() - started,
                              error + " (stopped before the end: no outputs kept)", root / out)
                raise
            error = None if result.error is None else (result.error.summary or "failed").strip()
            keep_executed(result.nb, name, time.monotonic() - started, error, root / out)
            return result

    items.NotebookRun = KeepingRun


def pytest_sessionfinish(session, exitstatus) -> None:
    out = session.config.getoption("--keep-executed", default=None)
    if out and not hasattr(session.config, "workerinput"):  # the controller, once the workers are done
        folder = Path(str(session.config.rootpath)) / out
        if folder.exists():
            write_run_times(folder)


# ---------------------------------------------------------------------------------------------------------
# The page of one lesson


def _lesson_href(name: str, anchor: str, directory_urls: bool) -> str:
    return (f"../{name}/" if directory_urls else f"{name}.html") + anchor


def _rewrite_links(text: str, lessons: set[str], directory_urls: bool, problems: list[str], where: str) -> str:
    def swap(match: re.Match) -> str:
        target = match.group(1)
        if target.startswith(_EXTERNAL):
            return match.group(0)
        lesson = _LESSON.match(target)
        if lesson and lesson.group(1) in lessons:
            return f"]({_lesson_href(lesson.group(1), lesson.group(2) or '', directory_urls)})"
        if target.split("#")[0] == "README.md":
            return f"]({'../' if directory_urls else 'index.html'})"
        problems.append(f"{where}: the link '{target}' has no page in the site")
        return match.group(0)

    return _LINK.sub(swap, text)


def _plotly_html(figure: Mapping[str, Any], div_id: str) -> str:
    import plotly.io as pio

    return pio.to_html(dict(figure), include_plotlyjs=False, full_html=False, div_id=div_id, validate=False,
                       default_width="100%")


def run_note(name: str, run: Mapping[str, Any] | None, stale: bool, map_seconds: float | None) -> str:
    """The note under a lesson's title: the run time of the run the page shows, or how to render it."""
    known = (f" The lesson map's run time (<code>notebooks/run_times.json</code>): {map_seconds:.0f} s."
             if map_seconds else "")
    if run is None:
        return ("<div class='admonition warning rag-lab-run'><p class='admonition-title'>Not executed in this build</p>"
                f"<p>This page shows the notebook's cells without outputs.{known} "
                "The test command (<code>bash scripts/test.sh</code>) executes every notebook and renders it "
                "with its figures and numbers; for this one alone: <code>python -m pytest notebooks/"
                f"{html.escape(name)}.ipynb -p tools.course.site --keep-executed reports/executed</code>, "
                "then <code>mkdocs build</code>.</p></div>")
    kind, title = ("success", "Executed") if run["ok"] else ("failure", "Failed in this run")
    body = (f"Run time: <strong class='rag-lab-run-time'>{run['seconds']:.0f} s</strong>, measured when the "
            f"test command (nbmake, a fresh kernel, offline) executed it on {html.escape(run['finished'])}; "
            "this page shows that run's outputs." + known)
    if not run["ok"]:
        body += f" It stopped with <code>{html.escape(str(run['error']))}</code>: the outputs end at the failing cell."
    if stale:
        body += " The notebook has changed since that run: these outputs are from the earlier version."
    return (f"<div class='admonition {kind} rag-lab-run'><p class='admonition-title'>{title}</p>"
            f"<p>{body}</p></div>")


def page_notebook(source: Path, executed: Path | None, lessons: set[str], directory_urls: bool = True,
                  map_seconds: float | None = None):
    """The notebook a lesson's page renders and the problems found (links the site cannot resolve).

    ``source`` is ``notebooks/NN_name.ipynb``; ``executed`` the folder of kept runs (or ``None``)."""
    import nbformat

    name = source.stem
    run = kept_run(executed, name) if executed is not None else None
    nb = nbformat.read(executed / f"{name}.ipynb" if run else source, as_version=4)
    stale = bool(run) and run.get("source") != source_digest(nbformat.read(source, as_version=4))
    nb.metadata.pop("widgets", None)
    problems: list[str] = []
    figures = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            cell.source = _rewrite_links(cell.source, lessons, directory_urls, problems, f"{name} cell {index}")
            continue
        if cell.cell_type != "code":
            continue
        kept = []
        for output in cell.get("outputs", []):
            data = output.get("data") or {}
            if PLOTLY_JSON in data:
                figures += 1
                data["text/html"] = _plotly_html(data.pop(PLOTLY_JSON), f"{name}-figure-{figures}")
            if WIDGET_VIEW in data:
                if "text/html" not in data:
                    continue  # a widget with nothing to show without a kernel (a progress bar): dropped
                data.pop(WIDGET_VIEW)  # no kernel here: the widget's static note (rag_lab.widgets.static) stands in
            kept.append(output)
        cell.outputs = kept
    note = nbformat.v4.new_markdown_cell(run_note(name, run, stale, map_seconds))
    nb.cells.insert(1 if nb.cells and nb.cells[0].cell_type == "markdown" else 0, note)
    nb.metadata["rag_lab_page"] = {"executed": bool(run), "ok": bool(run and run["ok"]), "figures": figures}
    return nb, problems


def course_index(rows: list[Mapping[str, Any]], executed: str) -> str:
    """The markdown of ``course/index.md``: every lesson, its run time in the rendered run and its status."""
    lines = ["# The course, rendered", "",
             "Each lesson below is the notebook as the test command executed it (`bash scripts/test.sh`: nbmake runs "
             "every notebook top to bottom in a fresh kernel, offline, and keeps the executed copy in "
             f"`{executed}/`), with its figures and numbers. The run time is that run's wall time for the notebook "
             "(two notebooks at a time on two cores); the lesson map's column is the last `python -m tools.course export`. "
             "The sources, without outputs, are in `notebooks/`; open them in JupyterLab to run the widgets.", "",
             "| # | lesson | run time here | lesson map | status |", "|---|---|---|---|---|"]
    for row in rows:
        run = row["run"]
        here = f"{run['seconds']:.0f} s" if run else "–"
        error = str(run["error"] if run else "").replace("`", "'").replace("|", "\\|")
        status = "not executed in this build" if not run else "ok" if run["ok"] else f"failed: `{error}`"
        mapped = f"{row['map_seconds']:.0f} s" if row.get("map_seconds") else "–"
        title = row["title"].split("·", 1)[-1].strip().replace("|", "\\|")
        lines.append(f"| {row['name'][:2]} | [{title}]({row['name']}.ipynb) | {here} | {mapped} | {status} |")
    lines += ["", "Build it: `bash scripts/test.sh` (its nbmake run keeps the executed notebooks, the docs phase "
              "renders them into `reports/site/`), or by hand `python -m pytest notebooks -p tools.course.site "
              f"--keep-executed {executed}` then `mkdocs serve` (or `mkdocs build`, into `site/`). Serve a built site "
              "over HTTP (`python -m http.server -d reports/site`): its links are directory URLs.", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# MkDocs hook (mkdocs.yml: hooks: [tools/course/site.py]); settings in mkdocs.yml `extra.course`.

_state: dict[str, Any] = {}


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() not in ("", "0", "false", "no", "none")


def _settings(config) -> dict[str, Any]:
    course = dict((config.extra or {}).get("course") or {})
    root = Path(config.config_file_path).resolve().parent
    return {"notebooks": root / course.get("notebooks", "notebooks"),
            "executed": root / course.get("executed", EXECUTED),
            "executed_name": str(course.get("executed", EXECUTED)),
            "require": _truthy(course.get("require_executed", False)),
            "nav_title": course.get("nav_title", "The course, rendered"),
            "index_title": course.get("index_title", "All lessons, with run times")}


def _titles(notebooks: list[Path]) -> dict[str, str]:
    """Each notebook's title: its first cell's ``# `` line (``01 · Round cap``)."""
    import nbformat

    titles = {}
    for path in notebooks:
        cells = nbformat.read(path, as_version=4).cells
        first = cells[0].source.splitlines()[0] if cells and cells[0].cell_type == "markdown" and cells[0].source else ""
        titles[path.stem] = first[2:].strip() if first.startswith("# ") else path.stem
    return titles


def on_config(config):
    """Put the lessons into the nav: the entry ``course/index.md`` becomes a section with every lesson."""
    settings = _settings(config)
    notebooks = sorted(Path(settings["notebooks"]).glob("[0-9][0-9]_*.ipynb"))
    titles = _titles(notebooks)
    section = [{settings["index_title"]: f"{COURSE_DIR}/index.md"}] + [{titles[p.stem]: f"{COURSE_DIR}/{p.name}"}
                                                                     for p in notebooks]

    def expand(items):
        out = []
        for item in items or []:
            if item == "course/index.md" or (isinstance(item, dict) and list(item.values()) == ["course/index.md"]):
                key = list(item)[0] if isinstance(item, dict) else settings["nav_title"]
                out.append({key: section})
            elif isinstance(item, dict):
                out.append({k: expand(v) if isinstance(v, list) else v for k, v in item.items()})
            else:
                out.append(item)
        return out

    if config.nav:
        config.nav = expand(config.nav)
    return config


def _event_priority(priority: float):
    try:
        from mkdocs.plugins import event_priority
    except ImportError:  # pragma: no cover - only MkDocs loads this half
        return lambda f: f
    return event_priority(priority)


@_event_priority(50)  # before mkdocs-jupyter's on_files, which turns .ipynb files into pages
def on_files(files, config):
    import nbformat
    import plotly
    from mkdocs.exceptions import PluginError  # MkDocs prints its message and stops, without a traceback
    from mkdocs.structure.files import File

    settings = _settings(config)
    notebooks = sorted(Path(settings["notebooks"]).glob("[0-9][0-9]_*.ipynb"))
    if not notebooks:
        raise PluginError(f"no course notebooks (NN_*.ipynb) in {settings['notebooks']}")
    executed = settings["executed"] if settings["executed"].is_dir() else None
    missing = [p.stem for p in notebooks if executed is None or kept_run(executed, p.stem) is None]
    if missing and settings["require"]:
        raise PluginError(f"the rendered course needs the executed notebooks, and {settings['executed']} lacks "
                          f"{missing}: run the notebooks first (python -m pytest notebooks -p tools.course.site "
                          f"--keep-executed {settings['executed_name']}), or unset extra.course.require_executed "
                          "(RAG_LAB_REQUIRE_EXECUTED)")
    times_file = settings["notebooks"] / "run_times.json"
    map_times = json.loads(times_file.read_text(encoding="utf-8"))["seconds"] if times_file.exists() else {}
    staging = Path(tempfile.mkdtemp(prefix="rag_lab_course_"))
    _state.update(staging=staging, pages={}, problems=[])
    lessons = {p.stem for p in notebooks}
    titles = _titles(notebooks)
    rows = []
    for path in notebooks:
        nb, problems = page_notebook(path, executed, lessons, config.use_directory_urls, map_times.get(path.stem))
        target = staging / COURSE_DIR / path.name  # mkdocs-jupyter's include pattern course/*.ipynb matches it
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        src_uri = f"{COURSE_DIR}/{path.name}"
        # a plain File under the staging folder, not File.generated: mkdocs-jupyter's wrapper reads abs_src_path
        # through the file's src_dir, which a generated file lacks
        files.append(File(src_uri, src_dir=str(staging), dest_dir=config.site_dir, use_directory_urls=config.use_directory_urls))
        _state["pages"][src_uri] = nb.metadata["rag_lab_page"]
        _state["problems"] += problems
        rows.append({"name": path.stem, "title": titles[path.stem], "map_seconds": map_times.get(path.stem),
                     "run": kept_run(executed, path.stem) if executed else None})
    for problem in _state["problems"]:  # a warning: `mkdocs build --strict` fails on it
        logging.getLogger("mkdocs.plugins.tools.course.site").warning(problem)
    files.append(File.generated(config, f"{COURSE_DIR}/index.md", content=course_index(rows, settings["executed_name"])))
    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    files.append(File.generated(config, PLOTLY_ASSET, abs_src_path=str(plotly_js)))
    return files


def on_page_content(html_text, page, config, files):
    """A lesson page with figures loads the site's plotly.js before them; no page loads a script from another host."""
    from mkdocs.utils import get_relative_url

    info = _state.get("pages", {}).get(page.file.src_uri)
    if info is None:
        return html_text
    # mkdocs-jupyter's template loads MathJax and Mermaid from a CDN (or from src=""): the lessons use neither,
    # and the site is read offline
    html_text = _REMOTE_SCRIPT.sub("", html_text)
    if not info["figures"]:
        return html_text
    src = get_relative_url(PLOTLY_ASSET, page.url or "index.html")
    return f"<script src='{src}'></script>\n" + html_text


def on_serve(server, config, builder):
    """``mkdocs serve`` rebuilds when a notebook changes or the test command keeps a new run of one."""
    settings = _settings(config)
    for folder in (settings["notebooks"], settings["executed"]):
        if folder.is_dir():
            server.watch(str(folder))
    return server


def on_post_build(config):
    staging = _state.pop("staging", None)
    if staging is not None:
        shutil.rmtree(staging, ignore_errors=True)
