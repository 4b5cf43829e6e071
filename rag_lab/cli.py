"""The ``rag-lab`` command line. Every command prints a human summary, or JSON with ``--json``."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from rag_lab.cli_pipeline import add_pipeline_parsers, eval_command, parse_settings, run_command
from rag_lab.cli_robustness import add_robustness_parser, robustness_command
from rag_lab.cli_sim_to_real import add_sim_to_real_parsers, calibrate_command, verify_command
from rag_lab.cli_sweep import add_sweep_parsers, report_command, sweep_command
from rag_lab.errors import RagLabError


def _add_dataset(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", required=True, metavar="NAME_OR_PATH",
                   help="a shipped dataset name (world, hotpotqa_sample, musique_sample, scifact_sample), a BEIR or "
                        "world folder, or a HotpotQA / 2WikiMultihopQA / MuSiQue file (JSON, JSON Lines or Parquet; "
                        "original or Hugging Face layout, told from the content)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rag-lab", description=__doc__)
    parser.add_argument("--embedder", default=None, choices=["torch", "onnx", "onnx-int8"],
                        help="runtime of the packaged MiniLM for every index and relevance score of this command "
                             "(default: $RAG_LAB_EMBEDDER or torch; onnx needs the onnx extra)")
    sub = parser.add_subparsers(dest="command", required=True)

    data = sub.add_parser("data", help="inspect datasets").add_subparsers(dest="data_command", required=True)
    info = data.add_parser("info", help="documents, chunks and questions by type and split")
    _add_dataset(info)
    info.add_argument("--json", action="store_true")

    world = sub.add_parser("world", help="the synthetic world").add_subparsers(dest="world_command", required=True)
    gen = world.add_parser("generate", help="generate a synthetic world into a folder")
    gen.add_argument("--out", required=True, type=Path)
    gen.add_argument("--seed", type=int, default=7)
    gen.add_argument("--scale", type=float, default=1.0, help="multiplies every entity count (150 ≈ 107k docs)")
    gen.add_argument("--questions-per-type", type=int, default=50)
    gen.add_argument("--dev-per-type", type=int, default=20)
    gen.add_argument("--json", action="store_true")

    exp = world.add_parser("export-hotpotqa", help="world bridge/comparison questions as a HotpotQA distractor file")
    exp.add_argument("--out", required=True, type=Path)
    exp.add_argument("--seed", type=int, default=7)
    exp.add_argument("--questions-per-type", type=int, default=150,
                     help="questions drawn per type (the corpus is the same as the shipped world's for seed 7)")
    exp.add_argument("--distractors", type=int, default=8)
    exp.add_argument("--json", action="store_true")

    ev = sub.add_parser("retrieval-eval", help="Recall@k, MRR@k, nDCG@k of gold documents, by question type")
    _add_dataset(ev)
    ev.add_argument("--retriever", nargs="+", default=["dense"], metavar="KIND",
                    help="one or more of dense, exact, bm25, hybrid, or all")
    ev.add_argument("--k", type=int, default=10)
    ev.add_argument("--split", default=None)
    ev.add_argument("--limit", type=int, default=None)
    ev.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="index parameter, e.g. M=32, ef_search=128, k1=1.2, k_rrf=60 (repeatable)")
    ev.add_argument("--out", type=Path, default=None,
                    help="folder to write retrieval_report.json and retrieval_report.txt into")
    ev.add_argument("--per-question", action="store_true", help="include per-question scores in --json output")
    ev.add_argument("--json", action="store_true")

    add_pipeline_parsers(sub, _add_dataset)
    add_sweep_parsers(sub)
    add_sim_to_real_parsers(sub)
    add_robustness_parser(sub)

    notebooks = sub.add_parser("notebooks", help="the course notebooks").add_subparsers(dest="notebooks_command",
                                                                                     required=True)
    export = notebooks.add_parser("export", help="execute the course notebooks and write each as HTML, with an index")
    export.add_argument("--notebooks", default="notebooks", help="the folder of NN_*.ipynb notebooks")
    export.add_argument("--out", default="reports/notebooks", help="where the HTML and index.html go")
    export.add_argument("--only", nargs="+", default=None, metavar="NAME", help="these notebooks only (name or NN prefix)")
    export.add_argument("--timeout", type=int, default=600, help="seconds per cell before the notebook counts as failed")
    export.add_argument("--json", action="store_true")

    serve = sub.add_parser("serve", help="an OpenAI-compatible endpoint on 127.0.0.1 in front of a lab backend")
    serve.add_argument("--host", default="127.0.0.1", help="a loopback address (127.0.0.0/8, ::1 or localhost)")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--backend", choices=["sim"], default="sim", help="the lab backend to serve")
    serve.add_argument("--profile", default="typical",
                       help="the simulator's behaviour profile (ideal, typical, sloppy, or a profile file)")
    serve.add_argument("--max-concurrency", type=int, default=1, help="concurrent requests before answering 429")
    serve.add_argument("--model", default=None, help="the model name clients must ask for (default: the backend's)")
    serve.add_argument("--latency", default=None, metavar="SECONDS",
                       help="added time per chat completion, to stand in for a remote API: 0.5, uniform:0.3,0.7 "
                            "or lognormal:MEDIAN,SIGMA (seconds)")
    return parser


def _data_info(args: argparse.Namespace) -> dict[str, Any]:
    from collections import Counter

    from rag_lab.chunking import chunk_corpus
    from rag_lab.loaders import load_dataset

    ds = load_dataset(args.dataset)
    questions = list(ds.evalset)
    formats = Counter(
        "/".join(str(q.metadata[k]) for k in ("source_format", "layout") if k in q.metadata) or "beir or world"
        for q in questions
    )
    return {
        "dataset": ds.name,
        "source": ds.source,
        "formats": dict(sorted(formats.items())),
        "documents": len(ds.corpus),
        "chunks": len(chunk_corpus(ds.corpus)),
        "questions": len(ds.evalset),
        "questions_by_type": ds.evalset.type_counts(),
        "questions_by_split": {s: len(ds.evalset.select(split=s)) for s in ds.evalset.splits},
        "answerable": sum(q.answerable for q in questions),
        "with_answer_aliases": sum(bool(q.answer_aliases) for q in questions),
        "with_hop_order": sum(len(q.hop_doc_ids) >= 2 for q in questions),
        "gold_coverage": ds.coverage.model_dump(),
        "notes": list(ds.notes),
    }


def _data_info_text(info: dict[str, Any]) -> str:
    """The human summary of ``data info``: one line per fact, coverage and notes spelled out."""
    from rag_lab.records import GoldCoverage

    lines = [f"{info['dataset']} ({info['source'] or 'shipped'})"]
    for key in ("formats", "documents", "chunks", "questions", "questions_by_type", "questions_by_split",
                "answerable", "with_answer_aliases", "with_hop_order"):
        value = info[key]
        shown = ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else value
        lines.append(f"  {key.replace('_', ' ')}: {shown}")
    lines.append(f"  {GoldCoverage(**info['gold_coverage']).describe()}")
    lines += [f"  note: {note}" for note in info["notes"]]
    return "\n".join(lines)


def _world_generate(args: argparse.Namespace) -> dict[str, Any]:
    from rag_lab.world import WorldConfig, generate_world, write_world

    config = WorldConfig(seed=args.seed, scale=args.scale, questions_per_type=args.questions_per_type,
                         dev_per_type=args.dev_per_type)
    ds = generate_world(config)
    folder = write_world(ds, config, args.out)
    return {"folder": str(folder), "documents": len(ds.corpus), "questions": len(ds.evalset)}


def _world_export_hotpotqa(args: argparse.Namespace) -> dict[str, Any]:
    from rag_lab.world import WorldConfig, generate_world
    from rag_lab.world.hotpotqa_export import export_hotpotqa

    config = WorldConfig(seed=args.seed, questions_per_type=args.questions_per_type, dev_per_type=0,
                         question_types=("bridge", "comparison"))
    examples = export_hotpotqa(generate_world(config), n_distractors=args.distractors)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(examples, indent=1) + "\n", encoding="utf-8")
    return {"file": str(args.out), "questions": len(examples)}


def _retrieval_eval(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.loaders import load_dataset
    from rag_lab.retrieval_eval import RETRIEVERS, evaluate_retrieval, format_report

    kinds = list(RETRIEVERS) if args.retriever == ["all"] else args.retriever
    unknown = [k for k in kinds if k not in RETRIEVERS]
    if unknown:
        raise ValueError(f"unknown retriever(s) {unknown}; choose from {list(RETRIEVERS)} or all")
    params = parse_settings(args.param, option="--param")
    ds = load_dataset(args.dataset)
    reports = [
        evaluate_retrieval(ds, kind, k=args.k, split=args.split, limit=args.limit, index_params=params)
        for kind in kinds
    ]
    text = format_report(reports)
    full = {"reports": [r.model_dump() for r in reports]}
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "retrieval_report.json").write_text(json.dumps(full, indent=2) + "\n", encoding="utf-8")
        (args.out / "retrieval_report.txt").write_text(text, encoding="utf-8")
        text += f"\nwrote {args.out / 'retrieval_report.json'} and {args.out / 'retrieval_report.txt'}\n"
    if not args.per_question:
        for r in full["reports"]:
            r.pop("per_question")
    return full, text


def _serve(args: argparse.Namespace) -> int:
    from rag_lab.llm.server import LabServer, Latency, check_loopback

    check_loopback(args.host)  # refuse before building a backend
    latency = Latency.parse(args.latency) if args.latency is not None else None
    from rag_lab.llm.simulator import SimulatedBackend

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
        print("rag-lab serve: stopped", flush=True)
    finally:
        server.shutdown()
    return 0


def _notebooks_export(args: argparse.Namespace) -> int:
    from rag_lab.notebook_export import export_notebooks

    results = export_notebooks(Path(args.notebooks), Path(args.out), only=args.only, timeout=args.timeout)
    failed = [r.name for r in results if not r.ok]
    summary = {"index": str(Path(args.out) / "index.html"), "notebooks": len(results), "failed": failed,
               "seconds": round(sum(r.seconds for r in results), 1)}
    print(json.dumps(summary, indent=2) if args.json else
          f"{len(results) - len(failed)} of {len(results)} notebooks ok in {summary['seconds']:.0f} s: {summary['index']}"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def _one_line_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> str:
    """Warnings on the command line are one line each (loader notes, not a traceback-like source line)."""
    return f"rag-lab: {category.__name__}: {message}\n"


def main(argv: list[str] | None = None) -> int:
    warnings.formatwarning = _one_line_warning
    args = _parser().parse_args(argv)
    if args.embedder:
        import os

        from rag_lab.embedding import EMBEDDER_ENV

        os.environ[EMBEDDER_ENV] = args.embedder  # spawned sweep workers inherit it
    try:
        if args.command == "data":
            result: Any = _data_info(args)
            text = _data_info_text(result)
        elif args.command == "world" and args.world_command == "generate":
            result = _world_generate(args)
            text = f"wrote {result['documents']} documents and {result['questions']} questions to {result['folder']}"
        elif args.command == "world":
            result = _world_export_hotpotqa(args)
            text = f"wrote {result['questions']} HotpotQA-format questions to {result['file']}"
        elif args.command == "serve":
            return _serve(args)
        elif args.command == "notebooks":
            return _notebooks_export(args)
        elif args.command == "run":
            result, text = run_command(args)
        elif args.command == "eval":
            result, text = eval_command(args)
        elif args.command == "sweep":
            result, text = sweep_command(args)
        elif args.command == "report":
            result, text = report_command(args)
        elif args.command == "calibrate":
            result, text = calibrate_command(args)
        elif args.command == "verify":
            result, text = verify_command(args)
        elif args.command == "robustness":
            result, text = robustness_command(args)
        else:
            result, text = _retrieval_eval(args)
    except (RagLabError, ValueError, OSError) as exc:
        print(f"rag-lab: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2) if args.json else text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
