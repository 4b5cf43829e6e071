"""A recommendation a referee accepts: every candidate against a reference on outcome metrics (:func:`verdicts`:
each difference tested and each "no change" shown by an equivalence test, all Holm-corrected together), then the
cheapest candidate shown not to hurt (:func:`recommend`). "No measured change" is not safety: an inconclusive
candidate is never recommended. The method: docs/decisions.md, "A recommendation"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.stats.holds import holds
from rag_lab.stats.paired import interval_text
from rag_lab.stats.significance import equivalence_test, holm, paired_test

SAFE = ("helps", "equivalent")


def verdicts(result: SweepResult, metrics: Sequence[str] = (DEFAULT_QUALITY, "quality_abstention_accuracy"),
             cost: str = DEFAULT_COST, margin: float = 0.05, alpha: float = 0.05, reference: Any = None,
             n_boot: int = 2000) -> pd.DataFrame:
    """One row per config (the reference included, verdict ``reference``): ``label``, ``candidate_id``,
    ``config_id``; per metric ``{m}: Δ`` (``Δ [lo, hi]``), ``{m}: p``, ``{m}: p Holm``, ``{m}: TOST p Holm``
    and ``{m}: verdict``; the cost's ``{cost}: Δ`` text and ``cost_delta``. ``attrs`` holds the rule."""
    if not margin > 0:
        raise ConfigError(f"margin must be > 0 (the equivalence bound, in the metrics' units), got {margin!r}")
    ref = result.reference(reference)
    cost_frame = result.compare(cost, reference=reference, n_boot=n_boot)
    rows = [{"label": r["label"], "candidate_id": r["candidate_id"], "config_id": r["config_id"],
             "is_reference": bool(r["is_reference"]), f"{cost}: Δ": interval_text(r), "cost_delta": float(r["delta"])}
            for _, r in cost_frame.iterrows()]
    cells, pvalues = [], []
    for i, row in enumerate(rows):
        if row["is_reference"]:
            continue
        for metric in metrics:
            values, ref_values = result.paired_values(metric, row["config_id"], ref["config_id"])
            test = paired_test(values, ref_values, n_boot=n_boot)
            equiv = equivalence_test(values, ref_values, margin)
            cells.append((i, metric, test))
            pvalues += [test.p, equiv.p]
    adjusted = holm(pvalues)
    for k, (i, metric, test) in enumerate(cells):
        p_diff, p_equiv = adjusted[2 * k], adjusted[2 * k + 1]
        if holds("above", p_diff, test.lo, test.hi, alpha):
            verdict = "helps"
        elif holds("below", p_diff, test.lo, test.hi, alpha):
            verdict = "hurts"
        elif p_equiv < alpha:
            verdict = "equivalent"
        else:
            verdict = "inconclusive"
        rows[i].update({f"{metric}: Δ": interval_text(test.difference._asdict()), f"{metric}: p": test.p,
                        f"{metric}: p Holm": p_diff, f"{metric}: TOST p Holm": p_equiv, f"{metric}: verdict": verdict})
    for row in rows:
        if row["is_reference"]:
            row.update({f"{m}: verdict": "reference" for m in metrics})
    out = pd.DataFrame.from_records(rows)
    out.attrs.update({"metrics": list(metrics), "cost": cost, "margin": margin, "alpha": alpha, "family": len(pvalues),
                      "reference": ref})
    return out


def recommend(table: pd.DataFrame) -> pd.Series:
    """The cheapest row of :func:`verdicts` that helps or is equivalent on every metric (the reference
    qualifies; ties keep table order)."""
    metrics = table.attrs["metrics"]
    safe = table[[all(r[f"{m}: verdict"] in (*SAFE, "reference") for m in metrics) for _, r in table.iterrows()]]
    return safe.loc[safe["cost_delta"].idxmin()]


def recommendation_text(table: pd.DataFrame) -> str:
    """The recommendation and every candidate that hurts, one sentence each."""
    best = recommend(table)
    metrics, a = table.attrs["metrics"], table.attrs
    cost_key = f"{a['cost']}: Δ"
    rule = f"Holm over {a['family']} tests, alpha {a['alpha']:g}; equivalence within ±{a['margin']:g}"
    if best["is_reference"]:
        lines = [f"Recommended: keep {best['label']} — no other candidate is shown to help or to be equivalent on "
                 f"{', '.join(metrics)} ({rule})."]
    else:
        shown = "; ".join(f"{m} {best[m + ': verdict']} (Δ {best[m + ': Δ']})" for m in metrics)
        lines = [f"Recommended: {best['label']} — {shown}; {a['cost']} Δ {best[cost_key]} per question ({rule})."]
    for _, row in table.iterrows():
        bad = [m for m in metrics if row[f"{m}: verdict"] == "hurts"]
        if bad:
            hurt = ", ".join(f"{m} (Δ {row[m + ': Δ']})" for m in bad)
            lines.append(f"Avoid: {row['label']} — hurts {hurt}, "
                         f"for a change in {a['cost']} of {row[cost_key]}.")
    return "\n".join(lines)
