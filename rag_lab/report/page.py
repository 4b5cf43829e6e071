"""A self-contained HTML report of a sweep's results table (:func:`write_report`, ``rag-lab report``): one file, no
network, plotly.js inlined once. The cost-vs-quality scatters with the Pareto front, the results table, a note on
how to read them and, from a run directory, the declared claims, the paired differences against the base config
(a Δ table and forest plots), what each guardrail buys (right answers lost against wrong answers prevented), a
search's drops and the verifications on a real backend. Its prose and style are in ``templates/`` beside this
module; every text from the table is HTML-escaped. What the report holds: docs/design.md §6."""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY, label
from rag_lab.evaluation.families import is_cost, is_quality, short_name
from rag_lab.experiments.calibration.verify import load_verifications, tau_text
from rag_lab.experiments.engine.comparisons import DECLARED_SENTENCE, EXPLORATORY_SENTENCE
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.experiments.engine.search_space import RaceSpec
from rag_lab.experiments.engine.summary import (
    DeltaCell,
    DeltaRow,
    SweepSummary,
    difference_cell,
    headline_quality,
    identical_columns,
    summarize,
)
from rag_lab.experiments.sweep_runner import load_sweep
from rag_lab.experiments.tuning.racing import race_rule
from rag_lab.figures import cost_quality, forest, guard_tradeoff, sim_vs_real, where_grid
from rag_lab.figures.common import PARAM_PREFIX, format_value
from rag_lab.paths import DATA_DIR, package_text, template
from rag_lab.report.glance import glance_html, glance_table, rows_alike
from rag_lab.report.header import TITLE, header_html
from rag_lab.report.render import render
from rag_lab.stats.summary import is_ci_bound

#: Cost columns tried, in order, for the second scatter (the first present that is not the main cost column).
SECOND_COST_COLS = ("cost_tokens", "cost_modelled_latency_s", "cost_usd")

_PLOT_HEIGHT = 520
#: The smallest plot area (px) of the report's scatters: a page at least 960 px wide (a laptop window).
_LABEL_PX = (640.0, 360.0)
_PLOT_CONFIG = {"displaylogo": False}
#: The report's style sheet (``templates/style.css``), inlined into its ``<style>``.
_STYLE = "\n" + package_text(__package__, "templates/style.css")
#: Column of the point labels added to the table for the scatters (the parameters a candidate changes).
LABEL_COL = "changes"
TEXT_CLASS = ' class="text"'


def _load(source: Any) -> tuple[pd.DataFrame, SweepResult | None, str]:
    """The results table, the sweep it came from (None for a bare table) and a name for it: a DataFrame as is,
    a :class:`SweepResult`, or a run directory through ``load_sweep``."""
    if isinstance(source, pd.DataFrame):
        return source, None, "results table"
    if isinstance(source, (str, os.PathLike)):
        run_dir = Path(source)
        if not run_dir.is_dir():
            raise ConfigError(f"{run_dir}: not a run directory")
        source = load_sweep(run_dir)
    if isinstance(source, SweepResult):
        return source.table, source, str(source.spec.get("name") or Path(source.run_dir).resolve().name)
    raise ConfigError(f"source must be a results DataFrame, a SweepResult or a run directory, got {type(source).__name__}")


def _column_order(table: pd.DataFrame, cost_col: str, quality_col: str) -> list[str]:
    """Key columns first: candidate id, parameters, quality means (chosen first), costs (chosen first),
    ``is_pareto``; then everything else. CI bounds are folded into their quality column's cell."""
    cols = list(table.columns)
    quality = [c for c in cols if is_quality(c) and not is_ci_bound(c, cols)]
    costs = [c for c in cols if is_cost(c)]
    key = [*(c for c in ("candidate_id", LABEL_COL) if c in cols), *(c for c in cols if c.startswith(PARAM_PREFIX)),
           quality_col, *(c for c in quality if c != quality_col), cost_col, *(c for c in costs if c != cost_col),
           "is_pareto"]
    bounds = {f"{q}{s}" for q in quality for s in ("_lo", "_hi")}
    return key + [c for c in cols if c not in key and c not in bounds]


def _cell(row: pd.Series, col: str, columns: pd.Index) -> str:
    text = format_value(row[col])
    if is_quality(col) and f"{col}_lo" in columns and f"{col}_hi" in columns and text != "–":
        text += f" [{format_value(row[f'{col}_lo'])}, {format_value(row[f'{col}_hi'])}]"
    return html.escape(text)


def _is_text(col: str) -> bool:
    return col in ("candidate_id", LABEL_COL) or col.startswith(PARAM_PREFIX)


def _collapsed_note(same: Mapping[str, str]) -> str:
    pairs = "; ".join(f"{html.escape(dup)} = {html.escape(kept)}" for dup, kept in same.items())
    return template(__package__, "templates/collapsed_note.html").substitute(pairs=pairs)


def collapsed(table: pd.DataFrame, same: dict[str, str]) -> pd.DataFrame:
    """``table`` without the columns ``same`` names as duplicates (and their ``_lo``/``_hi`` bounds)."""
    drop = [c for col in same for c in (col, f"{col}_lo", f"{col}_hi") if c in table.columns]
    return table.drop(columns=drop)


def results_table_html(table: pd.DataFrame, cost_col: str, quality_col: str) -> str:
    """The results table as an HTML ``<table>`` (escaped), Pareto rows marked with the class ``pareto``."""
    order = _column_order(table, cost_col, quality_col)
    kinds = [(c, TEXT_CLASS if _is_text(c) else "") for c in order]
    heads = "".join(f"<th{cls}>{html.escape(c.removeprefix(PARAM_PREFIX))}</th>" for c, cls in kinds)
    lines = ["<table>", f"<thead><tr>{heads}</tr></thead>", "<tbody>"]
    for _, row in table.iterrows():
        cls = ' class="pareto"' if bool(row["is_pareto"]) else ""
        lines.append(f"<tr{cls}>" + "".join(f"<td{k}>{_cell(row, c, table.columns)}</td>" for c, k in kinds) + "</tr>")
    lines += ["</tbody>", "</table>"]
    return "\n".join(lines)


def _how_to_read(cost_col: str, quality_col: str) -> str:
    cost = f"{html.escape(label(cost_col))} (<code>{html.escape(cost_col)}</code>)"
    quality = f"{html.escape(label(quality_col))} (<code>{html.escape(quality_col)}</code>)"
    return template(__package__, "templates/how_to_read.html").substitute(quality=quality, cost=cost)


# --- paired differences vs the base config ------------------------------------------------------------


def _measured_class(cell: DeltaCell) -> Markup:
    """The cell class of a paired difference: a measured one bold and coloured by its sign; a declared claim's cell
    framed (``declared``), bold when the claim holds."""
    declared = " declared" if cell.declared is not None else ""
    if not cell.measured:
        return Markup(f' class="{declared.strip()}"' if declared else "")
    if cell.declared is not None and cell.declared.direction == "none":   # a no-change claim that holds: no direction
        return Markup(' class="measured declared"')
    sign = 1 if cell.up else -1
    way = forest.direction(cell.metric)
    better = "neutral" if way == 0 else "better" if sign * way > 0 else "worse"
    return Markup(f' class="measured {"up" if sign > 0 else "down"} {better}{declared}"')


def _thead(heads: Sequence[str], text_columns: int) -> str:
    """A table head; the first ``text_columns`` columns hold text (left-aligned)."""
    cells = "".join(f"<th{TEXT_CLASS if i < text_columns else ''}>{html.escape(h)}</th>" for i, h in enumerate(heads))
    return f"<thead><tr>{cells}</tr></thead>"


def _share(row: DeltaRow) -> str:
    return "–" if pd.isna(row.share_differ) else f"{row.share_differ:.0%}"


def delta_table_html(summary: SweepSummary) -> str:
    """The Δ-vs-reference table of the summary: one row per candidate but the reference, one column per metric
    with ``Δ [lo, hi]`` with its p and Holm p (bold where the interval excludes 0 and the Holm p is below 0.05) or,
    in a declared claim's cell (framed), that claim's verdict; the questions used and the share that differ on the
    first metric (``templates/delta_table.html.j2``)."""
    metrics = summary.metrics
    heads = ["candidate", "changes vs reference", *(f"Δ {label(m)}" for m in metrics), "questions",
             f"differ on {label(metrics[0])}"]
    return render("delta_table.html.j2", heads=heads, rows=summary.deltas, cell_class=_measured_class, share=_share)


def _findings_section(summary: SweepSummary) -> str:
    """The claims the sweep declared up front, each with its one test, kind and verdict (as ``rag-lab sweep`` prints
    them, from the same summary)."""
    return render("findings.html.j2", sentence=DECLARED_SENTENCE, lines=summary.finding_lines)


def _delta_section(summary: SweepSummary, figures: Mapping[str, Any]) -> list[str]:
    parts = ["<h2>Paired differences vs the reference (exploratory)</h2>",
             f'<p class="note"><b>{html.escape(EXPLORATORY_SENTENCE)}</b></p>',
             template(__package__, "templates/delta_note.html").substitute(reference=html.escape(summary.reference)),
             '<div class="table-wrap">', delta_table_html(summary), "</div>"]
    for i, metric in enumerate(summary.frames):
        parts.append(_html(figures[f"forest_{metric}"], f"forest-{i}"))
    return parts


def _html(figure: Any, div_id: str) -> str:
    return figure.to_html(full_html=False, include_plotlyjs=False, config=_PLOT_CONFIG, div_id=div_id)


# --- what each guardrail buys ----------------------------------------------------------------------------

#: The guard table's columns: (heading, :data:`rag_lab.figures.guard_tradeoff.COLUMNS` name); the first two are text.
GUARD_COLUMNS = (("candidate", "candidate_id"), ("changes vs reference", "label"), ("questions", "n"),
                 ("right answers lost", "lost"), ("wrong answers prevented", "prevented"),
                 ("right gained", "gained_right"), ("new wrong", "new_wrong"), ("net at c = 1", "net_c1"),
                 ("Δ LLM calls / question", "delta_calls"))


def has_guard_metrics(sweep: SweepResult) -> bool:
    """Whether the sweep's rows hold ``quality_right`` and ``quality_confident_error`` (runs stored before those
    metrics existed do not) and it has a config besides the reference to count against it."""
    stored = [c for c, n in zip(sweep.table["candidate_id"], sweep.table["n_questions"], strict=True) if n]
    if sweep.table["config_id"].nunique() < 2 or not stored:
        return False
    return {guard_tradeoff.RIGHT, guard_tradeoff.WRONG} <= set(sweep.rows(stored[0]).columns)


def guard_table_html(info: guard_tradeoff.GuardTradeoffInfo) -> str:
    """The guard table: one row per candidate, the counts of :func:`~rag_lab.figures.guard_tradeoff.guard_tradeoff_info`
    (net at c = 1 signed, Δ calls to 3 decimals)."""
    lines = ['<table class="guard">', _thead([h for h, _ in GUARD_COLUMNS], 2), "<tbody>"]
    for _, row in info.table.iterrows():
        cells = [f'<td class="text">{html.escape(str(row[c]))}</td>' for _, c in GUARD_COLUMNS[:2]]
        cells += [f"<td>{int(row[c])}</td>" for c in ("n", "lost", "prevented", "gained_right", "new_wrong")]
        cells.append(f"<td>{int(row['net_c1']):+d}</td>")
        calls = "–" if pd.isna(row["delta_calls"]) else f"{row['delta_calls']:+.3f}"
        cells.append(f"<td>{html.escape(calls)}</td>")
        lines.append("<tr>" + "".join(cells) + "</tr>")
    lines += ["</tbody>", "</table>"]
    return "\n".join(lines)


def _guard_section(info: guard_tradeoff.GuardTradeoffInfo, figure: Any) -> list[str]:
    return ["<h2>What each guardrail buys</h2>",
            template(__package__, "templates/guard_note.html").substitute(reference=html.escape(info.reference)),
            '<div class="table-wrap">', guard_table_html(info), "</div>", _html(figure, "guard-tradeoff")]


# --- where related claims hold (the robustness table) ---------------------------------------------------


def related_rows(findings: Sequence[Any], claims: Sequence[Mapping[str, Any]], table: Mapping[str, Any]) -> list[str]:
    """The robustness table's rows (keys) that test a contrast like one of the sweep's declared claims
    (:func:`~rag_lab.report.glance.rows_alike`), in the order of the claims."""
    return list(dict.fromkeys(key for finding, claim in zip(findings, claims, strict=True)
                              for key in rows_alike(table, set(dict(claim.get("candidate") or {})), [finding.metric])))


def _where_section(info: where_grid.WhereGridInfo, figure: Any) -> list[str]:
    rows = "; ".join(f"{k}: {c}" for k, c in zip(info.keys, info.claims, strict=True))
    return ["<h2>Where claims like these hold</h2>",
            template(__package__, "templates/where_note.html").substitute(source=html.escape(info.source),
                                                                           rows=html.escape(rows)),
            _html(figure, "where-grid")]


# --- simulated vs real (rag-lab verify) ---------------------------------------------------------------


def _gap_cell(row: pd.Series) -> str:
    cell = difference_cell(row, str(row.get("metric", "")))
    return f"<td{_measured_class(cell)}>{html.escape(cell.interval)}</td>"


def verify_table_html(verification: Any) -> str:
    """The tables of a verification: every compared metric's mean over the candidates (simulated, real,
    paired gap real − simulated), then each candidate on the headline quality and cost metrics."""
    gaps = verification.gaps
    heads = ["metric (mean of the candidates)", "simulated", "real", "real − simulated [95% paired]", "questions"]
    lines = ['<table class="verify">', _thead(heads, 1), "<tbody>"]
    for _, g in gaps[gaps["candidate"] == "all"].iterrows():
        lines.append(f"<tr><td class=\"text\">{html.escape(label(g['metric']))}</td>"
                     f"<td>{html.escape(format_value(g['sim']))}</td><td>{html.escape(format_value(g['real']))}</td>"
                     f"{_gap_cell(g)}<td>{int(g['n'])}</td></tr>")
    lines += ["</tbody>", "</table>"]
    metrics = [m for m in dict.fromkeys([verification.by, DEFAULT_QUALITY, DEFAULT_COST]) if m in set(gaps["metric"])]
    heads = ["candidate", *(f"{label(m)}: {part}" for m in metrics for part in ("sim", "real", "real − sim"))]
    lines += ['<table class="verify">', _thead(heads, 1), "<tbody>"]
    for _, c in verification.candidates.iterrows():
        cells = [f"<td class=\"text\">{html.escape(c['label'])}{' ★' if c['config_id'] == verification.winner else ''}"
                 "</td>"]
        for m in metrics:
            g = gaps[(gaps["metric"] == m) & (gaps["candidate"] == c["config_id"])].iloc[0]
            cells += [f"<td>{html.escape(format_value(g['sim']))}</td>", f"<td>{html.escape(format_value(g['real']))}</td>",
                      _gap_cell(g)]
        cls = ' class="pareto"' if c["config_id"] in verification.real_front else ""
        lines.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    lines += ["</tbody>", "</table>"]
    return "\n".join(lines)


def _verify_section(verifications: Sequence[Any], figures: Mapping[str, Any]) -> list[str]:
    parts = ["<h2>Simulated vs real</h2>", template(__package__, "templates/verify_note.html").substitute()]
    for n, v in enumerate(verifications):
        labels = v.labels
        taus = [f"{label(r['metric'])}: τ = {tau_text(r)}" for _, r in v.ranks.iterrows()]
        fate = "is" if v.winner_on_real_front else "is not"
        facts = (f"{v.describe_backend()}: {len(v.candidates)} candidates × {len(v.qids)} questions"
                 + ("" if v.complete else " (incomplete: resume with rag-lab verify)")
                 + f". Rank agreement — {'; '.join(taus)}. The simulated winner ({labels[v.winner]}) {fate} on the "
                 f"real Pareto front ({', '.join(labels[c] for c in v.real_front) or 'empty'}).")
        parts += [f"<h3>{html.escape(v.describe_backend())}</h3>", f'<p class="note">{html.escape(facts)}</p>',
                  *(f'<p class="note">{html.escape(note)}</p>' for note in v.notes),
                  '<div class="table-wrap">', verify_table_html(v), "</div>"]
        parts += [_html(figures[f"sim_vs_real_{n}_{metric}"], f"sim-vs-real-{n}-{metric}")
                  for metric in _verified_metrics(v)]
    return parts


def _verified_metrics(verification: Any) -> list[str]:
    """The headline metrics a verification compared (each gets a simulated-vs-real figure)."""
    return [m for m in dict.fromkeys([DEFAULT_QUALITY, DEFAULT_COST]) if m in set(verification.gaps["metric"])]


def _search_section(sweep: SweepResult) -> list[str]:
    """A search's facts (sampler, trials, question runs against a full grid of the same candidates) and, for a
    race, every dropped candidate: after how many questions, by which rival, and the test that dropped it."""
    search = sweep.search or {}
    table = sweep.table
    labels = sweep.labels()
    runs = sweep.question_runs()
    full = sweep.full_grid_runs()
    facts = [f"sampler {search.get('sampler')}",
             f"{len(sweep.trials())} trials" if search.get("sampler") != "grid" else f"{len(table)} grid points",
             f"{len(table)} distinct candidates",
             f"{runs} question runs, {runs / full:.1%} of the {full} that running every candidate on all "
             f"{len(sweep.qids)} questions takes" if full else f"{runs} question runs"]
    if search.get("constraints"):
        facts.append("constraints: " + "; ".join(search["constraints"])
                     + f" ({int((~table['is_feasible']).sum())} candidates break one)")
    race = search.get("race")
    parts = ["<h2>Search and race</h2>", f'<p class="note">{html.escape(" · ".join(facts))}.</p>']
    if race:
        dropped = table[table["status"] == "dropped"].sort_values(["dropped_after", "candidate_id"])
        parts.append(
            '<p class="note">Racing: every candidate answered the questions in one seeded random order, '
            f"{html.escape(race_rule(RaceSpec(**race), len(sweep.qids)))}. {len(dropped)} of {len(table)} candidates "
            "were dropped; only candidates that ran every question can be on the front.</p>")
        if len(dropped):
            lines = ['<table class="dropped">', _thead(["candidate", "changes", "dropped after", "dropped by", "why"], 5),
                     "<tbody>"]
            for _, row in dropped.iterrows():
                rival = row["dropped_by"]
                rival_text = f"{rival} ({labels.get(rival, '')})" if rival else "a constraint"
                lines.append("<tr>" + "".join(f'<td class="text">{html.escape(str(v))}</td>' for v in (
                    row["candidate_id"], labels.get(row["candidate_id"], ""), f"after {int(row['dropped_after'])} questions",
                    rival_text, row["drop_reason"])) + "</tr>")
            lines += ["</tbody>", "</table>"]
            parts += ['<div class="table-wrap">', "\n".join(lines), "</div>"]
    return parts


def _scatter(table: pd.DataFrame, cost_col: str, quality_col: str) -> Any:
    text_col = LABEL_COL if LABEL_COL in table.columns else None
    info = cost_quality.cost_quality_info(table, cost_col, quality_col, text_col=text_col)
    return cost_quality.cost_quality_figure(info, label_px=_LABEL_PX)


def _robustness_table() -> Mapping[str, Any]:
    """The shipped robustness table (``data/robustness.json``), or nothing where it is not shipped."""
    path = DATA_DIR / "robustness.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _labelled(summary: SweepSummary, from_sweep: bool) -> pd.DataFrame:
    """The summary's results table; from a sweep, with each candidate's label (what it changes) second."""
    table = summary.table.copy()
    if from_sweep:
        table.insert(1, LABEL_COL, table["candidate_id"].map(summary.labels))
    return table


@dataclass(frozen=True)
class _SweepParts:
    """What a report of a sweep (not of a bare table) shows beside its summary, read once for its pages and figures:
    the robustness table, where its rows related to the declared claims hold (None: no related row), the guard counts
    and the verifications."""

    robustness: Mapping[str, Any]
    where: where_grid.WhereGridInfo | None
    guards: guard_tradeoff.GuardTradeoffInfo | None
    verifications: list[Any]

    @classmethod
    def of(cls, sweep: SweepResult, summary: SweepSummary, reference: Any) -> _SweepParts:
        robustness = _robustness_table()
        related = (related_rows(summary.findings, sweep.spec.get("findings") or [], robustness)
                   if summary.findings and robustness else [])
        where = where_grid.where_grid_info(robustness, related) if related else None
        guards = guard_tradeoff.guard_tradeoff_info(sweep, reference) if has_guard_metrics(sweep) else None
        return cls(robustness, where, guards, load_verifications(sweep.run_dir, sweep))


def _scatters(table: pd.DataFrame, cost_col: str) -> list[tuple[str, str]]:
    """The cost-vs-quality scatters' names and cost columns: ``cost_col``'s, then the first of
    :data:`SECOND_COST_COLS` in the table."""
    second = next((c for c in SECOND_COST_COLS if c in table.columns and c != cost_col), None)
    return [("cost_quality", cost_col), *([(f"{short_name(second)}_quality", second)] if second else [])]


def _figures(table: pd.DataFrame, summary: SweepSummary, parts: _SweepParts | None) -> dict[str, Any]:
    """Every figure of the report, by name (:func:`report_figures`); ``table``: the summary's, labelled."""
    cost_col, quality_col = summary.cost_col, summary.quality_col
    figures = {name: _scatter(table, cost, quality_col) for name, cost in _scatters(table, cost_col)}
    if parts is None:
        return figures
    for metric, frame in summary.frames.items():
        figures[f"forest_{metric}"] = forest.forest_figure(forest.forest_info(frame, metric))
    if parts.where is not None:
        figures["where_grid"] = where_grid.where_grid_figure(parts.where)
    if parts.guards is not None:
        figures["guard_tradeoff"] = guard_tradeoff.guard_tradeoff_figure(parts.guards, label_px=_LABEL_PX)
    for n, v in enumerate(parts.verifications):
        for metric in _verified_metrics(v):
            figures[f"sim_vs_real_{n}_{metric}"] = sim_vs_real.sim_vs_real_figure(sim_vs_real.sim_vs_real_info(v, metric))
    return figures


def _prepared(source: Any, cost_col: str, quality_col: str | None, name: str | None,
              reference: Any) -> tuple[SweepResult | None, str, SweepSummary, pd.DataFrame, _SweepParts | None]:
    """What a report of ``source`` shows, read once (:func:`write_report`, :func:`report_figures`): its sweep (None for
    a bare table), its name, its summary, the summary's table labelled, and the parts of a sweep; a clear error for a
    table without rows or without ``cost_col`` or ``quality_col``."""
    table, sweep, default_name = _load(source)
    quality_col = quality_col or headline_quality(sweep if sweep is not None else table)
    name = name or default_name
    if table.empty:
        raise ConfigError(f"{name}: the results table has no rows")
    for col in (cost_col, quality_col):
        if col not in table.columns:
            raise ConfigError(f"{name}: no column {col!r} (columns: {list(table.columns)})")
    summary = summarize(sweep if sweep is not None else table, quality_col, cost_col, reference)
    parts = _SweepParts.of(sweep, summary, reference) if sweep is not None else None
    return sweep, name, summary, _labelled(summary, sweep is not None), parts


def report_figures(source: pd.DataFrame | SweepResult | str | os.PathLike[str], cost_col: str = DEFAULT_COST,
                   quality_col: str | None = None, reference: Any = None) -> dict[str, Any]:
    """Every figure of :func:`write_report`'s report, by a file-safe name: ``cost_quality`` (and
    ``<second cost>_quality``), ``forest_<metric>`` per paired-difference metric, ``where_grid`` (where claims like the
    sweep's declared ones hold, when the robustness table has such rows), ``guard_tradeoff`` (when the rows hold
    ``quality_right``: :func:`has_guard_metrics`) and ``sim_vs_real_<n>_<metric>``
    per verification (what ``rag-lab report --export`` writes with :func:`rag_lab.figures.export.export_figures`)."""
    _, _, summary, table, parts = _prepared(source, cost_col, quality_col, None, reference)
    return _figures(table, summary, parts)


def write_report(source: pd.DataFrame | SweepResult | str | os.PathLike[str], out_html: str | os.PathLike[str],
                 cost_col: str = DEFAULT_COST, quality_col: str | None = None, name: str | None = None,
                 reference: Any = None) -> Path:
    """Write the HTML report of ``source`` — a results table, a :class:`SweepResult`, or a run directory — to
    ``out_html`` (replaced atomically) and return its path. ``name`` titles it (default: the sweep's name). The
    Pareto flags are recomputed for ``cost_col`` × ``quality_col`` (default: the sweep's
    :attr:`~SweepResult.headline_quality`). A sweep (not a bare table) adds the paired differences against
    ``reference`` (default: the base config), point labels and, with ``quality_right`` rows, what each guardrail
    buys (:func:`~rag_lab.figures.guard_tradeoff.guard_tradeoff_info`); what the report holds: docs/design.md §6."""
    sweep, name, summary, table, parts = _prepared(source, cost_col, quality_col, name, reference)
    quality_col = summary.quality_col
    figures = _figures(table, summary, parts)
    glance = ""
    if parts is not None and len(summary.frames) == 2 and len(table) > 1:
        glance = glance_html(glance_table(summary, parts.robustness), summary.reference_title, quality_col, cost_col)
    # the plotted column is the one kept
    same = identical_columns(table, sweep.all_rows() if sweep is not None else None, prefer=[quality_col])
    plots = [figures[name].to_html(full_html=False, include_plotlyjs=i == 0, default_height=_PLOT_HEIGHT,
                                   config=_PLOT_CONFIG) for i, (name, _) in enumerate(_scatters(table, cost_col))]

    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    progress = summary.progress
    provisional = progress is not None and not progress.complete
    facts = [f"{len(table)} candidates",
             f"{len(summary.front)} on the Pareto front" + (" (provisional)" if provisional else "")]
    if progress is not None:
        facts.append(progress.text())
    if "n_questions" in table.columns:
        n_q = sorted({int(n) for n in pd.to_numeric(table["n_questions"]).dropna()})
        facts.append(f"{', '.join(map(str, n_q))} questions per candidate")
    if summary.spent_ratio is not None:
        facts.append(f"LLM calls spent / incurred: {summary.spent_ratio:.1%}")
    parts = [header_html(name, when, facts, summary.provenance, progress, list(summary.warnings)),
             *(["<h2>At a glance: each candidate against the reference</h2>", glance] if glance else []),
             _how_to_read(cost_col, quality_col),
             "<h2>Cost vs quality" + (" (provisional)" if provisional else "") + "</h2>", *plots,
             *(_search_section(sweep) if sweep is not None and sweep.search else []),
             *([_findings_section(summary)] if summary.findings else []),
             *(_where_section(parts.where, figures["where_grid"]) if parts and parts.where is not None else []),
             *(_delta_section(summary, figures) if summary.frames else []),
             *(_guard_section(parts.guards, figures["guard_tradeoff"]) if parts and parts.guards is not None else []),
             *(_verify_section(parts.verifications, figures) if parts and parts.verifications else []),
             "<h2>Results</h2>",
             *([_collapsed_note(same)] if same else []), '<div class="table-wrap">',
             results_table_html(collapsed(table, same), cost_col, quality_col), "</div>"]
    body = render("page.html.j2", title=TITLE.format(name=name), style=Markup(_STYLE), parts=map(Markup, parts))
    out = Path(out_html)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(out)
    return out
