"""The service command of ``rag-lab``: ``serve`` (an OpenAI-compatible endpoint in front of a lab backend). The
course's authoring commands (``python -m tools.course export|map``) are not part of the library."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from rag_lab.cli.options import command


def register(sub: argparse._SubParsersAction) -> None:
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
    from rag_lab.llm.server.lab_server import LabServer, Latency, check_loopback
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
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how the server is stopped
            server.serve_forever()
    finally:
        server.shutdown()
    return {"url": server.url, "model": server.models[0], "stopped": True}, "rag-lab serve: stopped"
