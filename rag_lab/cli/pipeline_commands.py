"""The pipeline commands of ``rag-lab``: ``run`` (one question, with its trace) and ``eval``
(the full pipeline over an evaluation set, quality and cost)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from rag_lab.cli.options import add_backend_options, add_dataset, command, parse_settings, sim_profile
from rag_lab.errors import ConfigError
from rag_lab.llm.factory import open_backend
from rag_lab.llm.sim.profile import SimulatorProfile
from rag_lab.records import UNLABELED, GoldCoverage, gold_coverage

__all__ = ["parse_settings", "register"]  # parse_settings: re-exported for the benchmarks


def register(sub: argparse._SubParsersAction) -> None:
    run = command(sub, "run", run_command, "run the full pipeline on one question and print the result and trace")
    add_dataset(run)
    run.add_argument("--question", required=True, metavar="QID",
                     help="the question's id in the dataset, e.g. bridge-025 (rag-lab data info lists the types)")
    _add_pipeline_options(run)

    ev = command(sub, "eval", eval_command, "run the full pipeline over an evaluation set: quality and cost summaries")
    add_dataset(ev)
    ev.add_argument("--split", default=None, help="only the questions of this split (e.g. dev, test; default: all)")
    ev.add_argument("--limit", type=int, default=None, metavar="N", help="at most N questions (the first ones)")
    ev.add_argument("--types", nargs="+", default=None, metavar="TYPE", help="only these question types")
    ev.add_argument("--per-type", type=int, default=None, metavar="N",
                    help="at most N questions of each type (the first ones; as per_type in a sweep file)")
    ev.add_argument("--out", type=Path, default=None,
                    help="folder for per-question rows (questions.jsonl), traces (traces.jsonl: what rag-lab "
                         "calibrate reads) and the summary (summary.json)")
    ev.add_argument("--quiet", action="store_true", help="no progress bar (it is written to stderr)")
    _add_pipeline_options(ev)


def _add_pipeline_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, default=None, help="a YAML or JSON pipeline config")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
                   help="set one policy parameter by dotted key, e.g. --set crag.upper=0.6 (repeatable)")
    add_backend_options(p)


def _config(args: argparse.Namespace):
    from rag_lab.pipeline import PipelineConfig

    config = PipelineConfig.from_file(args.config) if args.config else PipelineConfig()
    settings = parse_settings(args.settings)
    return config.with_params(settings) if settings else config


def _backend(args: argparse.Namespace, profile: SimulatorProfile | None = None):
    """The backend of the options; ``profile``: the simulator profile when already read (else read here)."""
    profile = profile if profile is not None else sim_profile(args)
    return open_backend(args.backend, profile=profile, seed=args.seed, model=args.model,
                        base_url=args.base_url, cache=not args.no_cache, chat_format=args.chat_format,
                        max_tokens=args.max_tokens, record=args.record)


def _model_name(args: argparse.Namespace, backend: Any) -> str | None:
    """The model a real backend ran: the local GGUF named or defaulted, or the OpenAI-compatible
    server's model (given, from the environment, or the server's only one)."""
    from rag_lab.llm.local.backend import DEFAULT_MODEL

    if args.backend == "local":
        return args.model or DEFAULT_MODEL
    return backend.model if args.backend == "openai" else None


def run_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.evaluation.metric_table import question_metrics
    from rag_lab.loaders import load_dataset
    from rag_lab.pipeline import CorpusResources, Pipeline

    config = _config(args)
    dataset = load_dataset(args.dataset)
    try:
        question = dataset.evalset[args.question]
    except KeyError:
        raise ConfigError(f"no question {args.question!r} in {dataset.name!r}") from None
    with _backend(args) as backend:
        result, trace = Pipeline(config, CorpusResources(dataset.corpus), backend).run(question)
    verdict = answer_verdict(question_metrics(question, result, trace))
    out = {"result": result.model_dump(mode="json"), "trace": trace.model_dump(mode="json"), "verdict": verdict}
    lines = [f"Q [{question.qid}, {question.type}]: {question.text}", f"route: {trace.route}"]
    for step in trace.steps:
        what = step.decision or (f"queries={step.queries} yield={step.round_yield}" if step.kind == "retrieve" else "")
        lines.append(f"  {step.kind:10s} round={step.round} {what} {'; '.join(step.interventions)}".rstrip())
    lines += [f"stop: {result.stop_reason}  status: {result.status}  rounds: {result.rounds_used}",
              f"answer: {result.answer}", f"gold: {question.answer}", verdict_line(verdict)]
    return out, "\n".join(lines)


#: The answer metrics ``rag-lab run`` judges its one answer by: (verdict key, metric, what it checks).
VERDICT_METRICS = (("strict", "quality_answer_containment_strict", "a short answer containing the gold"),
                   ("lenient", "quality_answer_containment", "the answer contains the gold"),
                   ("abstention", "quality_abstention_accuracy", "answered if answerable, refused if not"))


def answer_verdict(row: dict[str, Any]) -> dict[str, bool | None]:
    """Right (True) or wrong (False) by each metric of :data:`VERDICT_METRICS` on one question's metrics row;
    None where the metric is undefined (no gold answer)."""
    return {key: None if row.get(metric) is None else bool(row[metric]) for key, metric, _ in VERDICT_METRICS}


def verdict_line(verdict: dict[str, bool | None]) -> str:
    """``verdict: right by the strict answer metric (...), wrong by the lenient one (...)`` (the abstention
    verdict only for a question without a gold answer)."""
    def word(key: str) -> str:
        return "right" if verdict[key] else "wrong"

    checks = {key: f"{metric}: {what}" for key, metric, what in VERDICT_METRICS}
    if verdict["strict"] is None:
        return f"verdict: no gold answer to match; {word('abstention')} ({checks['abstention']})"
    return (f"verdict: {word('strict')} by the strict answer metric ({checks['strict']}); {word('lenient')} by the "
            f"lenient one ({checks['lenient']})")


def eval_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.evaluation import evaluate_pipeline, summarize
    from rag_lab.experiments.calibration.runs import EVAL_QUESTIONS, EVAL_SUMMARY, EVAL_TRACES
    from rag_lab.experiments.engine.progress import ProgressBar, per_question
    from rag_lab.loaders import load_dataset
    from rag_lab.pipeline import CorpusResources, Pipeline

    config = _config(args)
    dataset = load_dataset(args.dataset)
    evalset = dataset.evalset.select(split=args.split, types=args.types, limit=args.limit, per_type=args.per_type)
    if not len(evalset):
        raise ConfigError(f"no questions selected from {dataset.name!r}")
    start = time.perf_counter()
    profile_read = sim_profile(args)  # read once (it may be a file): for the backend and the summary
    bars = [] if args.quiet else [ProgressBar()]   # on stderr, drawn as a sweep's bar from the same records
    with _backend(args, profile_read) as backend:
        run = evaluate_pipeline(Pipeline(config, CorpusResources(dataset.corpus), backend), evalset,
                                progress=per_question(bars, "eval", dataset.name))
    summary = summarize(run.rows)
    profile = args.profile + "".join(f" {k}" for k in args.sim_knobs)
    out = {"dataset": dataset.name, "split": args.split, "questions": len(evalset), "backend": args.backend,
           "profile": profile if args.backend == "sim" else None,
           "sim_profile": {**profile_read.model_dump(), "seed": args.seed} if args.backend == "sim" else None,
           "model": _model_name(args, backend), "max_tokens": args.max_tokens, "config": config.flat(),
           "gold_coverage": gold_coverage(dataset.corpus, evalset).model_dump(),
           "wall_seconds": time.perf_counter() - start, **summary,
           "knob_rates": run.knob_rates().to_dict(orient="records")}
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        with (args.out / EVAL_QUESTIONS).open("w", encoding="utf-8") as fh:
            for row in run.rows:
                fh.write(json.dumps(row) + "\n")
        with (args.out / EVAL_TRACES).open("w", encoding="utf-8") as fh:
            for trace in run.traces.values():
                fh.write(trace.model_dump_json() + "\n")
        (args.out / EVAL_SUMMARY).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out, format_summary(out)


SUMMARY_COLUMNS = (
    ("strict", "quality_answer_containment_strict"), ("lenient", "quality_answer_containment"),
    ("f1", "quality_f1"), ("echo", "quality_echo"), ("ctx_has_ans", "quality_has_answer_in_context"),
    ("ev_recall", "quality_evidence_recall"), ("late_gold", "quality_later_gold_retained"),
    ("abstain_acc", "quality_abstention_accuracy"),
    ("refused", "quality_refused"), ("fallback", "quality_fallback"), ("rounds", "cost_rounds"),
    ("llm_calls", "cost_llm_calls"), ("tokens", "cost_tokens"), ("model_lat_s", "cost_modelled_latency_s"))


def format_summary(out: dict[str, Any]) -> str:
    head = f"{'':14s} {'n':>4s} " + " ".join(f"{name:>11s}" for name, _ in SUMMARY_COLUMNS)
    lines = [f"{out['dataset']} split={out['split'] or 'all'} backend={out['backend']}"
             + (f" profile={out['profile']}" if out["profile"] else "")
             + (f" model={out['model']}" if out.get("model") else "")
             + f": {out['questions']} questions in {out['wall_seconds']:.1f}s", head]

    def row(label: str, values: dict[str, Any]) -> str:
        cells = " ".join(f"{values[c]:11.3f}" if values.get(c) is not None else f"{'-':>11s}" for _, c in SUMMARY_COLUMNS)
        return f"{label:14s} {values['n']:4d} {cells}"

    coverage = GoldCoverage(**out["gold_coverage"]) if "gold_coverage" in out else None
    if coverage is not None and not coverage.complete:
        lines.insert(1, coverage.describe())
    lines.append(row("overall", out["overall"]))
    lines += [row(t, v) for t, v in out["by_type"].items() if set(out["by_type"]) != {UNLABELED}]
    lines.append("stop reasons: " + ", ".join(f"{k}={v}" for k, v in out["stop_reasons"].items()))
    if out.get("knob_rates"):
        lines.append("simulator knobs (role knob: fired/opportunities = observed vs configured; per call of the role):")
        lines += [f"  {r['role']:10s} {r['knob']:20s} {r['fired']:4d}/{r['opportunities']:<4d} = {r['observed']:.3f} "
                  f"vs {r['configured']:.3f}; {r['per_call']:.3f} of {r['calls']} calls" for r in out["knob_rates"]]
    return "\n".join(lines)
