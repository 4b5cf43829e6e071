"""The experiment commands of ``rag-lab``: ``sweep`` (run or resume a sweep file into a run
directory and print its results table, then its summary, :class:`~rag_lab.experiments.engine.summary.SweepSummary`,
as text: formatting only, every number and verdict comes from the summary) and ``report`` (a self-contained HTML
report of a run)."""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_lab.cli.options import add_server_options, command, server_settings
from rag_lab.evaluation.families import PARAM_PREFIX
from rag_lab.experiments.engine.executors import EXECUTORS, executors_help

if TYPE_CHECKING:   # the summary's modules load pandas and scipy: a bad sweep file is refused before them
    from rag_lab.experiments.engine.summary import SweepSummary

#: Columns printed by ``rag-lab sweep`` after the parameters (those present in the table).
KEY_COLUMNS = (
    ("strict", "quality_answer_containment_strict"), ("lenient", "quality_answer_containment"),
    ("f1", "quality_f1"), ("echo", "quality_echo"), ("refused_model", "quality_refused_model"),
    ("refused_pipe", "quality_refused_pipeline"), ("abstain_acc", "quality_abstention_accuracy"),
    ("ctx_has_ans", "quality_has_answer_in_context"), ("rounds", "cost_rounds"), ("llm_calls", "cost_llm_calls"),
    ("spent_calls", "spent_llm_calls"), ("tokens", "cost_tokens"))


#: Where ``rag-lab sweep --help`` sends a reader for the sweep file's format.
SWEEP_FILE_HELP = ("A sweep file names the questions (dataset, split, types, per_type, limit), the base config, "
                   "the grid of dotted keys, the backend, the seeds, and optionally search: and findings:. Its "
                   "format: docs/cli.md, section 'Sweep files'; examples: sweeps/quickstart.yaml, sweeps/search.yaml.")


def register(sub: argparse._SubParsersAction) -> None:
    sweep = command(sub, "sweep", sweep_command, "run (or resume) a parameter sweep into a run directory")
    sweep.epilog = SWEEP_FILE_HELP
    sweep.set_defaults(on_interrupt="the finished questions are kept in {args.out}; to resume, run the same "
                                    "command: {command}")
    sweep.add_argument("sweep_file", type=Path, metavar="SWEEP_FILE",
                       help="a YAML or JSON sweep file (format: see below)")
    sweep.add_argument("--out", required=True, type=Path, metavar="RUN_DIR",
                       help="run directory (run.sqlite); re-running the same sweep into it skips finished work")
    sweep.add_argument("--workers", type=int, default=1, help="parallel workers (threads, processes or Dask workers)")
    sweep.add_argument("--executor", default=None, choices=EXECUTORS.names(),
                       help=f"where questions run (default serial; dask with --dask): {executors_help()}")
    sweep.add_argument("--dask", default=None, metavar="ADDRESS",
                       help="Dask scheduler address, e.g. tcp://127.0.0.1:8786 (implies --executor dask)")
    sweep.add_argument("--force", action="store_true", help="overwrite a run directory that holds a different sweep")
    sweep.add_argument("--quiet", action="store_true", help="no progress bar")
    sweep.add_argument("--table", type=Path, default=None, metavar="CSV_OR_PARQUET",
                       help="also write the table's reproducible columns (no wall time, no cache misses) as CSV under "
                            "the run's provenance as '# provenance.<key>: <value>' lines, or as Parquet (a .parquet "
                            "path; the provenance in its metadata)")
    sweep.add_argument("--rows", type=Path, default=None, metavar="CSV",
                       help="also write the per-question rows of every candidate as CSV (candidate_id, seed, param_*, "
                            "qid, type, every quality_* and cost_* metric), one line per candidate and question, under "
                            "the run's provenance as '#' lines")
    sweep.add_argument("--replay", action="store_true",
                       help="answer every LLM call from the sweep's cassette (backend.cassette), offline; a call it "
                            "does not hold is an error naming the question, the role and the nearest recorded call")
    sweep.add_argument("--wait", action="store_true",
                       help="when another process is writing RUN_DIR, wait for it to finish, then resume (default: "
                            "refuse, naming its pid)")
    add_server_options(sweep)

    report = command(sub, "report", report_command, "write a self-contained HTML report of a sweep's run directory")
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR",
                        help="a sweep's run directory (the --out of rag-lab sweep, holding run.sqlite)")
    report.add_argument("--out", type=Path, default=None, metavar="REPORT_HTML",
                        help="the HTML file to write (default: RUN_DIR/report.html)")
    report.add_argument("--export", default=None, metavar="FORMATS",
                        help="also write every figure of the report as svg, pdf and/or png (comma-separated) into "
                             "--figures (needs the export extra and Debian's chromium)")
    report.add_argument("--figures", type=Path, default=None, metavar="DIR",
                        help="where --export writes the figures (default: a figures/ folder beside REPORT_HTML)")
    report.add_argument("--mlflow", type=Path, default=None, metavar="TRACKING_DIR",
                        help="also log every candidate and the report to a local MLflow tracking folder "
                             "(needs the mlflow extra; the folder holds mlflow.db and artifacts/)")


def sweep_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.experiments.engine.sweep_file import load_sweep_spec

    spec = load_sweep_spec(args.sweep_file)  # a bad sweep file fails here, before the runner's heavy imports
    spec = spec.with_backend(**server_settings(args))
    from rag_lab.experiments.sweep_runner import run_sweep

    executor = args.executor or ("dask" if args.dask else "serial")
    start = time.perf_counter()
    result = run_sweep(spec, args.out, workers=args.workers, executor=executor, dask_address=args.dask,
                       progress="quiet" if args.quiet else "auto", overwrite=args.force, replay=args.replay,
                       wait=args.wait)
    seconds = time.perf_counter() - start
    from rag_lab.experiments.engine.summary import summarize

    if args.table is not None:
        result.write_table(args.table)
    if args.rows is not None:
        result.write_rows(args.rows)
    summary = summarize(result)   # what the sweep found, built once; the report renders the same record
    table = result.table
    out = {"run_dir": str(args.out), "name": result.spec["name"], "runs": len(table), "questions": len(result.qids),
           "computed": result.computed, "reused": result.reused, "complete": result.complete,
           "question_runs": summary.progress._asdict(), "provenance": result.provenance.model_dump(mode="json"),
           "warnings": list(summary.warnings), "wall_seconds": seconds,
           "table": json.loads(table.to_json(orient="records"))}
    out["findings"] = [{**f.to_dict(), "provisional": summary.provisional} for f in summary.findings]
    text = sweep_text(summary, format_table(result, summary, seconds), _search_text(result))
    return out, text


def _search_text(result: Any) -> str:
    """A search's question runs against a full grid of its candidates, and each dropped candidate with why."""
    if not result.search:
        return ""
    table = result.table
    runs, full = result.question_runs(), result.full_grid_runs()
    share = f" ({runs / full:.1%} of {full} for every candidate on every question)" if full else ""
    lines = [f"search ({result.search['sampler']}): {len(table)} candidates, {runs} question runs{share}"]
    if result.search.get("race"):
        from rag_lab.experiments.engine.search_space import RaceSpec
        from rag_lab.experiments.tuning.racing import race_rule

        lines.append(f"race: {race_rule(RaceSpec(**result.search['race']), len(result.qids))}")
    labels = result.labels()
    for _, row in table[table["status"] == "dropped"].iterrows():
        lines.append(f"  dropped {row['candidate_id']} ({labels.get(row['candidate_id'], '')}): {row['drop_reason']}")
    return "\n\n" + "\n".join(lines)


def format_table(result: Any, summary: SweepSummary, seconds: float) -> str:
    """The key columns of a sweep's table (its summary's, with the Pareto front), one line per run, and where the
    run is."""
    from rag_lab.experiments.engine.summary import identical_columns

    table = summary.table
    params = result.param_columns
    keys = [(name, col) for name, col in KEY_COLUMNS if col in table.columns]
    same = identical_columns(table, result.all_rows(), [col for _, col in keys])
    names_of = dict((col, name) for name, col in keys)
    keys = [(name, col) for name, col in keys if col not in same]
    names = [p.removeprefix(PARAM_PREFIX) for p in params]
    widths = [max(len(n), *(len(_fmt(v)) for v in table[p])) for n, p in zip(names, params, strict=True)]
    head = (f"{'candidate':12s} {'seed':>4s} " + " ".join(f"{n:>{w}s}" for n, w in zip(names, widths, strict=True))
            + " " + " ".join(f"{name:>11s}" for name, _ in keys) + "  pareto")
    lines = [head]
    for _, row in table.iterrows():
        cells = " ".join(f"{_fmt(row[p]):>{w}s}" for p, w in zip(params, widths, strict=True))
        values = " ".join(f"{_fmt(row[c]):>11s}" for _, c in keys)
        lines.append(f"{row['candidate_id']:12s} {row['seed']:>4d} {cells} {values}  {'*' if row['is_pareto'] else ''}")
    if same:
        lines.append("shown once, equal on every question: " + "; ".join(
            f"{names_of[dup]} = {names_of[kept]}" for dup, kept in same.items()))
    progress = summary.progress
    provisional = "" if progress.complete else " — provisional: the sweep has not finished"
    lines.append(f"* Pareto front of {summary.cost_col} (minimised) vs {summary.quality_col} (maximised){provisional}; "
                 "'-': the base config's value")
    lines.append(f"run: {result.run_dir} ({progress.text()}; {result.computed} computed now, {result.reused} "
                 f"reused, {seconds:.1f}s); report: rag-lab report {result.run_dir} --out "
                 f"{result.run_dir / 'report.html'}")
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


#: What the text table's marks mean, after the reference sentence.
MARKS = ("; * the interval excludes 0 and the Holm-adjusted p < 0.05; otherwise (detect ≥ x): the smallest |Δ| the "
         "sample could have shown with 80% power at Holm's strictest level (|Δ| ≤ x: no question differs, the exact "
         "95% bound)")


def provenance_text(summary: SweepSummary) -> str:
    """Where the results come from (the run's stored provenance), one line per part."""
    if summary.provenance is None:
        return ""
    return "\n" + "\n".join(f"{what}: {text}" for what, text in summary.provenance.lines())


def declared_text(summary: SweepSummary) -> str:
    """The declared claims, one verdict each, under the sentence that says how they were tested (each line says
    it is provisional on an unfinished sweep)."""
    from rag_lab.experiments.engine.comparisons import DECLARED_SENTENCE

    if not summary.findings:
        return ""
    return "\n\n" + DECLARED_SENTENCE + "\n" + "\n".join(f"  {line}" for line in summary.finding_lines)


def delta_table_text(summary: SweepSummary) -> str:
    """The Δ-vs-reference table: one line per candidate, each Δ with its p and Holm p and its mark."""
    from rag_lab.evaluation.catalog import label
    from rag_lab.experiments.engine.comparisons import EXPLORATORY_SENTENCE

    cells = [[cell.text + cell.mark for cell in row.cells] for row in summary.deltas]
    names = [row.label for row in summary.deltas]
    heads = [f"Δ {label(m)}" for m in summary.metrics]
    w0 = max([len("changes vs reference"), *map(len, names)])
    widths = [max([len(h), *(len(c[j]) for c in cells)]) for j, h in enumerate(heads)]
    lines = [EXPLORATORY_SENTENCE, summary.reference + MARKS,
             f"{'changes vs reference':{w0}s}  " + "  ".join(f"{h:>{w}s}" for h, w in zip(heads, widths, strict=True))]
    lines += [f"{n:{w0}s}  " + "  ".join(f"{c:>{w}s}" for c, w in zip(row, widths, strict=True))
              for n, row in zip(names, cells, strict=True)]
    return "\n".join(lines)


def deltas_text(summary: SweepSummary) -> str:
    """The exploratory table under its lead (``PROVISIONAL (…)`` on an unfinished sweep); '' with one candidate."""
    if not summary.frames or len(summary.table) < 2:
        return ""
    lead = f"PROVISIONAL ({summary.progress.text()}): " if summary.provisional and summary.progress else ""
    return "\n\n" + lead + delta_table_text(summary)


def warnings_text(summary: SweepSummary) -> str:
    return "".join(f"\n\nwarning: {w}" for w in summary.warnings)


def sweep_text(summary: SweepSummary, table: str, search: str) -> str:
    """What ``rag-lab sweep`` prints: its ``table`` of candidates, the provenance, a ``search``'s part, the declared
    claims, the exploratory Δ table and the reply warnings."""
    return (table + provenance_text(summary) + search + declared_text(summary) + deltas_text(summary)
            + warnings_text(summary))


def _check_reportable(run_dir: Path) -> Any:
    """The sweep of ``run_dir``, or a clear error, before anything is written, for a run directory the report
    cannot summarise: one where no question has finished, or whose stated findings name a config it does not have."""
    from rag_lab.experiments.sweep_runner import load_sweep

    result = load_sweep(run_dir)
    result.require_finished()
    result.check_findings()
    return result


def report_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from rag_lab.figures.export import export_figures, parse_formats
    from rag_lab.report import report_figures, write_report
    from rag_lab.report.mlflow_log import check_folder, log_sweep

    formats = parse_formats(args.export) if args.export else None  # a bad format fails before anything is written
    if args.mlflow is not None:
        check_folder(args.mlflow)   # so does a tracking folder that is a file
    result = _check_reportable(args.run_dir)
    path = write_report(result, args.out if args.out is not None else args.run_dir / "report.html")
    progress = result.progress()
    out: dict[str, Any] = {"report": str(path), "question_runs": progress._asdict(), "complete": progress.complete}
    lines = [f"wrote {path}"]
    if not progress.complete:
        lines.append(f"the sweep has not finished: {progress.text()}; its Pareto front and claims are provisional")
    if formats:
        written = export_figures(report_figures(args.run_dir), args.figures or path.parent / "figures", formats)
        out["figures"] = [str(p) for p in written]
        lines.append(f"wrote {len(written)} figure files into {written[0].parent}" if written else "no figures")
    if args.mlflow is not None:
        logged = log_sweep(args.run_dir, args.mlflow, report=path)
        out["mlflow"] = logged.to_dict()
        lines.append(logged.text())
    return out, "\n".join(lines)
