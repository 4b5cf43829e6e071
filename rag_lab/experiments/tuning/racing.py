"""Racing candidates over questions (irace's idea, with the paired tests of :mod:`rag_lab.stats`): every candidate
answers the same seeded random order of the questions (:func:`race_order`) in stages of growing size, and after
each stage but the last (a *look*) :func:`stage_drops` drops a candidate only when a test shows a rival
dominating it (not worse on every objective, better on one) or its mean breaking a constraint. The family of a
look holds one hypothesis per candidate (no rival dominates it: Bonferroni over its rivals) and one per
constraint, Holm over them at the look's share of α (:func:`look_alphas`: in proportion to its questions).
Everything here is a function of the stored rows: a resumed race recomputes the same decisions. The rule and
its simulated error rates: docs/decisions.md, "Racing: dropping only the dominated"."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats as _stats

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import label
from rag_lab.experiments.engine.search_space import Constraint, Objective, RaceSpec
from rag_lab.stats.exact_tests import noninferiority_p
from rag_lab.stats.paired import EQUAL_TOL
from rag_lab.stats.significance import difference_p, holm

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


DOMINANCE = ("noninferior", "strict")


def _gains(values: StageValues, r: str, c: str, objectives: Sequence[Objective]) -> list[np.ndarray] | None:
    """``r``'s gain over ``c`` per question on each objective (positive: ``r`` better), where both are defined."""
    gains = []
    for o in objectives:
        a, b = _defined(np.asarray(values[r][o.metric], float), np.asarray(values[c][o.metric], float))
        if a.size == 0:
            return None
        gains.append((b - a) if o.minimize else (a - b))
    return gains


def _better(gain: np.ndarray, metric: str) -> dict[str, Any]:
    p, method, _, wins, losses = difference_p(gain, "greater", lattice=True)
    return {"metric": metric, "test": "better", "delta": float(gain.mean()), "p": p, "n": int(gain.size),
            "method": method, "n_better": wins, "n_worse": losses}


def _not_worse(gain: np.ndarray, metric: str, margin: float) -> dict[str, Any]:
    wins, losses = int((gain > EQUAL_TOL).sum()), int((gain < -EQUAL_TOL).sum())
    return {"metric": metric, "test": "not_worse", "delta": float(gain.mean()), "margin": margin,
            "p": noninferiority_p(wins, losses, int(gain.size), margin), "n": int(gain.size),
            "method": "exact non-inferiority", "n_better": wins, "n_worse": losses}


def dominance_test(values: StageValues, c: str, r: str, objectives: Sequence[Objective],
                   dominance: str = "noninferior", margin: float = 0.02) -> dict[str, Any] | None:
    """The test of "``r`` dominates ``c``": with ``noninferior``, shown not worse on every objective (the exact
    non-inferiority test within ``margin``) and better on at least one (the smallest one-sided p, times the
    number of objectives); with ``strict``, shown better on every objective. Its p is the largest of its
    parts (intersection-union); ``objective`` is the one shown better. None when some objective is defined
    on no question."""
    gains = _gains(values, r, c, objectives)
    if gains is None:
        return None
    better = [_better(g, o.metric) for g, o in zip(gains, objectives, strict=True)]
    if dominance == "strict":
        return {"candidate": c, "rival": r, "objective": None, "p": max(t["p"] for t in better), "tests": better}
    best = min(better, key=lambda t: t["p"])
    best = {**best, "objectives": len(objectives), "p_any": min(1.0, len(objectives) * best["p"])}
    not_worse = [_not_worse(g, o.metric, margin) for g, o in zip(gains, objectives, strict=True)]
    return {"candidate": c, "rival": r, "objective": best["metric"],
            "p": max([best["p_any"]] + [t["p"] for t in not_worse]), "tests": [best, *not_worse]}


def candidate_hypothesis(values: StageValues, c: str, rivals: Sequence[str], objectives: Sequence[Objective],
                         dominance: str = "noninferior", margin: float = 0.02,
                         rival_count: int = 0) -> dict[str, Any] | None:
    """The hypothesis "no rival dominates ``c``" and its p: the smallest :func:`dominance_test` p over the
    ``rivals`` (bar ``c``), times their number or ``rival_count`` if larger (Bonferroni); the strongest test's
    rival and parts come with it. None when no rival can be compared."""
    tests = [t for r in rivals if r != c if (t := dominance_test(values, c, r, objectives, dominance, margin))]
    if not tests:
        return None
    best = min(tests, key=lambda t: (t["p"], t["rival"]))
    count = max(len(tests), rival_count)
    return {**best, "p_rival": best["p"], "rivals": count, "p": min(1.0, count * best["p"])}


def look_alphas(stages: Sequence[int], alpha: float) -> list[float]:
    """The α of each look (every stage but the last): ``alpha`` shared in proportion to the looks' questions,
    so the looks together spend ``alpha`` and the larger (later) looks, where a test can show more, get more."""
    looks = list(stages[:-1]) or [1]
    return [alpha * n / sum(looks) for n in looks]


def constraint_test(mine: np.ndarray, k: Constraint) -> dict[str, Any]:
    """The one-sided test of "the mean keeps ``k``" on a candidate's values (see the module doc)."""
    breaks_up = k.op == "<="      # broken when the mean is above the bound
    if mine.size and bool(np.all((mine == 0.0) | (mine == 1.0))):
        ones, n, bound = int(mine.sum()), int(mine.size), min(1.0, max(0.0, k.bound))
        p = float(_stats.binom.sf(ones - 1, n, bound) if breaks_up else _stats.binom.cdf(ones, n, bound))
        method = "exact binomial"
    else:
        p, method, _, _, _ = difference_p(mine - k.bound, "greater" if breaks_up else "less")
    return {"metric": k.metric, "test": "constraint", "delta": float(mine.mean() - k.bound) if mine.size else math.nan,
            "p": min(1.0, p), "n": int(mine.size), "method": method,
            "mean": float(mine.mean()) if mine.size else math.nan, "bound": k.bound}


def stage_drops(
    values: StageValues,
    challengers: Sequence[str],
    rivals: Sequence[str],
    objectives: Sequence[Objective],
    constraints: Sequence[Constraint],
    alpha: float,
    n_questions: int,
    dominance: str = "noninferior",
    margin: float = 0.02,
    rival_count: int = 0,
) -> list[RaceOutcome]:
    """The challengers dropped after this look (see the module doc); ``rivals`` may include challengers, and
    ``alpha`` is this look's (:func:`look_alphas`). The family is Holm-corrected at ``alpha``. ``rival_count``:
    the Bonferroni count of a candidate's rivals when it exceeds the rivals given — in a race, every candidate
    that entered it but the one tested, dropped ones too (:func:`run_race`)."""
    if dominance not in DOMINANCE:
        raise ConfigError(f"dominance must be one of {DOMINANCE}, got {dominance!r}")
    if dominance == "noninferior" and not 0.0 < margin < 0.5:
        raise ConfigError(f"margin must lie in (0, 0.5) (a share of the questions), got {margin!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < alpha < 1.0:
        raise ConfigError(f"a look's alpha must lie in (0, 1), got {alpha!r}")
    hypotheses: list[dict[str, Any]] = []
    for c in challengers:
        if (h := candidate_hypothesis(values, c, rivals, objectives, dominance, margin, rival_count)) is not None:
            hypotheses.append(h)
        for k in constraints:
            mine = np.asarray(values[c][k.metric], float)
            mine = mine[~np.isnan(mine)]
            if mine.size == 0:
                continue
            test = constraint_test(mine, k)
            hypotheses.append({"candidate": c, "rival": None, "constraint": str(k), "p": test["p"], "tests": [test]})
    if not hypotheses:
        return []
    adjusted = [float(p) for p in holm([h["p"] for h in hypotheses])]
    for h, p in zip(hypotheses, adjusted, strict=True):
        h["p_holm"] = p
    drops = []
    for c in challengers:
        mine = sorted((h for h in hypotheses if h["candidate"] == c and h["p_holm"] <= alpha),
                      key=lambda h: (h["p_holm"], h["rival"] or "", h.get("constraint") or ""))
        if not mine:
            continue
        best = mine[0]
        detail = {"family": len(hypotheses), "alpha_look": alpha, "spending": "in proportion to the looks' questions",
                  "dominance": dominance, "margin": margin if dominance == "noninferior" else None,
                  "p_holm": best["p_holm"], "p": best["p"], "p_rival": best.get("p_rival"), "rivals": best.get("rivals"),
                  "tests": best["tests"], "constraint": best.get("constraint"), "objective": best.get("objective")}
        drops.append(RaceOutcome(candidate_id=c, status="dropped", n_questions=n_questions, rival=best["rival"],
                                 reason=_reason(best, n_questions, len(hypotheses), alpha), detail=detail))
    return drops


def _reason(h: Mapping[str, Any], n: int, family: int, level: float) -> str:
    def one(t: Mapping[str, Any]) -> str:
        if t["test"] == "not_worse":
            return (f"{label(t['metric'])} not worse beyond a net share of {t['margin']:g} ({t['n_better']} questions "
                    f"better, {t['n_worse']} worse of {t['n']}; exact non-inferiority p = {t['p']:.2g})")
        if t["test"] == "constraint":
            return f"{label(t['metric'])} mean {t['mean']:.3g} against {t['bound']:g} (p = {t['p']:.2g}, {t['method']})"
        shown = (f", × {t['objectives']} objectives = {t['p_any']:.2g}" if "p_any" in t else "")
        return (f"{label(t['metric'])} better by Δ {t['delta']:+.3f} ({t['n_better']}↑ {t['n_worse']}↓, "
                f"p = {t['p']:.2g}, {t['method']}{shown})")

    tests = "; ".join(one(t) for t in h["tests"])
    holm_text = (f"Holm-adjusted p = {h['p_holm']:.2g} over the look's {family} hypotheses, at the look's "
                 f"α = {level:.2g}")
    if h["rival"] is None:
        return f"after {n} questions its mean breaks {h['constraint']} ({tests}; {holm_text})"
    return (f"after {n} questions, dominated by {h['rival']}: {tests} (rival − this; p = {h['p_rival']:.2g}, "
            f"× {h['rivals']} rivals = {h['p']:.2g}; {holm_text})")


def race_rule(spec: RaceSpec, n_questions: int) -> str:
    """The rule a race of ``n_questions`` runs under, in words and with its numbers (the stages, the margin and
    what it lets through, α and each look's share): what ``rag-lab sweep`` prints and the report says."""
    stages = spec.stages(n_questions)
    shares = ", ".join(f"{a:.2g}" for a in look_alphas(stages, spec.alpha))
    shown = (f"not worse on every objective (exact non-inferiority within race.margin = {spec.margin:g}: a rival that "
             f"loses on at most {spec.margin * 100:g}% more of the questions than it wins counts as not worse) and better "
             "on one" if spec.dominance == "noninferior" else "better on every objective")
    looks = ", ".join(map(str, stages[:-1])) or "none"
    return (f"looks after {looks} of {n_questions} questions; a candidate is dropped only when a test shows a rival "
            f"{shown}, or its mean breaking a constraint; Bonferroni over its rivals, Holm over the look's "
            f"candidates and constraints, α = {spec.alpha:g} shared over the looks in proportion to their questions "
            f"({shares})")


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
    alphas = dict(zip(stages, look_alphas(stages, spec.alpha), strict=False))   # planned when the race starts
    # which rivals are still racing depends on the questions, so each candidate's Bonferroni count is all of them
    entered = len(dict.fromkeys([*survivors, *incumbents])) - 1
    for n in stages:
        qids = list(order[:n])
        evaluate(survivors, qids)
        if n == stages[-1]:
            break
        everyone = list(dict.fromkeys([*survivors, *incumbents]))
        values = {cid: {m: metric_values(cid, qids, m) for m in metrics} for cid in everyone}
        for drop in stage_drops(values, survivors, everyone, objectives, constraints, alphas[n], n, spec.dominance,
                                spec.margin, rival_count=entered):
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
