"""A sweep's summary (:class:`~rag_lab.experiments.engine.summary.SweepSummary`) as the text ``rag-lab sweep``
prints under its table: the provenance, the declared claims with their verdicts, the exploratory Δ table and the
reply warnings. Formatting only: every number and verdict comes from the summary."""

from __future__ import annotations

from rag_lab.evaluation.catalog import label
from rag_lab.experiments.engine.comparisons import DECLARED_SENTENCE, EXPLORATORY_SENTENCE
from rag_lab.experiments.engine.summary import SweepSummary

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
    if not summary.findings:
        return ""
    return "\n\n" + DECLARED_SENTENCE + "\n" + "\n".join(f"  {line}" for line in summary.finding_lines())


def delta_table_text(summary: SweepSummary) -> str:
    """The Δ-vs-reference table: one line per candidate, each Δ with its p and Holm p and its mark."""
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
