"""Paired differences of every candidate of a sweep against one reference, with Holm's correction over the
table, and the Δ table as plain text (``rag-lab sweep`` prints it; the HTML report shows the same table,
:mod:`rag_lab.report`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from rag_lab.evaluation.catalog import label, value_range
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.stats.paired import interval_text
from rag_lab.stats.power import Detectable, detectable
from rag_lab.stats.significance import holm, p_clause, p_text

#: The level the table's Holm correction is read at.
ALPHA = 0.05


def comparisons(sweep: SweepResult, metrics: Sequence[str], reference: Any = None,
                n_boot: int = 2000) -> dict[str, pd.DataFrame]:
    """:meth:`SweepResult.compare` for each of ``metrics`` present in the sweep, against one reference, with
    ``p_holm``: each paired test's p after Holm's correction over the whole table (every candidate but the
    reference, on every metric shown — the family of differences the report puts in front of a reader)."""
    present = [m for m in dict.fromkeys(metrics) if m in sweep.table.columns]
    return with_holm({m: sweep.compare(m, reference=reference, n_boot=n_boot) for m in present})


def with_holm(frames: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """``frames`` (``compare`` tables) with a ``p_holm`` column (Holm over all their non-reference rows) and a
    ``detectable`` column: for a row not shown, the :class:`~rag_lab.stats.power.Detectable` of its sample (80% power,
    the two-sided paired test at Holm's strictest level over the table); None for a row that is shown."""
    cells = [(m, i) for m, f in frames.items() for i in range(len(f)) if not bool(f["is_reference"].iloc[i])]
    adjusted = holm(float(frames[m]["p"].iloc[i]) for m, i in cells)
    out = {m: f.copy() for m, f in frames.items()}
    for m, f in out.items():
        f["p_holm"] = float("nan")
        f.attrs = dict(frames[m].attrs)
    for (m, i), p in zip(cells, adjusted, strict=True):
        out[m].iloc[i, out[m].columns.get_loc("p_holm")] = p
    level = ALPHA / max(1, len(cells))   # Holm's strictest step: shown at that effect whatever the others show
    for m, f in out.items():
        f["detectable"] = [
            None if row["is_reference"] or is_measured(row) or "differences" not in row.index else
            detectable(row["differences"], direction="two-sided", alpha=level, value_range=value_range(m))
            for _, row in f.iterrows()]
    return out


def is_measured(row: pd.Series, alpha: float = 0.05) -> bool:
    """A paired difference a reader may call measured: its interval excludes 0 and, where the row has a
    Holm-adjusted p, that p is below ``alpha``."""
    excludes = bool(row["lo"] > 0 or row["hi"] < 0)
    if "p_holm" in row.index:
        return excludes and bool(row["p_holm"] < alpha)
    return excludes


def p_cell(row: pd.Series) -> str:
    """``p=0.125 (Holm 0.750)``."""
    return f"{p_clause(float(row['p']))} (Holm {p_text(float(row['p_holm']))})"


def decimals(frames: Mapping[str, pd.DataFrame], metric: str) -> int:
    """Decimals that show a metric's differences: 3 below 10, 1 below 1000, else 0."""
    frame = frames[metric]
    top = pd.concat([frame["delta"].abs(), frame["lo"].abs(), frame["hi"].abs()]).max()
    if pd.isna(top) or top < 10:
        return 3
    return 1 if top < 1000 else 0


def detectable_short(row: pd.Series) -> str:
    """A not-shown row's detectable effect in a few characters (:attr:`~rag_lab.stats.power.Detectable.short`);
    '' for a row that is shown."""
    found = row.get("detectable")
    return found.short if isinstance(found, Detectable) else ""


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


def delta_table_text(frames: Mapping[str, pd.DataFrame]) -> str:
    """The Δ-vs-reference table as plain text, each Δ with its p and Holm-adjusted p (``*``: the interval
    excludes 0 and the Holm-adjusted p is below 0.05)."""
    metrics = list(frames)
    first = frames[metrics[0]]
    rows = [i for i, r in enumerate(first["is_reference"].to_numpy(dtype=bool)) if not r]
    cells = [[f"{interval_text(frames[m].iloc[i], decimals(frames, m))} {p_cell(frames[m].iloc[i])}"
              + (" *" if is_measured(frames[m].iloc[i]) else f" ({detectable_short(frames[m].iloc[i])})")
              for m in metrics] for i in rows]
    names = [str(first.iloc[i]["label"]) for i in rows]
    heads = [f"Δ {label(m)}" for m in metrics]
    w0 = max([len("changes vs reference"), *map(len, names)])
    widths = [max([len(h), *(len(c[j]) for c in cells)]) for j, h in enumerate(heads)]
    lines = [reference_sentence(frames) + "; * the interval excludes 0 and the Holm-adjusted p < 0.05; otherwise "
             "(detect ≥ x): the smallest |Δ| the sample could have shown with 80% power at Holm's strictest level "
             "(|Δ| ≤ x: no question differs, the exact 95% bound)",
             f"{'changes vs reference':{w0}s}  " + "  ".join(f"{h:>{w}s}" for h, w in zip(heads, widths, strict=True))]
    lines += [f"{n:{w0}s}  " + "  ".join(f"{c:>{w}s}" for c, w in zip(row, widths, strict=True))
              for n, row in zip(names, cells, strict=True)]
    return "\n".join(lines)
