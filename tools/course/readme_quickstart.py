"""README's section on the quickstart sweep, written from the sweep's own findings, not typed.

``sweeps/quickstart.yaml`` states its findings up front (``findings:``); :func:`quickstart_markdown` renders
them, tested in the order stated (one family, fixed-sequence correction), as the short table README shows
between :data:`BEGIN` and :data:`END`. After a change to the simulator, the world or the pipeline:

    rag-lab sweep sweeps/quickstart.yaml --out reports/quickstart
    python -m tools.course.readme_quickstart reports/quickstart            # README's block
    python -m tools.course.readme_quickstart reports/quickstart --figure   # and docs/images/cost_quality.png

``tests/test_readme_quickstart.py`` runs the sweep and fails when README's block differs from what it renders.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import label as metric_label
from rag_lab.experiments.engine.findings import sweep_findings
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.stats.significance import p_text
from tools.course.marked_block import marked_block, replace_marked

__all__ = ["BEGIN", "END", "quickstart_markdown", "readme_block", "replace_block"]

BEGIN = ("<!-- quickstart findings: written from the sweep by `python -m tools.course.readme_quickstart "
         "reports/quickstart`; do not edit by hand -->")
END = "<!-- end of quickstart findings -->"
WHAT = "quickstart block in README"


def quickstart_markdown(result: SweepResult) -> str:
    """The sweep's declared findings as README's short table: one row per finding with its verdict, its paired Δ and
    interval, the questions that moved each way and its p in the fixed sequence; one sentence above says how."""
    findings = sweep_findings(result)
    if not findings:
        raise ConfigError(f"sweep {result.run_dir} states no findings (a `findings:` section) or is not complete")
    intro = (f"The sweep declares {len(findings)} claims up front (`findings:` in `sweeps/quickstart.yaml`), each a "
             f"paired difference against the base config on the same {len(result.qids)} questions, tested one-sided in "
             "that order (a claim counts only when every one before it does):")
    rows = ["| # | claim | verdict | Δ [95% interval] | questions ↑ / ↓ | p (fixed sequence) |", "|---|---|---|---|---|---|"]
    for i, f in enumerate(findings, 1):
        verdict = "✓ holds" if f.holds else "✗ not shown"
        rows.append(f"| {i} | {f.claim} ({metric_label(f.metric)}) | {verdict} | {f.delta:+.3f} [{f.lo:+.3f}, "
                    f"{f.hi:+.3f}] | {f.n_better} / {f.n_worse} of {f.n} | {p_text(f.p_adjusted)} |")
    return "\n\n".join([intro, "\n".join(rows)])


def readme_block(text: str) -> str:
    """README's block: the markers around ``text``."""
    return f"{BEGIN}\n{text}\n{END}"


def replace_block(readme: str, text: str) -> str:
    """``readme`` with the text between its markers replaced by ``text``; an error when a marker is missing."""
    return replace_marked(readme, BEGIN, END, readme_block(text), WHAT)


def committed_text(readme: str) -> str:
    """The text README holds between its markers."""
    return marked_block(readme, BEGIN, END, WHAT)[len(BEGIN):-len(END)].strip("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.course.readme_quickstart", description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", help="the quickstart sweep's run folder (rag-lab sweep sweeps/quickstart.yaml --out DIR)")
    parser.add_argument("--readme", default="README.md", help="the README to rewrite (default: README.md)")
    parser.add_argument("--figure", action="store_true",
                        help="also write the report's cost-quality figure to docs/images/cost_quality.png (needs Chromium)")
    args = parser.parse_args(argv)
    result = SweepResult.load(args.run_dir)
    readme = Path(args.readme)
    tmp = readme.with_name(f".{readme.name}.tmp")
    tmp.write_text(replace_block(readme.read_text(), quickstart_markdown(result)))
    os.replace(tmp, readme)
    print(f"wrote the quickstart block of {readme}")
    if args.figure:
        from rag_lab.figures.export import export_figures
        from rag_lab.report.page import report_figures

        out = readme.parent / "docs" / "images"
        written = export_figures({"cost_quality": report_figures(result)["cost_quality"]}, out, "png")
        print(f"wrote {written[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
