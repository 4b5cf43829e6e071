"""``python -m tools.course export|map|robustness``, run from the repository root: the executed course as HTML,
with an index (``export``), the lesson map of notebooks/README.md (``map``) and the robustness table of the
headline findings (``robustness``: data/robustness.json and .md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rag_lab.errors import RagLabError
from tools.course import robustness_command


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.course", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    export = sub.add_parser("export", help="execute the course notebooks and write each as HTML, with an index")
    export.add_argument("--notebooks", default="notebooks", help="the folder of NN_*.ipynb notebooks")
    export.add_argument("--out", default="reports/notebooks", help="where the HTML and index.html go")
    export.add_argument("--only", nargs="+", default=None, metavar="NAME", help="these notebooks only (name or NN prefix)")
    export.add_argument("--timeout", type=int, default=600, help="seconds per cell before the notebook counts as failed")
    lesson_map = sub.add_parser("map", help="rewrite the lesson map in notebooks/README.md from the notebooks "
                                            "(finding, kind, where it holds, run time)")
    lesson_map.add_argument("--notebooks", default="notebooks", help="the folder of NN_*.ipynb notebooks")
    lesson_map.add_argument("--times", default=None, metavar="FILE",
                            help="an export's run_times.json to merge into notebooks/run_times.json first")
    robustness_command.register(sub)
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except RagLabError as exc:
        print(f"python -m tools.course: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.command == "robustness":
        return robustness_command.run(args)
    if args.command == "map":
        from tools.course.map import write_lesson_map

        print(f"lesson map written: {write_lesson_map(Path(args.notebooks), args.times)}")
        return 0
    from tools.course.export import export_notebooks

    results = export_notebooks(Path(args.notebooks), Path(args.out), only=args.only, timeout=args.timeout)
    failed = [r.name for r in results if not r.ok]
    seconds = sum(r.seconds for r in results)
    print(f"{len(results) - len(failed)} of {len(results)} notebooks ok in {seconds:.0f} s: "
          f"{Path(args.out) / 'index.html'}" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
