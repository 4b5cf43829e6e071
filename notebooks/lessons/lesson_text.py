"""The sentences a course notebook shows about its findings, written from the computed values.

A lesson's prose must not type a measured number by hand: the number changes when the simulator, the
world or the pipeline changes, and typed text does not. So a notebook renders its results with
:func:`findings_markdown` (one paragraph per finding: what was claimed, what was measured, on how many
questions, whether it holds, and where it holds according to the robustness table, :func:`where_words`). The
banners' one-line where clauses are course tooling (``tools/course/banners.py``).
The templates live here, not in the notebooks (which stay thin).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lessons.robustness import RobustnessTable, load_table
from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import label as metric_label
from rag_lab.experiments.engine.findings import Finding
from rag_lab.figures import where_grid
from rag_lab.stats.significance import p_text

__all__ = ["DATASET_WORDS", "KIND_WORDS", "LessonText", "finding_paragraph", "findings_markdown", "where_words"]

#: What each kind of finding means, in a learner's words.
KIND_WORDS = {
    "measured": "measured — a property of the pipeline and the data, not of a simulator setting",
    "by_construction": "by construction — a simulator knob is set to produce it, and with the knob at 0 it "
                       "vanishes (its control)",
    "definitional": "definitional — true by how the metric is defined; it checks the code, not the world",
}
#: How the prose names the robustness table's datasets.
DATASET_WORDS = {"world": "the world", "hotpotqa_sample": "HotpotQA", "musique_sample": "MuSiQue",
                 "hotpotqa_sample_twins": "HotpotQA's unanswerable twins",
                 "musique_sample_twins": "MuSiQue's unanswerable twins"}


class LessonText(str):
    """A string Jupyter shows as markdown (the last expression of a cell, or ``display(text)``)."""

    def _repr_markdown_(self) -> str:
        return str(self)


def _p(p: float) -> str:
    """``p = 0.125``, ``p < 0.0001``."""
    text = p_text(p)
    return f"p {text[0]} {text[1:]}" if text.startswith("<") else f"p = {text}"


def _num(x: float) -> str:
    return f"{x:+.3f}".replace("-", "−")


def finding_paragraph(finding: Finding) -> str:
    """One finding as a paragraph: verdict, kind, claim, the paired numbers, the test and its correction."""
    verdict = "✅ **Holds**" if finding.holds else "❌ **Not shown at this size**"
    if finding.direction == "none":
        expected = f"claimed: no change beyond ±{finding.margin:g} (an equivalence test)"
    else:
        expected = f"claimed: {'higher' if finding.direction == 'above' else 'lower'} with the candidate"
    text = (f"{verdict} — *{KIND_WORDS[finding.kind]}*. {finding.claim[:1].upper()}{finding.claim[1:]} "
            f"({expected}). {finding.candidate} against {finding.reference} on the same {finding.n} questions: "
            f"{metric_label(finding.metric)} {finding.mean:.3f} vs {finding.reference_mean:.3f}, "
            f"Δ = {_num(finding.delta)} (95% paired interval [{_num(finding.lo)}, {_num(finding.hi)}]); "
            f"{finding.n_better} question(s) higher and {finding.n_worse} lower with the candidate; "
            f"{_p(finding.p if finding.p_claim is None else finding.p_claim)} ({finding.method})")
    if finding.family is not None:
        text += (f", {_p(finding.p_adjusted)} after the fixed-sequence correction over its family of "
                 f"{finding.family.size} finding{'s' if finding.family.size > 1 else ''} (tested in the order stated)")
    else:
        text += "; printed, not asserted (it is outside the family of asserted findings)"
    if finding.control is not None:
        text += f". Its control, the knob at 0: {finding.control.measured}"
    return text + "."


def where_words(key: str, table: RobustnessTable | None = None) -> str:
    """Where robustness row ``key`` holds, in words: per dataset, whether every seed's cell holds, only some,
    or none (and then whether the sign at least agrees); e.g. ``holds on the world (seeds 0 and 1); not shown
    on HotpotQA or MuSiQue (the sign agrees at every seed)``; then each recorded real-model column (holds, not
    shown, no difference at all, not recorded, or not applicable to a finding that rests on a simulator knob)."""
    table = table if table is not None else load_table()
    row = table.row(key)
    by: dict[str, list[Mapping[str, Any]]] = {}
    for cell in row["cells"]:
        by.setdefault(cell["dataset"], []).append(cell)
    groups: dict[str, list[str]] = {}
    for dataset, cells in by.items():
        seeds = " and ".join(str(c["seed"]) for c in cells)
        held = [c for c in cells if c["holds"]]
        if len(held) == len(cells):
            status = f"holds on {{}} (seed{'s' if len(cells) > 1 else ''} {seeds})"
        elif held:
            status = "holds on {} only at seed " + " and ".join(str(c["seed"]) for c in held)
        elif all(c["agrees"] for c in cells):
            status = "not shown on {} (the sign agrees at every seed)"
        elif all(where_grid.cell_status(row, c) == "no difference" for c in cells):
            status = "no difference at all on {}"
        else:
            status = "not shown on {} (the sign does not always agree)"
        groups.setdefault(status, []).append(DATASET_WORDS.get(dataset, dataset))
    parts = []
    for status, names in groups.items():
        joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + (
            " or " if status.startswith("not") else " and ") + names[-1]
        parts.append(status.format(joined))
    real: dict[str, list[str]] = {}
    for cell in row.get("recorded", []):
        real.setdefault(_recorded_status(cell), []).append(cell["dataset"].removesuffix(" (recorded)"))
    parts += [status.format(f"the recorded real model ({'; '.join(labels)})") for status, labels in real.items()]
    return "; ".join(parts)


def _recorded_status(cell: Mapping[str, Any]) -> str:
    """:func:`_cell_status`, and for a cell of a study still being recorded, that it is provisional."""
    status = _cell_status(cell)
    return status + (" (provisional: its study is still being recorded)" if cell.get("provisional") else "")


def _cell_status(cell: Mapping[str, Any]) -> str:
    """One real-model cell of a robustness row in words, ``{}`` standing for the model (the column's label names
    the model, the prompts and the data; columns with the same words are said once, their labels together)."""
    if cell["status"] == "not applicable":
        if "simulator" in cell.get("why", "simulator"):
            return "not applicable to {} (it rests on a simulator setting)"
        return "not applicable to {} (the recording holds none of its questions)"
    if cell["status"] != "tested":
        return "not recorded for {}"
    if cell.get("measured_as"):   # the recording ran other arms: say which (and whose declared claim it is)
        declared = f", the declared claim {cell['declared']}" if cell.get("declared") else ""
        verdict = "holds" if cell["holds"] else "not shown"
        return f"{verdict} with {{}} measured as {cell['measured_as']}{declared}"
    if cell["holds"]:
        return "holds with {}"
    status = where_grid.cell_status({"direction": "above"}, cell)   # a recorded cell's status, as the grid says it
    if status == "no difference":
        return "no difference at all with {}"
    if status == "undefined":
        return "undefined with {} (no question where the metric applies)"
    return f"not shown with {{}} ({'the sign agrees' if cell['agrees'] else 'the sign does not agree'})"


def findings_markdown(*findings: Finding, where: Sequence[str] = (), table: RobustnessTable | None = None) -> LessonText:
    """The notebook's results as markdown: a paragraph per finding, then, for each robustness key in ``where``,
    where that claim holds on the other datasets and seeds (``data/robustness.md``)."""
    if not findings:
        raise ConfigError("findings_markdown needs at least one finding")
    families = {id(f.family): f.family for f in findings if f.family is not None}
    lines = [f"*Declared claims (confirmatory): stated before the sweep ran, each tested one-sided in its claimed "
             f"direction (no change: an equivalence test) in its notebook's family of "
             f"{' and '.join(str(f.size) for f in families.values())}, in the order stated.*"] if families else []
    lines += [finding_paragraph(f) for f in findings]
    if where:
        table = table if table is not None else load_table()
        lines += [f"**Where “{table.row(k)['claim']}” holds** (robustness table, {table.sim_version}): "
                  f"{where_words(k, table)}." for k in where]
    return LessonText("\n\n".join(lines))
