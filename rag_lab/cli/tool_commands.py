"""The service commands of ``rag-lab``: ``serve`` (an OpenAI-compatible endpoint in front of a lab backend)
``notebooks export`` (the executed course as HTML) and ``notebooks map`` (the lesson map of notebooks/README.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rag_lab.cli.options import CommandFailed, command, group


def register(sub: argparse._SubParsersAction) -> None:
    notebooks = group(sub, "notebooks", "the course notebooks")
    export = command(notebooks, "export", notebooks_export,
                     "execute the course notebooks and write each as HTML, with an index")
    export.add_argument("--notebooks", default="notebooks", help="the folder of NN_*.ipynb notebooks")
    export.add_argument("--out", default="reports/notebooks", help="where the HTML and index.html go")
    export.add_argument("--only", nargs="+", default=None, metavar="NAME", help="these notebooks only (name or NN prefix)")
    export.add_argument("--timeout", type=int, default=600, help="seconds per cell before the notebook counts as failed")
    lesson_map = command(notebooks, "map", notebooks_map,
                         "rewrite the lesson map in notebooks/README.md from the notebooks (finding, kind, where it "
                         "holds, run time)")
    lesson_map.add_argument("--notebooks", default="notebooks", help="the folder of NN_*.ipynb notebooks")
    lesson_map.add_argument("--times", default=None, metavar="FILE",
                            help="an export's run_times.json to merge into notebooks/run_times.json first")

    serve = command(sub, "serve", serve_command, "an OpenAI-compatible endpoint on 127.0.0.1 in front of a lab backend")
    serve.add_argument("--host", default="127.0.0.1", help="a loopback address (127.0.0.0/8, ::1 or localhost)")
    serve.add_argument("--port", type=int, default=8765, help="the TCP port to listen on (default: 8765)")
    serve.add_argument("--backend", choices=["sim"], default="sim", help="the lab backend to serve")
    serve.add_argument("--profile", default="typical",
                       help="the simulator's behaviour profile (ideal, typical, sloppy, or a profile file)")
    serve.add_argument("--max-concurrency", type=int, default=1, help="concurrent requests before answering 429")
    serve.add_argument("--model", default=None, help="the model name clients must ask for (default: the backend's)")
    serve.add_argument("--latency", default=None, metavar="SECONDS",
                       help="added time per chat completion, to stand in for a remote API: 0.5, uniform:0.3,0.7 "
                            "or lognormal:MEDIAN,SIGMA (seconds)")


def serve_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """Serve until Ctrl-C; the address is printed as soon as the server listens (the result comes at the end)."""
    from rag_lab.llm.server import LabServer, Latency, check_loopback
    from rag_lab.llm.simulator import SimulatedBackend

    check_loopback(args.host)  # refuse before building a backend
    latency = Latency.parse(args.latency) if args.latency is not None else None
    backend = SimulatedBackend(profile=args.profile)
    models = [args.model] if args.model else None
    server = LabServer(backend, args.host, args.port, models=models, max_concurrency=args.max_concurrency,
                       latency=latency)
    delay = f", latency {latency.describe()}" if latency else ""
    print(f"rag-lab serve: {backend.name} backend as model {server.models[0]!r} at {server.url} "
          f"(max {args.max_concurrency} concurrent{delay}; Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return {"url": server.url, "model": server.models[0], "stopped": True}, "rag-lab serve: stopped"


def notebooks_map(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.course.map import write_lesson_map

    readme = write_lesson_map(Path(args.notebooks), args.times)
    return {"readme": str(readme)}, f"lesson map written: {readme}"


def notebooks_export(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.course.export import export_notebooks

    results = export_notebooks(Path(args.notebooks), Path(args.out), only=args.only, timeout=args.timeout)
    failed = [r.name for r in results if not r.ok]
    summary = {"index": str(Path(args.out) / "index.html"), "notebooks": len(results), "failed": failed,
               "seconds": round(sum(r.seconds for r in results), 1)}
    text = (f"{len(results) - len(failed)} of {len(results)} notebooks ok in {summary['seconds']:.0f} s: "
            f"{summary['index']}" + (f"; failed: {', '.join(failed)}" if failed else ""))
    if failed:
        raise CommandFailed(summary, text)
    return summary, text
