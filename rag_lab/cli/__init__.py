"""The ``rag-lab`` command line. Every command prints a human summary, or JSON with ``--json``.

The commands live in the ``*_commands`` modules of this package (:data:`COMMAND_MODULES`); each registers its
commands with a handler that returns ``(result, text)`` (:mod:`rag_lab.cli.options`). This module only builds the parser
and runs the handler the arguments name. A handler imports what its command needs when it runs, so that
``rag-lab --help`` and every command start without loading the others' dependencies (nothing imports the
command line, so these imports cannot hide a cycle; ``tests/test_import_layers.py`` checks them all)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import warnings
from typing import Any

from rag_lab.cli import data_commands, pipeline_commands, plan_commands, sim_to_real_commands, sweep_commands, tool_commands
from rag_lab.cli.options import CommandFailed
from rag_lab.embedding import EMBEDDER_ENV, EMBEDDERS
from rag_lab.errors import RagLabError

#: The modules whose ``register(sub)`` adds commands, in the order ``rag-lab --help`` lists them.
COMMAND_MODULES = (data_commands, pipeline_commands, sweep_commands, plan_commands, sim_to_real_commands, tool_commands)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rag-lab", description=__doc__.split("\n\n")[0].replace("``", ""))
    parser.add_argument("--embedder", default=None, choices=EMBEDDERS.names(),
                        help="runtime of the packaged MiniLM for every index and relevance score of this command "
                             f"(default: ${EMBEDDER_ENV} or torch; onnx needs the onnx extra)")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def _one_line_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> str:
    """Warnings on the command line are one line each (loader notes, not a traceback-like source line)."""
    return f"rag-lab: {category.__name__}: {message}\n"


def interrupted_message(args: argparse.Namespace, argv: list[str]) -> str:
    """The one line a command prints when Ctrl-C stops it: what is kept and how to go on, when the command says
    (``on_interrupt``: a template of ``{args}`` and ``{command}``, the command line as typed)."""
    hint = getattr(args, "on_interrupt", None)
    command = shlex.join(["rag-lab", *argv])
    return "rag-lab: interrupted" + (f"; {hint.format(args=args, command=command)}" if hint else "")


def main(argv: list[str] | None = None) -> int:
    warnings.formatwarning = _one_line_warning
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    if args.embedder:
        os.environ[EMBEDDER_ENV] = args.embedder  # spawned sweep workers inherit it
    try:
        result, text = args.handler(args)
        status = 0
    except CommandFailed as failed:
        result, text, status = failed.result, failed.text, 1
    except (RagLabError, ValueError, OSError) as exc:
        print(f"rag-lab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(interrupted_message(args, argv), file=sys.stderr)
        return 130  # 128 + SIGINT, as a shell reports a command Ctrl-C stopped
    print(json.dumps(result, indent=2) if getattr(args, "json", False) else text)
    return status
