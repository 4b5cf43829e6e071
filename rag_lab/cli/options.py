"""What the ``rag-lab`` command modules share: how a module registers its commands (:func:`command`; a handler
returns ``(result, text)``, the JSON-able result and the human summary, or raises :class:`CommandFailed` with
both to exit 1), the dataset and backend options, and ``KEY=VALUE`` settings."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import yaml

from rag_lab.errors import ConfigError, RagLabError
from rag_lab.llm.factory import BACKENDS, simulator_profile
from rag_lab.llm.local.model_pack import CHUNKED_MODELS
from rag_lab.llm.sim.profile import PROFILES, SimulatorProfile
from rag_lab.loaders import dataset_help

#: A command's handler: the parsed arguments → (result, text).
Handler = Callable[[argparse.Namespace], tuple[Any, str]]


class CommandFailed(RagLabError):
    """A command ran and its result says it failed (e.g. a notebook that did not execute): the command
    prints ``result`` (``--json``) or ``text`` and exits 1."""

    def __init__(self, result: Any, text: str) -> None:
        super().__init__(text)
        self.result = result
        self.text = text


def command(sub: argparse._SubParsersAction, name: str, handler: Handler, help: str,
            json_option: bool = True) -> argparse.ArgumentParser:
    """A sub-command ``name`` whose handler is ``handler`` (with the ``--json`` option unless told)."""
    parser = sub.add_parser(name, help=help, description=help)
    parser.set_defaults(handler=handler)
    if json_option:
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def group(sub: argparse._SubParsersAction, name: str, help: str) -> argparse._SubParsersAction:
    """A command with sub-commands of its own (``rag-lab data info``, ``rag-lab world generate``)."""
    return sub.add_parser(name, help=help, description=help).add_subparsers(dest=f"{name}_command", required=True)


def add_dataset(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", required=True, metavar="NAME_OR_PATH", help=dataset_help())


def add_backend_options(p: argparse.ArgumentParser, *, required: bool = False) -> None:
    """The LLM backend options of ``run``, ``eval`` and ``verify``: which backend (a name of
    :data:`rag_lab.llm.factory.BACKENDS`) and its settings. ``required``: no default backend (``verify``
    must be told which one stands for the real model)."""
    p.add_argument("--backend", choices=BACKENDS.names(), required=required, default=None if required else "sim",
                   help="the LLM backend" + ("" if required else " (default: sim, the simulator)"))
    p.add_argument("--profile", default="typical",
                   help=f"--backend sim: the simulator profile: {', '.join(PROFILES)}, or a profile file (profile.yaml, "
                        "e.g. from rag-lab calibrate)")
    p.add_argument("--seed", type=int, default=0, help="--backend sim: the simulator seed")
    p.add_argument("--sim", action="append", default=[], metavar="KNOB=VALUE", dest="sim_knobs",
                   help="--backend sim: override one setting of the profile, e.g. --sim synonym_spinning=0.4 (a "
                        "knob's rate) or another profile field (repeatable)")
    p.add_argument("--model", default=None,
                   help="--backend openai: the model name (else RAG_LAB_MODEL; may be omitted when the server lists "
                        "exactly one model); --backend local: a GGUF file or a packaged model name "
                        f"(smollm2-135m, the default, gemma3-270m, {', '.join(CHUNKED_MODELS)}); --backend recorded: the "
                        "cassette file to replay")
    p.add_argument("--base-url", default=None, help="server URL for --backend openai (else OPENAI_BASE_URL)")
    p.add_argument("--chat-format", default=None, metavar="NAME",
                   help="--backend local: llama-cpp-python chat format (default: the GGUF's own template, else the "
                        "format of its architecture, e.g. gemma)")
    p.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help="cap every LLM call's completion tokens (the answer asks up to 512: a slow local model's "
                        "ramble); cached apart from uncapped calls")
    p.add_argument("--no-cache", action="store_true", help="do not use the LLM response cache")
    p.add_argument("--record", default=None, metavar="CASSETTE",
                   help="record every LLM call of a real backend into this cassette (JSON Lines; resumes when it "
                        "exists); replay it with --backend recorded --model CASSETTE")


def add_server_options(p: argparse.ArgumentParser) -> None:
    """How a model server (``openai``, ``local``) is called: ``--timeout-s`` and ``--max-retries``, which override the
    sweep file's ``backend.timeout_s`` and ``backend.max_retries`` (:func:`server_settings`)."""
    p.add_argument("--timeout-s", type=float, default=None, metavar="SECONDS",
                   help="backend openai or local: seconds one HTTP attempt to the model server may take (default: the "
                        "sweep file's backend.timeout_s, else 60 for openai and 300 for local); not part of the run's "
                        "identity, so it may change on a resume")
    p.add_argument("--max-retries", type=int, default=None, metavar="N",
                   help="backend openai or local: retries of a timed-out or failed attempt before the call gives up "
                        "(default: the sweep file's backend.max_retries, else 3 for openai and 1 for local)")


def server_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The ``timeout_s`` and ``max_retries`` given on the command line (:func:`add_server_options`)."""
    return {k: v for k, v in (("timeout_s", args.timeout_s), ("max_retries", args.max_retries)) if v is not None}


def sim_profile(args: argparse.Namespace) -> SimulatorProfile:
    """The simulator profile of ``--profile`` (a name or a profile file) with the ``--sim`` overrides."""
    return simulator_profile(args.profile, parse_settings(args.sim_knobs, option="--sim"))


def reject_sim_settings(args: argparse.Namespace) -> None:
    """``--profile``, ``--seed`` and ``--sim`` are settings of ``--backend sim`` only."""
    if args.backend != "sim" and (args.sim_knobs or args.profile != "typical" or args.seed != 0):
        raise ConfigError("--profile, --seed and --sim are settings of --backend sim")


def parse_settings(items: list[str], option: str = "--set") -> dict[str, Any]:
    """``["crag.upper=0.6", "truncation.strategy=refine"]`` → typed values (YAML scalars);
    ``option`` names the command-line option in errors."""
    values: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{option} expects KEY=VALUE, got {item!r}")
        try:
            values[key.strip()] = yaml.safe_load(raw) if raw.strip() else raw
        except yaml.YAMLError:
            values[key.strip()] = raw
    return values
