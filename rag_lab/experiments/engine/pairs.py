"""A study's two halves read as pairs: the sweep of a set of questions and the sweep of their unanswerable twins
(:mod:`rag_lab.loaders.twins`), the same candidates on both. :class:`PairedHalves` joins them by pair id and gives
what a guard buys and costs per candidate (:meth:`PairedHalves.table`), the break-even price of a wrong answer
between two candidates (:meth:`PairedHalves.break_even`), and per-pair values of :data:`PAIR_METRICS` for a paired
test (:meth:`PairedHalves.paired_values`, read by :func:`~rag_lab.experiments.engine.findings.paired_finding` as it
reads a :class:`~rag_lab.experiments.engine.results.SweepResult`). The method: docs/design.md §5, "What a guard buys".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.pair_metrics import PAIR_METRICS
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.experiments.engine.store import RUN_FILE
from rag_lab.stats.paired import ratio_interval

__all__ = ["PAIRS_WITH", "BreakEven", "PairedHalves", "stored_other_half"]

#: The folder of a run directory where the run of its ``pairs_with:`` sweep is kept.
PAIRS_WITH = "pairs_with"


def stored_other_half(result: SweepResult) -> SweepResult | None:
    """The run of the other half of ``result``'s pairs, kept in its run directory (``PAIRS_WITH``), if any."""
    folder = result.run_dir / PAIRS_WITH
    return SweepResult.load(folder) if (folder / RUN_FILE).is_file() else None


@dataclass(frozen=True)
class BreakEven:
    """The price ``c`` of a wrong answer (in right answers) at which ``candidate`` and ``reference`` have the same
    utility, right − c·wrong, over ``n`` pairs: ``c = Δright / Δwrong`` (candidate − reference, summed), with its
    paired bootstrap interval (pairs resampled). ``candidate_better_above``: the candidate has the higher utility
    for every price above ``c`` (it makes fewer wrong answers); below it, for every price under ``c``. ``c`` is NaN
    when the two make the same number of wrong answers, and not positive when one has at least as many right and at
    most as many wrong answers: then it is better at every price, or they tie."""

    c: float
    lo: float
    hi: float
    n: int
    delta_right: int
    delta_wrong: int

    @property
    def candidate_better_above(self) -> bool:
        return self.delta_wrong < 0

    def text(self) -> str:
        counts = f"Δright {self.delta_right:+d}, Δwrong {self.delta_wrong:+d} over {self.n} pairs"
        if not self.c > 0:   # no positive price: one side has at least as many right and at most as many wrong answers
            better = self.delta_right - self.delta_wrong
            side = "better" if better > 0 else "worse" if better < 0 else "the same"
            return f"no break-even at a positive price: the candidate is {side} at every price ({counts})"
        side = "above" if self.candidate_better_above else "below"
        return f"break-even c = {self.c:.2f} [{self.lo:.2f}, {self.hi:.2f}] ({counts}): the candidate is better {side} it"


class PairedHalves:
    """The pairs of two sweeps: ``twins`` (unanswerable twins, rows with ``pair_id``) and ``answerable`` (the
    questions they are twins of), with the same candidates. A pair is kept when both halves have its question;
    :attr:`qids` are the pairs' twin qids, in the twins sweep's order. Candidates are picked as in
    :meth:`SweepResult.reference` (on the twins sweep) and found in the other half by their config."""

    def __init__(self, twins: SweepResult, answerable: SweepResult) -> None:
        self.twins = twins
        self.answerable = answerable
        self.spec = twins.spec
        base_rows = twins.rows(twins.reference()["candidate_id"])
        if "pair_id" not in base_rows:
            raise ConfigError(f"{twins.run_dir}: its rows name no pair (pair_id): not a sweep of unanswerable twins")
        self._pair_of = dict(zip(base_rows["qid"], base_rows["pair_id"], strict=True))
        self._flagged = set(base_rows.loc[base_rows["twin_flagged"].astype(bool), "qid"])
        known = set(answerable.qids)
        self.qids = [q for q in twins.qids if self._pair_of.get(q) in known]
        if not self.qids:
            raise ConfigError(f"no twin of {twins.run_dir} has its question in {answerable.run_dir}")

    # --- what paired_finding asks of a result -----------------------------------------------------------

    def reference(self, reference: str | Mapping[str, Any] | None = None) -> dict[str, Any]:
        return self.twins.reference(reference)

    def labels(self, reference: str | Mapping[str, Any] | None = None) -> dict[str, str]:
        return self.twins.labels(reference)

    def claim_qids(self) -> list[str]:
        """The pairs a declared claim is tested on: neither in the pilot (``pilot:`` of either sweep) nor flagged
        (a twin whose corpus still holds its answer)."""
        pilot = set(self.twins.spec.get("pilot") or ()) | set(self.answerable.spec.get("pilot") or ())
        return [q for q in self.unflagged() if q not in pilot and self._pair_of[q] not in pilot]

    def unflagged(self) -> list[str]:
        """The pairs whose twin is not flagged (its corpus holds none of its original's answers)."""
        return [q for q in self.qids if q not in self._flagged]

    def paired_values(self, metric: str, candidate: str | Mapping[str, Any],
                      reference: str | Mapping[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``metric`` (a pair metric of :data:`PAIR_METRICS`) per pair (rows, in :attr:`qids` order; one column) of
        ``candidate`` and of ``reference``; NaN where undefined."""
        pair_metric = PAIR_METRICS[metric]
        out = []
        for which in (candidate, reference):
            twin_rows, answerable_rows = self._rows(which)
            out.append(np.array([[pair_metric.value(answerable_rows[self._pair_of[q]], twin_rows[q])]   # None: NaN
                                 for q in self.qids], dtype=float))
        return out[0], out[1]

    # --- the tables ---------------------------------------------------------------------------------------

    def _rows(self, which: str | Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """The per-question rows of one candidate on each half, by qid (twins, answerable)."""
        picked = self.twins.reference(which)
        config = self.twins.configs().set_index("candidate_id").loc[picked["candidate_id"]].to_dict()
        other = _same_config(self.answerable, config)
        if other is None:
            raise ConfigError(f"candidate {picked['candidate_id']} of {self.twins.run_dir} has no run of the same "
                              f"config in {self.answerable.run_dir}")
        return self.twins.store.rows(picked["candidate_id"]), self.answerable.store.rows(other)

    def table(self, qids: list[str] | None = None) -> pd.DataFrame:
        """One row per candidate of the twins sweep: on each half, right / wrong / refused (on the twins a right
        answer is right from memory, and every answer is unsupported); over both, coverage, right among answered,
        refusal precision (refusals that were of twins) and recall (twins refused); the mean pair score and utility
        at c = 1 per pair. ``qids``: the pairs to count (default: every pair)."""
        qids = self.qids if qids is None else qids
        labels = self.twins.labels()
        records = []
        for candidate in self.twins.table["candidate_id"]:
            twin_rows, answerable_rows = self._rows(candidate)
            columns = ["quality_right", "quality_confident_error", "quality_answered"]
            a = pd.DataFrame([answerable_rows[self._pair_of[q]] for q in qids], columns=columns)
            t = pd.DataFrame([twin_rows[q] for q in qids], columns=columns)
            counts = {}
            for half, rows in (("answerable", a), ("twins", t)):
                counts[f"{half}_right"] = int(rows["quality_right"].sum())
                counts[f"{half}_wrong"] = int(rows["quality_confident_error"].sum())
                counts[f"{half}_refused"] = int((rows["quality_answered"] == 0).sum())
            answered = (len(qids) - counts["answerable_refused"]) + (len(qids) - counts["twins_refused"])
            refusals = counts["answerable_refused"] + counts["twins_refused"]
            pairs = [PAIR_METRICS["pair_score"].value(answerable_rows[self._pair_of[q]], twin_rows[q]) for q in qids]
            utility = [PAIR_METRICS["pair_utility"].value(answerable_rows[self._pair_of[q]], twin_rows[q]) for q in qids]
            records.append({
                "candidate_id": candidate, "label": labels[candidate], "pairs": len(qids), **counts,
                "coverage": answered / (2 * len(qids)) if qids else math.nan,
                "right_among_answered": (counts["answerable_right"] + counts["twins_right"]) / answered
                if answered else math.nan,
                "refusal_precision": counts["twins_refused"] / refusals if refusals else math.nan,
                "refusal_recall": counts["twins_refused"] / len(qids) if qids else math.nan,
                "pair_score": float(np.mean(pairs)) if pairs else math.nan,
                "utility_c1": float(np.mean(utility)) if utility else math.nan,
            })
        return pd.DataFrame.from_records(records)

    def break_even(self, candidate: str | Mapping[str, Any], reference: str | Mapping[str, Any] | None = None,
                   qids: list[str] | None = None, n_boot: int = 2000, alpha: float = 0.05,
                   seed: int = 0) -> BreakEven:
        """The break-even price of a wrong answer between ``candidate`` and ``reference`` over the pairs
        (:class:`BreakEven`): per pair, the differences of right answers and of wrong answers over both halves; the
        interval is :func:`~rag_lab.stats.paired.ratio_interval` of their sums (resamples where the wrong answers
        tie are dropped). No pair: all NaN."""
        keep = [self.qids.index(q) for q in (self.qids if qids is None else qids)]
        if not keep:
            return BreakEven(c=math.nan, lo=math.nan, hi=math.nan, n=0, delta_right=0, delta_wrong=0)
        dr = np.subtract(*(v[keep, 0] for v in self.paired_values("pair_right", candidate, reference)))
        dw = np.subtract(*(v[keep, 0] for v in self.paired_values("pair_wrong", candidate, reference)))
        total_r, total_w = int(np.nansum(dr)), int(np.nansum(dw))
        c = total_r / total_w if total_w else math.nan
        lo, hi = ratio_interval(dr, dw, n_boot, alpha, seed) if total_w else (math.nan, math.nan)
        return BreakEven(c=c, lo=lo, hi=hi, n=len(dr), delta_right=total_r, delta_wrong=total_w)


def _same_config(result: SweepResult, config: Mapping[str, Any]) -> str | None:
    """The candidate of ``result`` whose resolved config is ``config`` (seed aside), else None."""
    wanted = {k: v for k, v in config.items() if k != "seed"}
    for _, row in result.configs().iterrows():
        have = {k: v for k, v in row.to_dict().items() if k not in ("seed", "candidate_id")}
        if all(_same(have.get(k), v) for k, v in wanted.items()):
            return str(row["candidate_id"])
    return None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return bool(a == b) if not isinstance(a, (list, tuple, np.ndarray)) else list(a) == list(b)
