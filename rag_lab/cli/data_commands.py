"""The data commands of ``rag-lab``: ``data info`` (what a dataset holds), ``data build-vectors`` (the
vectors a dataset folder ships), ``world generate`` and ``world export-hotpotqa`` (the synthetic world),
and ``retrieval-eval`` (Recall@k, MRR@k, nDCG@k of every index kind)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rag_lab.cli.options import add_dataset, command, group, parse_settings
from rag_lab.errors import ConfigError


def register(sub: argparse._SubParsersAction) -> None:
    data = group(sub, "data", "inspect datasets and build their shipped files")
    info = command(data, "info", data_info, "documents, chunks and questions by type and split")
    add_dataset(info)
    vectors = command(data, "build-vectors", build_vectors,
                      "embed every text a run on a dataset folder embeds and write its vectors/<model>.npz "
                      "(regenerate after the dataset or the chunking changes)")
    vectors.add_argument("dataset_dir", nargs="+", type=Path, help="dataset folders to embed, e.g. data/world")

    world = group(sub, "world", "the synthetic world")
    gen = command(world, "generate", world_generate, "generate a synthetic world into a folder")
    gen.add_argument("--out", required=True, type=Path, metavar="DIR", help="the folder to write the world into")
    gen.add_argument("--seed", type=int, default=7, help="the generator's seed (the same seed gives the same bytes)")
    gen.add_argument("--scale", type=float, default=1.0, help="multiplies every entity count (150 ≈ 107k docs)")
    gen.add_argument("--questions-per-type", type=int, default=50, metavar="N", help="questions of each type")
    gen.add_argument("--dev-per-type", type=int, default=20, metavar="N",
                     help="of those, how many of each type go to the dev split (the rest: test)")

    exp = command(world, "export-hotpotqa", world_export_hotpotqa,
                  "world bridge/comparison questions as a HotpotQA distractor file")
    exp.add_argument("--out", required=True, type=Path, metavar="FILE", help="the HotpotQA JSON file to write")
    exp.add_argument("--seed", type=int, default=7, help="the world generator's seed")
    exp.add_argument("--questions-per-type", type=int, default=150,
                     help="questions drawn per type (the corpus is the same as the shipped world's for seed 7)")
    exp.add_argument("--distractors", type=int, default=8, metavar="N",
                     help="distractor paragraphs beside each question's gold ones")

    ev = command(sub, "retrieval-eval", retrieval_eval, "Recall@k, MRR@k, nDCG@k of gold documents, by question type")
    add_dataset(ev)
    ev.add_argument("--retriever", nargs="+", default=["dense"], metavar="KIND",
                    help="one or more index kinds (the names of rag_lab.index.INDEX_KINDS: dense, exact, bm25, "
                         "hybrid, and any registered since), or all")
    ev.add_argument("--k", type=int, default=10, help="the cut-off of Recall@k, MRR@k and nDCG@k")
    ev.add_argument("--split", default=None, help="only the questions of this split (e.g. dev, test; default: all)")
    ev.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N questions")
    ev.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="index parameter, e.g. M=32, ef_search=128, k1=1.2, k_rrf=60 (repeatable)")
    ev.add_argument("--out", type=Path, default=None,
                    help="folder to write retrieval_report.json and retrieval_report.txt into")
    ev.add_argument("--per-question", action="store_true", help="include per-question scores in --json output")


def data_info(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from collections import Counter

    from rag_lab.chunking import chunk_corpus
    from rag_lab.loaders import dataset_layout, load_dataset

    ds = load_dataset(args.dataset)
    questions = list(ds.evalset)
    layout = dataset_layout(args.dataset)  # a name of the loader registry, LAYOUTS
    formats = Counter("/".join([layout, *([str(q.metadata["layout"])] if "layout" in q.metadata else [])])
                      for q in questions)
    info = {"dataset": ds.name, "source": ds.source, "formats": dict(sorted(formats.items())),
            "documents": len(ds.corpus), "chunks": len(chunk_corpus(ds.corpus)), "questions": len(ds.evalset),
            "questions_by_type": ds.evalset.type_counts(),
            "questions_by_split": {s: len(ds.evalset.select(split=s)) for s in ds.evalset.splits},
            "answerable": sum(q.answerable for q in questions),
            "with_answer_aliases": sum(bool(q.answer_aliases) for q in questions),
            "with_hop_order": sum(len(q.hop_doc_ids) >= 2 for q in questions),
            "gold_coverage": ds.coverage.model_dump(), "notes": list(ds.notes)}
    return info, data_info_text(info)


def data_info_text(info: dict[str, Any]) -> str:
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


def build_vectors(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.data_build.vectors import write_vector_file

    written = [write_vector_file(folder) for folder in args.dataset_dir]
    result = {"files": [{"file": str(p), "bytes": p.stat().st_size} for p in written]}
    return result, "\n".join(f"wrote {p} ({p.stat().st_size / 1e6:.1f} MB)" for p in written)


def world_generate(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.world import WorldConfig, generate_world, write_world

    config = WorldConfig(seed=args.seed, scale=args.scale, questions_per_type=args.questions_per_type,
                         dev_per_type=args.dev_per_type)
    ds = generate_world(config)
    folder = write_world(ds, config, args.out)
    result = {"folder": str(folder), "documents": len(ds.corpus), "questions": len(ds.evalset)}
    return result, f"wrote {result['documents']} documents and {result['questions']} questions to {result['folder']}"


def world_export_hotpotqa(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.data_build.hotpotqa_export import export_hotpotqa
    from rag_lab.world import WorldConfig, generate_world

    config = WorldConfig(seed=args.seed, questions_per_type=args.questions_per_type, dev_per_type=0,
                         question_types=("bridge", "comparison"))
    examples = export_hotpotqa(generate_world(config), n_distractors=args.distractors)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(examples, indent=1) + "\n", encoding="utf-8")
    result = {"file": str(args.out), "questions": len(examples)}
    return result, f"wrote {result['questions']} HotpotQA-format questions to {result['file']}"


def retrieval_eval(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.evaluation.retrieval_eval import evaluate_retrieval, format_report
    from rag_lab.index import INDEX_KINDS
    from rag_lab.loaders import load_dataset

    kinds = list(INDEX_KINDS) if args.retriever == ["all"] else args.retriever
    unknown = [k for k in kinds if k not in INDEX_KINDS]
    if unknown:
        raise ConfigError(f"unknown retriever(s) {unknown}; choose from {list(INDEX_KINDS)} or all")
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
