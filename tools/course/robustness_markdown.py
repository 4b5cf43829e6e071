"""The robustness table written out (``data/robustness.json`` and ``data/robustness.md``): its markdown, one row
per finding and one column per dataset × seed, then the real-model columns and the studies' declared contrasts; and
the where-it-holds grid (:mod:`rag_lab.figures.where_grid`) as text for the terminal, that markdown and the lesson
map (:func:`where_grid_text`, :func:`where_grid_markdown`, :func:`legend_line`)."""

from __future__ import annotations

import json
from pathlib import Path

from lessons.robustness import (
    CELL_DATASETS,
    NO_CHANGE_LIMIT,
    RobustnessTable,
    adjusted_text,
    cell_verdict,
    detectable_text,
    measured_as_text,
    provisional_text,
    settings_text,
)
from rag_lab.figures.where_grid import STATUSES, WhereGridInfo, where_grid_info, where_line
from rag_lab.paths import template
from rag_lab.stats.paired import interval_text
from rag_lab.stats.significance import p_text

__all__ = ["legend_line", "markdown", "recorded_markdown", "studies_markdown", "where_grid_markdown", "where_grid_text",
           "write_table"]


def write_table(table: RobustnessTable, json_path: Path, markdown_path: Path | None) -> list[Path]:
    """Write ``table`` as JSON to ``json_path`` and, unless ``markdown_path`` is None, as :func:`markdown` there."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(table.to_dict(), indent=1, sort_keys=False) + "\n", encoding="utf-8")
    written = [json_path]
    if markdown_path is not None:
        markdown_path.parent.mkdir(parents=True, exist_ok=True)
        markdown_path.write_text(markdown(table), encoding="utf-8")
        written.append(markdown_path)
    return written


def recorded_markdown(table: RobustnessTable) -> list[str]:
    """The real-model columns (:mod:`tools.course.robustness_recorded`) as a second table, if any."""
    if not table.recorded:
        return []
    lines = ["", "## A real model (recorded)", "", template(__package__, "templates/robustness_recorded.md").substitute(),
             "", "| finding | claim | " + " | ".join(table.recorded) + " |",
             "|" + "---|" * (2 + len(table.recorded))]
    for row in table.findings:
        cells = [f"{c['status']} ({c['why']})" if c["status"] != "tested" else
                 "no question to test (n=0)" if not c["n"] else
                 f"{cell_verdict(row, c)[0]} {interval_text(c)} p={p_text(c['p'])} ({adjusted_text(c)}, n={c['n']})"
                 f"{detectable_text(c, table_cell=True)}{measured_as_text(c)}" for c in row.get("recorded", [])]
        lines.append(f"| {row['key']} ({row['notebook']}, {row['kind']}) | {row['claim']} | " + " | ".join(cells) + " |")
    return lines


def studies_markdown(table: RobustnessTable) -> list[str]:
    """The studies' declared contrasts (:mod:`tools.course.robustness_study`) as a third table, if any."""
    if not table.studies:
        return []
    lines = ["", "## The recorded studies' declared contrasts", "",
             template(__package__, "templates/robustness_studies.md").substitute(), "",
             "| study row | claim | column | part, claim | n | Δ [95% interval] | p | p within its family | p, Holm "
             "over the study | verdict | could have detected |", "|" + "---|" * 11]
    for row in table.studies:
        for c in row["recorded"]:
            if c["status"] != "tested":
                lines.append(f"| {row['key']} | {c['claim']} | {c['dataset']} | {c['part']} #{c['index']} | "
                             f"{c['status']} ({c['why']}) |" + " |" * 6)
                continue
            within = f" within ±{row['margin']:g}" if row["direction"] == "none" else ""
            verdict = f"{cell_verdict(row, c)[0]} {'holds' if c['holds'] else 'not shown'}{within}{provisional_text(c)}"
            found = (c.get("detectable") or {}).get("text", "")
            cells = [row["key"], c["claim"], c["dataset"], f"{c['part']} #{c['index']}",
                     f"{c['n']} of {c['questions']} ({c['pilot_left_out']} in the pilot)", interval_text(c), p_text(c["p"]),
                     p_text(c["p_family"]), p_text(c["p_study"]), verdict, found]
            lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    return lines


def markdown(table: RobustnessTable) -> str:
    """The table as the report's markdown: one row per finding, one column per dataset × seed."""
    cols = [(d, s) for d in table.datasets for s in table.seeds]
    head = "| finding | claim | metric | " + " | ".join(f"{d} s{s}" for d, s in cols) + " | holds | sign agrees |"
    lines = [
        "# Robustness of the headline findings",
        "",
        template(__package__, "templates/robustness_intro.md").substitute(
            command=table.command, sim_version=table.sim_version, seconds=f"{table.seconds:.0f}",
            real_limit=table.real_limit, seeds=", ".join(map(str, table.seeds)), no_change_limit=NO_CHANGE_LIMIT,
            alpha=f"{table.alpha:g}"),
        "",
        "## At a glance",
        "",
        where_grid_markdown(where_grid_info(table)),
        "",
        "## Every cell",
        "",
        head,
        "|" + "---|" * (5 + len(cols)),
    ]
    for row in table.findings:
        by = {(c["dataset"], c["seed"]): c for c in row["cells"]}
        claim = row["claim"] + (f" (±{row['margin']:g})" if row["margin"] is not None and "±" not in row["claim"] else "")
        cells = []
        for key in cols:
            c = by.get(key)
            if c is None:
                cells.append("–")
                continue
            mark = cell_verdict(row, c)[0]
            cells.append(f"{mark} {interval_text(c)} p={p_text(c['p'])} (Holm {p_text(c['p_holm'])}, n={c['n']})"
                         f"{detectable_text(c, table_cell=True)}")
        s = row["summary"]
        family = row.get("family", "–")
        lines.append(f"| {row['key']} ({row['notebook']}, {row['kind']}; family: {family}) | {claim} | {row['metric']} | "
                     + " | ".join(cells) + f" | {s['hold']}/{s['cells']} | {s['agree']}/{s['cells']} |")
    lines += recorded_markdown(table)
    lines += studies_markdown(table)
    lines += ["", "Candidates and references (dotted settings over each finding's base):", ""]
    for row in table.findings:
        knobs = f"; simulator knobs {settings_text(row['knobs'])}" if row["knobs"] else ""
        base = f"; base {settings_text(row['base'])}" if row["base"] else ""
        own = row.get("datasets", list(CELL_DATASETS))
        datasets = f"; datasets {', '.join(own)}" if list(own) != list(CELL_DATASETS) else ""
        world = f"; world questions: {', '.join(row['world_types'])}" if row.get("world_types") else ""
        lines.append(f"- `{row['key']}`: {settings_text(row['candidate'])} vs {settings_text(row['reference'])}{base}"
                     f"{knobs}; profile {row['profile']}{world}{datasets}")
    return "\n".join(lines) + "\n"


# --- the where-it-holds grid (rag_lab.figures.where_grid) as text: the terminal, robustness.md, the lesson map


def legend_line() -> str:
    """What each symbol means, in one line."""
    return "; ".join(f"{symbol} {name}" for name, (symbol, _, _) in STATUSES.items() if symbol) + \
        "; * measured on the arms the recording ran (Holm within each family; a study's row: its declared family)"


def where_grid_text(info: WhereGridInfo) -> str:
    """The grid as plain text: a legend line, then one line per finding (:func:`where_line`)."""
    width = max(len(k) for k in info.keys)
    return "\n".join([legend_line(), *(f"{k:{width}s}  {where_line(info, k)}" for k in info.keys)])


def where_grid_markdown(info: WhereGridInfo) -> str:
    """The grid as a markdown table of symbols (one row per finding, one column per setting; blank: not one of
    the finding's datasets; starred: measured on the recording's arms), its legend under it."""
    head = "| finding | " + " | ".join(info.columns) + " |"
    rows = [f"| {k} | " + " | ".join(c.symbol + ("*" if c.measured_as else "") for c in cells) + " |"
            for k, cells in zip(info.keys, info.cells, strict=True)]
    return "\n".join([head, "|" + "---|" * (1 + len(info.columns)), *rows, "", legend_line()])
