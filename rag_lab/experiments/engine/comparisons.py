"""Paired differences of every candidate of a sweep against one reference — the *exploratory* table: two-sided,
Holm's correction over its cells — and which cell is shown; the sweep's summary
(:mod:`~rag_lab.experiments.engine.summary`) writes them as the rows ``rag-lab sweep`` and the report both show. A
cell that is one of the sweep's *declared* claims (its ``findings:``) carries that claim's
:class:`~rag_lab.experiments.engine.findings.Finding` in the ``declared`` column, shows its verdict instead of a
second test, and stays out of the Holm family."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from rag_lab.evaluation.catalog import value_range
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.stats.holds import holds
from rag_lab.stats.power import detectable
from rag_lab.stats.significance import holm

#: The level the table's Holm correction is read at.
ALPHA = 0.05


def comparisons(sweep: SweepResult, metrics: Sequence[str], reference: Any = None,
                n_boot: int = 2000, declared: Sequence[Any] = ()) -> dict[str, pd.DataFrame]:
    """:meth:`SweepResult.compare` for each of ``metrics`` present in the sweep, against one reference, with
    ``p_holm``: each paired test's p after Holm's correction over the whole table (every candidate but the
    reference, on every metric shown — the family of differences the report puts in front of a reader), less
    the cells that are one of the ``declared`` findings (:func:`with_declared`)."""
    present = [m for m in dict.fromkeys(metrics) if m in sweep.table.columns]
    return with_holm(with_declared({m: sweep.compare(m, reference=reference, n_boot=n_boot) for m in present},
                                   declared))


def with_declared(frames: Mapping[str, pd.DataFrame], findings: Sequence[Any]) -> dict[str, pd.DataFrame]:
    """``frames`` with a ``declared`` column: the finding (a :class:`~rag_lab.experiments.engine.findings.Finding`)
    that claims the cell's contrast — the same metric, the row's config as candidate and the table's reference as
    reference — else None. That cell shows the finding's verdict, tested in its own family, and no other."""
    out = {}
    for metric, frame in frames.items():
        reference = frame.attrs.get("reference", {}).get("config_id")
        claims = {f.candidate_config: f for f in findings if f.metric == metric and f.reference_config == reference}
        marked = frame.copy()
        marked.attrs = dict(frame.attrs)
        marked["declared"] = [None if row["is_reference"] else claims.get(str(row["config_id"]))
                              for _, row in frame.iterrows()]
        out[metric] = marked
    return out


def declared_finding(row: pd.Series) -> Any:
    """The declared finding a Δ-table row stands for (:func:`with_declared`), or None."""
    found = row.get("declared")
    return found if hasattr(found, "verdict") else None


def with_holm(frames: Mapping[str, pd.DataFrame], alpha: float = ALPHA) -> dict[str, pd.DataFrame]:
    """``frames`` (``compare`` tables) with a ``p_holm`` column (Holm over all their non-reference rows that are not
    a declared finding's, :func:`with_declared`) and a ``detectable`` column: for a row not shown at ``alpha``
    (:func:`is_measured`), the :class:`~rag_lab.stats.power.Detectable` of its sample (80% power, the two-sided
    paired test at Holm's strictest level over the table); None for a row that is shown or declared (its finding
    states its own)."""
    cells = [(m, i) for m, f in frames.items() for i in range(len(f))
             if not bool(f["is_reference"].iloc[i]) and declared_finding(f.iloc[i]) is None]
    adjusted = holm(float(frames[m]["p"].iloc[i]) for m, i in cells)
    out = {m: f.copy() for m, f in frames.items()}
    for m, f in out.items():
        f["p_holm"] = float("nan")
        f.attrs = dict(frames[m].attrs)
    for (m, i), p in zip(cells, adjusted, strict=True):
        out[m].iloc[i, out[m].columns.get_loc("p_holm")] = p
    level = alpha / max(1, len(cells))   # Holm's strictest step: shown at that effect whatever the others show
    for m, f in out.items():
        f["detectable"] = [
            None if row["is_reference"] or is_measured(row, alpha) or "differences" not in row.index
            or declared_finding(row) is not None else
            detectable(row["differences"], direction="two-sided", alpha=level, value_range=value_range(m))
            for _, row in f.iterrows()]
    return out


def is_measured(row: pd.Series, alpha: float = ALPHA) -> bool:
    """A paired difference a reader may call measured: its interval excludes 0 and, where the row has a
    Holm-adjusted p, that p is below ``alpha``; a declared finding's row: the finding holds."""
    claim = declared_finding(row)
    if claim is not None:
        return bool(claim.holds)
    p = float(row["p_holm"]) if "p_holm" in row.index else None
    return holds("two-sided", p, float(row["lo"]), float(row["hi"]), alpha)


#: The sentences that tell the two kinds of test apart, on every page that shows both.
DECLARED_SENTENCE = ("Declared claims (confirmatory): the sweep file's findings, stated before it ran, each tested "
                     "one-sided in its claimed direction (TOST for no change) in one family, fixed sequence at "
                     "α = 0.05 — these verdicts answer the sweep's questions.")
EXPLORATORY_SENTENCE = ("Exploratory: every candidate against the reference on the headline metrics, two-sided, Holm "
                        "over the table's cells; a cell that is a declared claim shows that claim's verdict (✓/✗, its "
                        "own family) instead, and is left out of the Holm family.")
