"""Racing candidates over questions (irace's idea, with the paired tests of :mod:`.paired`).

Every candidate in a race answers the same questions in the same order — a seeded random order of the
sweep's questions (:func:`race_order`), so the first batch is a fair sample of every question type.
The race runs in **stages** of growing question counts (``race.batches``, e.g. 20, 40, 80, then all).
After each stage but the last, :func:`stage_drops` tests, on the questions run so far:

- for a candidate ``c`` and a rival ``r`` (another survivor, or an *incumbent*: a candidate that has
  already run every question and survived) that dominates ``c`` on the means, the hypothesis "``r`` does
  not dominate ``c``". Each objective on which ``r`` is better on some question gets a one-sided paired test
  of ``r`` against ``c`` over the same questions (:func:`rag_lab.experiments.paired_test`: exact
  sign/McNemar for 0/1 metrics, a sign-flip permutation test otherwise). With ``dominance: strict`` the
  pair's p-value is the largest of them (an intersection-union test: ``r`` must be shown better on every
  objective; a tie keeps ``c`` in the race). With ``dominance: weak`` (the default, Pareto dominance) one
  objective must be shown better, and each other one shown better too or **never worse on any question run
  so far** (two policies that only differ in how they truncate make the same LLM calls): the p-value is
  that objective's (the largest of those needed), for the best choice of the objective shown better;
- for each constraint ``METRIC <= B`` (``>= B``), the hypothesis "``c``'s mean keeps it": a one-sided
  paired test of ``c``'s values against the constant ``B``.

All of one stage's hypotheses form one family, Holm-corrected (:func:`rag_lab.stats.paired.holm`);
a candidate is **dropped** when one of its hypotheses is rejected at ``alpha``, with the rival (or the
constraint) and the numbers that dropped it. Stages are corrected one at a time; the repeated looks
across stages are not corrected (as in irace's F-race), which is why a drop needs the Holm-adjusted
p-value of its stage, not a raw one.

Everything here is a function of the stored rows: a resumed race recomputes the same decisions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rag_lab.evaluation.catalog import label
from rag_lab.experiments.search_space import Constraint, Objective, RaceSpec
from rag_lab.stats.significance import holm, paired_test

#: ``values[candidate_id][metric]``: one value per question of the stage (NaN where undefined).
StageValues = Mapping[str, Mapping[str, np.ndarray]]


@dataclass(frozen=True)
class RaceOutcome:
    """How a candidate left the race: ``survived`` (ran every question) or ``dropped`` after
    ``n_questions``, by ``rival`` (a candidate id; None for a broken constraint), with ``reason`` in words
    and ``detail`` in numbers."""

    candidate_id: str
    status: str
    n_questions: int
    rival: str | None = None
    reason: str = ""
    detail: dict[str, Any] = field(default_factory=dict)


def race_order(qids: Sequence[str], seed: int) -> list[str]:
    """The order a race runs the questions in: a permutation of ``qids`` seeded by ``seed``."""
    rng = np.random.default_rng(seed)
    return [qids[i] for i in rng.permutation(len(qids))]


def _defined(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def stage_drops(
    values: StageValues,
    challengers: Sequence[str],
    rivals: Sequence[str],
    objectives: Sequence[Objective],
    constraints: Sequence[Constraint],
    alpha: float,
    n_questions: int,
    dominance: str = "weak",
) -> list[RaceOutcome]:
    """The challengers dropped after this stage (see the module doc); ``rivals`` may include challengers."""
    hypotheses: list[dict[str, Any]] = []
    for c in challengers:
        for r in rivals:
            if r == c:
                continue
            pairs = [_defined(np.asarray(values[r][o.metric], float), np.asarray(values[c][o.metric], float))
                     for o in objectives]
            if any(a.size == 0 for a, _ in pairs):
                continue
            # the rival's gain per question on each objective (positive: better)
            gains = [(b - a) if o.minimize else (a - b) for (a, b), o in zip(pairs, objectives, strict=True)]
            never_worse = [bool((g >= 0).all()) for g in gains]
            if not all(nw or float(g.mean()) > 0 for g, nw in zip(gains, never_worse, strict=True)):
                continue  # not better on the means (nor never worse) on some objective
            tests = []
            for (a, b), o, g in zip(pairs, objectives, gains, strict=True):
                if not (g > 0).any():
                    tests.append({"metric": o.metric, "delta": 0.0, "p": None, "n": int(a.size), "method": "tied",
                                  "n_better": 0, "n_worse": int((g < 0).sum())})
                    continue
                test = paired_test(a, b, alternative="less" if o.minimize else "greater")
                tests.append({"metric": o.metric, "delta": float(test.delta), "p": float(test.p), "n": int(test.n),
                              "method": test.method, "n_better": int(test.n_better), "n_worse": int(test.n_worse)})
            p = _dominance_p(tests, never_worse, dominance)
            if p is None:
                continue
            for t, nw in zip(tests, never_worse, strict=True):
                t["never_worse"] = nw
            hypotheses.append({"candidate": c, "rival": r, "p": p, "tests": tests})
        for k in constraints:
            mine = np.asarray(values[c][k.metric], float)
            mine = mine[~np.isnan(mine)]
            if mine.size == 0 or k.holds(float(mine.mean())):
                continue
            test = paired_test(mine, np.full(mine.size, k.bound), alternative="greater" if k.op == "<=" else "less")
            hypotheses.append({"candidate": c, "rival": None, "constraint": str(k), "p": float(test.p), "tests": [
                {"metric": k.metric, "delta": float(test.delta), "p": float(test.p), "n": int(test.n),
                 "method": test.method, "mean": float(mine.mean()), "bound": k.bound}]})
    if not hypotheses:
        return []
    adjusted = [float(p) for p in holm([h["p"] for h in hypotheses])]
    for h, p in zip(hypotheses, adjusted, strict=True):
        h["p_holm"] = p
    drops = []
    for c in challengers:
        mine = sorted((h for h in hypotheses if h["candidate"] == c and h["p_holm"] <= alpha),
                      key=lambda h: (h["p_holm"], h["rival"] or ""))
        if not mine:
            continue
        best = mine[0]
        detail = {"family": len(hypotheses), "alpha": alpha, "p_holm": best["p_holm"], "p": best["p"],
                  "tests": best["tests"], "constraint": best.get("constraint")}
        drops.append(RaceOutcome(candidate_id=c, status="dropped", n_questions=n_questions, rival=best["rival"],
                                 reason=_reason(best, n_questions, len(hypotheses)), detail=detail))
    return drops


def _dominance_p(tests: Sequence[Mapping[str, Any]], never_worse: Sequence[bool], dominance: str) -> float | None:
    """The p-value of "the rival dominates": ``strict``, the largest of the objectives' p (each must be shown
    better); ``weak``, the best choice of one objective shown better while every other is shown better or is
    never worse on any question so far. None when no objective can be shown better at all."""
    ps = [t["p"] for t in tests]
    if dominance == "strict":
        return None if any(p is None for p in ps) else max(ps)
    options = []
    for k, pk in enumerate(ps):
        if pk is None:
            continue
        others = [0.0 if never_worse[o] else ps[o] for o in range(len(ps)) if o != k]
        if any(p is None for p in others):
            continue
        options.append(max([pk, *others]))
    return min(options) if options else None


def _reason(h: Mapping[str, Any], n: int, family: int) -> str:
    def one(t: Mapping[str, Any]) -> str:
        if t["p"] is None:
            return f"{label(t['metric'])} tied on all {t['n']} questions"
        text = f"{label(t['metric'])} Δ {t['delta']:+.3f} (p = {t['p']:.2g}, {t['method']}"
        return text + (", never worse on a question)" if t.get("never_worse") else ")")

    tests = "; ".join(one(t) for t in h["tests"])
    holm_text = f"Holm-adjusted p = {h['p_holm']:.2g} over the stage's {family} tests"
    if h["rival"] is None:
        return (f"after {n} questions its mean breaks {h['constraint']} ({tests}, the candidate's values against "
                f"the bound; {holm_text})")
    return f"after {n} questions, dominated by {h['rival']}: {tests} (rival − this; {holm_text})"


def run_race(
    challengers: Sequence[str],
    incumbents: Sequence[str],
    order: Sequence[str],
    spec: RaceSpec,
    objectives: Sequence[Objective],
    constraints: Sequence[Constraint],
    evaluate: Callable[[Sequence[str], Sequence[str]], None],
    metric_values: Callable[[str, Sequence[str], str], np.ndarray],
    on_drop: Callable[[RaceOutcome], None] | None = None,
) -> dict[str, RaceOutcome]:
    """Race ``challengers`` (candidate ids) over ``order``'s questions in ``spec``'s stages against each other
    and the ``incumbents`` (which must have run every question already); ``evaluate(ids, qids)`` makes sure
    those rows are stored, ``metric_values(id, qids, metric)`` reads them. Returns every challenger's outcome."""
    metrics = list(dict.fromkeys([o.metric for o in objectives] + [k.metric for k in constraints]))
    survivors = list(dict.fromkeys(challengers))
    outcomes: dict[str, RaceOutcome] = {}
    stages = spec.stages(len(order))
    for n in stages:
        qids = list(order[:n])
        evaluate(survivors, qids)
        if n == stages[-1]:
            break
        everyone = list(dict.fromkeys([*survivors, *incumbents]))
        values = {cid: {m: metric_values(cid, qids, m) for m in metrics} for cid in everyone}
        for drop in stage_drops(values, survivors, everyone, objectives, constraints, spec.alpha, n, spec.dominance):
            outcomes[drop.candidate_id] = drop
            if on_drop is not None:
                on_drop(drop)
        survivors = [c for c in survivors if c not in outcomes]
    for c in survivors:
        outcomes[c] = RaceOutcome(candidate_id=c, status="survived", n_questions=len(order),
                                  reason=f"ran all {len(order)} questions")
    return outcomes


def mean_of(values: np.ndarray) -> float:
    """The mean of the defined values (NaN when none)."""
    values = np.asarray(values, float)
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else math.nan
