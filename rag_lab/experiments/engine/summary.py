"""One summary of a sweep (:class:`SweepSummary`, built once by :func:`summarize`): what every page that shows a
sweep's outcome renders — ``rag-lab sweep`` as text, the HTML report as tables. It holds the declared findings, the
exploratory Δ-vs-reference table (Holm) as plain rows, the Pareto front, progress, provenance and the reply
warnings (:func:`reply_warnings`); the pages compute nothing of it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import pandas as pd

from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY
from rag_lab.evaluation.families import is_quality
from rag_lab.experiments.engine.comparisons import comparisons, declared_finding, is_measured
from rag_lab.experiments.engine.findings import Finding, finding_line, provisional_findings
from rag_lab.experiments.engine.provenance import Provenance
from rag_lab.experiments.engine.results import RunProgress, SweepResult
from rag_lab.stats.holds import on_claimed_side
from rag_lab.stats.paired import interval_text
from rag_lab.stats.power import Detectable
from rag_lab.stats.significance import p_clause, p_text
from rag_lab.stats.summary import add_pareto, is_ci_bound


@dataclass(frozen=True)
class DeltaCell:
    """One candidate's paired difference on one metric, as every page writes it: ``interval`` (``Δ [lo, hi]``),
    ``p`` (its p and Holm p, or a declared claim's verdict), ``detectable`` (what a difference not shown could have
    shown), ``measured`` (shown), ``declared`` (the claim the cell stands for, or None) and ``up`` (Δ above 0)."""

    metric: str
    interval: str
    p: str
    detectable: str
    measured: bool
    declared: Finding | None
    up: bool

    @property
    def text(self) -> str:
        """``+0.100 [+0.000, +0.200] p=0.125 (Holm 0.750)``: the cell of both the text and the HTML table."""
        return f"{self.interval} {self.p}"

    @property
    def mark(self) -> str:
        """The text table's mark: `` *`` shown, `` (detect ≥ x)`` not shown, nothing in a declared claim's cell."""
        if self.declared is not None:
            return ""
        return " *" if self.measured else f" ({self.detectable})"


@dataclass(frozen=True)
class DeltaRow:
    """One candidate against the reference: its ids, its label (what it changes), the dotted keys it changes
    against the base config, its cells (one per metric), the questions used and the share that differ."""

    candidate_id: str
    config_id: str
    label: str
    changed: frozenset[str]
    cells: tuple[DeltaCell, ...]
    n: int
    share_differ: float


@dataclass(frozen=True)
class SweepSummary:
    """What a sweep found, once. ``table`` is the results table with the Pareto front of ``cost_col`` ×
    ``quality_col``; ``frames`` the exploratory comparisons (for the forest plots) and ``deltas`` their rows;
    ``findings`` the declared claims (``provisional`` on an unfinished sweep), ``finding_lines`` one line each
    (:func:`~rag_lab.experiments.engine.findings.finding_line`). A bare table has no sweep parts."""

    quality_col: str
    cost_col: str
    table: pd.DataFrame
    findings: tuple[Finding, ...] = ()
    provisional: bool = False
    finding_lines: tuple[str, ...] = ()
    frames: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    deltas: tuple[DeltaRow, ...] = ()
    reference: str = ""
    reference_title: str = "the reference"
    labels: Mapping[str, str] = field(default_factory=dict)
    progress: RunProgress | None = None
    provenance: Provenance | None = None
    warnings: tuple[str, ...] = ()
    spent_ratio: float | None = None

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics of the Δ table, in its column order."""
        return tuple(self.frames)

    @property
    def front(self) -> tuple[str, ...]:
        """The candidates on the Pareto front."""
        return tuple(self.table.loc[self.table["is_pareto"].astype(bool), "candidate_id"])


def decimals(frames: Mapping[str, pd.DataFrame], metric: str) -> int:
    """Decimals that show a metric's differences: 3 below 10, 1 below 1000, else 0."""
    frame = frames[metric]
    top = pd.concat([frame["delta"].abs(), frame["lo"].abs(), frame["hi"].abs()]).max()
    if pd.isna(top) or top < 10:
        return 3
    return 1 if top < 1000 else 0


def p_cell(row: pd.Series) -> str:
    """``p=0.125 (Holm 0.750)``; a declared finding's row: its verdict (:attr:`Finding.verdict`)."""
    claim = declared_finding(row)
    if claim is not None:
        return claim.verdict
    return f"{p_clause(float(row['p']))} (Holm {p_text(float(row['p_holm']))})"


def reference_sentence(frames: Mapping[str, pd.DataFrame]) -> str:
    first = next(iter(frames.values()))
    ref = first.attrs.get("reference", {})
    n = sorted({int(v) for f in frames.values() for v in f["n"]})
    seeds = sorted({int(v) for f in frames.values() for v in f["n_seeds"]})
    count = f"{n[0]}" if n[0] == n[-1] else f"{n[0]}–{n[-1]}"
    return (f"Δ = candidate − {ref.get('description', 'the reference')}, on the same {count} questions "
            f"(each metric where it is defined), {'/'.join(map(str, seeds))} seed(s); paired bootstrap 95% interval, "
            "two-sided paired test (exact sign/McNemar for 0/1 metrics, sign-flip permutation otherwise) with its p "
            "and the p after Holm's correction over every Δ of the table")


def difference_cell(row: pd.Series, metric: str, places: int | None = None) -> DeltaCell:
    """One paired difference (a row with ``delta``, ``lo``, ``hi`` and, from a Δ table, ``p``, ``p_holm``,
    ``declared``, ``detectable``) as a cell: also the verification's real − simulated gaps."""
    tested = "p_holm" in row.index or declared_finding(row) is not None
    found = row.get("detectable")   # a row not shown: what it could have detected, in a few characters
    return DeltaCell(metric=metric, interval=interval_text(row, places), p=p_cell(row) if tested else "",
                     detectable=found.short if isinstance(found, Detectable) else "", measured=is_measured(row),
                     declared=declared_finding(row), up=on_claimed_side("above", row["lo"], row["hi"]))


def delta_rows(frames: Mapping[str, pd.DataFrame], changes: Mapping[str, Mapping[str, Any]]) -> tuple[DeltaRow, ...]:
    """The rows of the Δ table: every candidate of ``frames`` but the reference; ``changes``: each config id's
    settings that differ from the base config."""
    if not frames:
        return ()
    first = next(iter(frames.values()))
    rows = []
    for pos in range(len(first)):
        row = first.iloc[pos]
        if bool(row["is_reference"]):
            continue
        rows.append(DeltaRow(
            candidate_id=str(row["candidate_id"]), config_id=str(row["config_id"]), label=str(row["label"]),
            changed=frozenset(changes[str(row["config_id"])]),
            cells=tuple(difference_cell(f.iloc[pos], m, decimals(frames, m)) for m, f in frames.items()),
            n=int(row["n"]), share_differ=float(row["share_differ"])))
    return tuple(rows)


def spent_ratio(table: pd.DataFrame) -> float | None:
    """LLM calls spent (cache misses) over calls incurred across the whole sweep, or None without both columns."""
    if "cost_llm_calls" not in table.columns or "spent_llm_calls" not in table.columns:
        return None
    weight = pd.to_numeric(table["n_questions"]) if "n_questions" in table.columns else 1
    incurred = float((pd.to_numeric(table["cost_llm_calls"]) * weight).sum())
    spent = float((pd.to_numeric(table["spent_llm_calls"]) * weight).sum())
    return spent / incurred if incurred else None


def headline_quality(source: SweepResult | pd.DataFrame) -> str:
    """The quality column a summary of ``source`` leads with unless told: a sweep's
    :attr:`~rag_lab.experiments.engine.results.SweepResult.headline_quality`, a bare table's strict containment."""
    return DEFAULT_QUALITY if isinstance(source, pd.DataFrame) else source.headline_quality


def summarize(source: SweepResult | pd.DataFrame, quality_col: str | None = None, cost_col: str = DEFAULT_COST,
              reference: Any = None) -> SweepSummary:
    """The summary of a sweep (or of a bare results table): its Pareto front of ``cost_col`` × ``quality_col``
    (default: the sweep's headline quality), its declared findings — provisional, on the question runs so far, for
    an unfinished sweep — and every candidate against ``reference`` (default: the base config) on both columns."""
    quality_col = quality_col or headline_quality(source)
    if isinstance(source, pd.DataFrame):
        return SweepSummary(quality_col, cost_col, add_pareto(source, cost_col, quality_col),
                            spent_ratio=spent_ratio(source))
    sweep = source   # what the sweep holds is read first, then tested and written
    ran, progress, complete, labels, provenance = (sweep.question_runs(), sweep.progress(), sweep.complete,
                                                   sweep.labels(), sweep.provenance)
    findings = tuple(provisional_findings(sweep))
    frames = comparisons(sweep, (quality_col, cost_col), reference, declared=findings) if ran else {}
    warnings = tuple(reply_warnings(sweep))
    same_front = (cost_col, quality_col) == tuple(sweep.pareto_columns)
    table = sweep.table if same_front else add_pareto(sweep.table, cost_col, quality_col)
    title = "the reference"
    if frames:
        title = str(next(iter(frames.values())).attrs.get("reference", {}).get("title", "the reference"))
    return SweepSummary(
        quality_col, cost_col, table, findings=findings, provisional=not complete,
        finding_lines=tuple(finding_line(f, not complete) for f in findings), frames=frames,
        deltas=delta_rows(frames, sweep.changes()), reference=reference_sentence(frames) if frames else "",
        reference_title=title, labels=labels, progress=progress, provenance=provenance, warnings=warnings,
        spent_ratio=spent_ratio(table))


def identical_columns(table: pd.DataFrame, rows: pd.DataFrame | None = None,
                      columns: Sequence[str] | None = None, prefer: Sequence[str] = ()) -> dict[str, str]:
    """Each ``quality_*`` column of ``table`` (or of ``columns``) equal to an earlier one → that earlier column: on
    every per-question row of ``rows`` when given (:meth:`~rag_lab.experiments.engine.results.SweepResult.all_rows`;
    missing values equal only missing ones), else on every value of ``table``. Columns in ``prefer`` (the plotted one)
    come first, so they are the ones kept."""
    source = rows if rows is not None and len(rows) else table
    listed = list(columns if columns is not None else table.columns)
    names = [c for c in [*(p for p in prefer if p in listed), *(c for c in listed if c not in prefer)]
             if is_quality(c) and not is_ci_bound(c, list(table.columns)) and c in source.columns]
    same: dict[str, str] = {}
    for i, col in enumerate(names):
        for earlier in names[:i]:
            if earlier not in same and _equal(source[earlier], source[col]):
                same[col] = earlier
                break
    return same


def _equal(a: pd.Series, b: pd.Series) -> bool:
    a, b = pd.to_numeric(a, errors="coerce"), pd.to_numeric(b, errors="coerce")
    return bool(((a == b) | (a.isna() & b.isna())).all())


# --- replies that failed validation ------------------------------------------------------------------
# Counted from a sweep's stored traces, per role: the structured replies and those that were not valid JSON or did
# not fit the schema (each call's validation ``outcome``, :mod:`rag_lab.llm.structured`; a ``repaired`` reply held a
# valid object). Above :data:`WARN_RATE` of a role's replies from a real model, both pages warn: a server that sends
# garbage inside valid HTTP replies otherwise gives a normal-looking table of refusals. The simulator's failures
# are its profile's knobs, set on purpose: no warning.

#: The share of a role's replies failing validation above which a sweep warns.
WARN_RATE = 0.2
#: Validation outcomes of a reply that failed (nothing valid was found in it).
FAILED = ("fallback", "invalid")
#: Structured outcomes (a ``text`` reply has no schema to fail).
STRUCTURED = ("valid", "repaired", *FAILED)


class ReplyFailures(NamedTuple):
    """One role's structured ``replies`` over a sweep, those that ``failed`` validation, and of those the ones
    that were ``not_json`` (the rest broke the schema)."""

    role: str
    replies: int
    failed: int
    not_json: int

    @property
    def rate(self) -> float:
        return self.failed / self.replies if self.replies else 0.0

    def warning(self) -> str:
        """``38 of 40 controller replies were not valid JSON: check the model and the server``."""
        if self.not_json == self.failed:
            what = "were not valid JSON"
        elif self.not_json == 0:
            what = "did not fit the reply's schema"
        else:
            what = f"failed validation ({self.not_json} not valid JSON, {self.failed - self.not_json} not the schema's shape)"
        return f"{self.failed:,} of {self.replies:,} {self.role} replies {what}: check the model and the server"


def reply_failures(result: Any) -> list[ReplyFailures]:
    """Per role (in first-seen order), the structured replies of every stored question run of ``result`` (a
    :class:`~rag_lab.experiments.engine.results.SweepResult`) and how many failed validation."""
    counts: dict[str, list[int]] = {}
    for candidate in result.table["candidate_id"]:
        for trace in result.traces(candidate).values():
            for call in trace.llm_calls():
                if call.outcome not in STRUCTURED:
                    continue
                entry = counts.setdefault(call.role, [0, 0, 0])
                entry[0] += 1
                if call.outcome in FAILED:
                    entry[1] += 1
                    entry[2] += int(call.reason.startswith("invalid JSON"))
    return [ReplyFailures(role, n, failed, not_json) for role, (n, failed, not_json) in counts.items()]


def reply_warnings(result: Any, rate: float = WARN_RATE) -> list[str]:
    """One :meth:`ReplyFailures.warning` per role whose replies from a real model failed validation above ``rate``
    (none for the simulator)."""
    if result.provenance.backend.kind == "sim":
        return []
    return [f.warning() for f in reply_failures(result) if f.rate > rate]
