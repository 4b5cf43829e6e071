"""lessons.lesson_text: a lesson's findings written out from their numbers, and where a robustness row
holds, in words."""

from __future__ import annotations

import pytest

from lessons.lesson_text import LessonText, finding_paragraph, findings_markdown, where_words
from lessons.robustness import RobustnessTable
from rag_lab.experiments.engine.findings import Finding, FindingFamily


def _finding(**over) -> Finding:
    fields = {"claim": "a second round answers more two-hop questions", "metric": "quality_answer_containment_strict",
              "candidate": "round_cap.max_rounds=2", "reference": "round_cap.max_rounds=1", "direction": "above",
              "margin": 0.0, "delta": 0.117, "lo": 0.05, "hi": 0.2, "n": 60, "share_differ": 0.15, "mean": 0.5,
              "reference_mean": 0.383, "p": 0.0039, "method": "exact sign", "n_better": 8, "n_worse": 1}
    fields.update(over)
    return Finding(**fields)


def test_a_paragraph_carries_the_findings_own_numbers():
    family = FindingFamily(size=1)
    finding = _finding(family=family, family_index=family.join(0.0039))
    text = finding_paragraph(finding)
    assert text.startswith("✅ **Holds** — *measured")
    for part in ("A second round answers more two-hop questions (claimed: higher with the candidate)",
                 "on the same 60 questions", "0.500 vs 0.383", "Δ = +0.117 (95% paired interval [+0.050, +0.200])",
                 "8 question(s) higher and 1 lower", "p = 0.0039 (exact sign)",
                 "p = 0.0039 after the fixed-sequence correction over its family of 1 finding (tested in the order stated)"):
        assert part in text, (part, text)


def test_a_paragraph_says_when_a_finding_is_not_shown_or_not_asserted():
    text = finding_paragraph(_finding(delta=-0.067, lo=-0.15, hi=0.0, p=0.07, n_better=1, n_worse=7, direction="below"))
    assert text.startswith("❌ **Not shown at this size**")
    assert "Δ = −0.067" in text and "1 question(s) higher and 7 lower" in text and "p = 0.070" in text
    assert "printed, not asserted" in text
    assert "p < 0.0001 (exact sign)" in finding_paragraph(_finding(p=1e-6))
    none = finding_paragraph(_finding(direction="none", margin=0.1, kind="definitional"))
    assert "claimed: no change beyond ±0.1" in none and "*definitional" in none


def _table() -> RobustnessTable:
    def cell(dataset, seed, holds, agrees=True, delta=0.1):
        spread = 0.0 if delta == 0 else 0.05     # a Δ of 0 here: no question differs (the grid's "no difference")
        return {"dataset": dataset, "seed": seed, "holds": holds, "agrees": agrees, "delta": delta, "n": 60,
                "lo": delta - spread, "hi": delta + spread}

    rows = [
        {"key": "everywhere", "claim": "c", "direction": "above",
         "cells": [cell(d, s, True) for d in ("world", "hotpotqa_sample") for s in (0, 1)]},
        {"key": "mixed", "claim": "the claim", "direction": "above", "cells": [
            cell("world", 0, True), cell("world", 1, True), cell("hotpotqa_sample", 0, True),
            cell("hotpotqa_sample", 1, False), cell("musique_sample", 0, False), cell("musique_sample", 1, False)]},
        {"key": "nowhere", "claim": "c", "direction": "above", "cells": [
            cell("world", 0, False, False, 0.0), cell("world", 1, False, False, 0.0),
            cell("hotpotqa_sample", 0, False, False, -0.1), cell("hotpotqa_sample", 1, False, True)]},
    ]
    return RobustnessTable(sim_version="sim-x", findings=rows, datasets=["world", "hotpotqa_sample", "musique_sample"],
                           seeds=[0, 1], real_limit=60, alpha=0.05, seconds=1.0)


def test_where_words_read_the_robustness_row():
    table = _table()
    assert where_words("everywhere", table) == "holds on the world and HotpotQA (seeds 0 and 1)"
    assert where_words("mixed", table) == ("holds on the world (seeds 0 and 1); holds on HotpotQA only at seed 0; "
                                           "not shown on MuSiQue (the sign agrees at every seed)")
    assert where_words("nowhere", table) == ("no difference at all on the world; "
                                             "not shown on HotpotQA (the sign does not always agree)")


def test_findings_markdown_renders_as_markdown_with_where_it_holds():
    text = findings_markdown(_finding(), where=["mixed"], table=_table())
    assert isinstance(text, LessonText) and text._repr_markdown_() == str(text)
    assert text.split("\n\n")[-1] == ("**Where “the claim” holds** (robustness table, sim-x): holds on the world "
                                      "(seeds 0 and 1); holds on HotpotQA only at seed 0; not shown on MuSiQue (the "
                                      "sign agrees at every seed).")
    with pytest.raises(ValueError, match="at least one finding"):
        findings_markdown()


def test_where_words_name_each_recorded_real_model_column():
    """A row's real-model cells are said after the simulator's: holds, not shown (and the sign), no difference
    at all, undefined (NaN: no question where the metric applies), not recorded, not applicable; columns with
    the same words are said once, their labels together."""
    def real(label, status="tested", holds=False, delta=0.0, lo=0.0, hi=0.0, agrees=False):
        return {"dataset": f"{label} (recorded)", "status": status, "holds": holds, "delta": delta, "lo": lo, "hi": hi,
                "agrees": agrees, "n": 40}

    table = _table()
    table.findings[0]["recorded"] = [
        real("M, prompts v1"), real("M, prompts v2", holds=True, delta=-0.2, lo=-0.3, hi=-0.1, agrees=True),
        real("M, d", delta=0.1, lo=-0.1, hi=0.3, agrees=True), real("M, e", delta=-0.1, lo=-0.3, hi=0.1),
        real("M, f", delta=float("nan")), real("M, g", status="not recorded"), real("M, h", status="not applicable"),
        real("M, i", status="not applicable")]
    assert where_words("everywhere", table) == "; ".join([
        "holds on the world and HotpotQA (seeds 0 and 1)",
        "no difference at all with the recorded real model (M, prompts v1)",
        "holds with the recorded real model (M, prompts v2)",
        "not shown with the recorded real model (M, d) (the sign agrees)",
        "not shown with the recorded real model (M, e) (the sign does not agree)",
        "undefined with the recorded real model (M, f) (no question where the metric applies)",
        "not recorded for the recorded real model (M, g)",
        "not applicable to the recorded real model (M, h; M, i) (it rests on a simulator setting)"])
