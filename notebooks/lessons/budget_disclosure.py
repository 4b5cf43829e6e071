"""Notebook 02's own code (budget disclosure): which simulator knobs fired under each configuration, and the recorded
model's like-for-like study (:func:`like_for_like`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import pandas as pd

from rag_lab.experiments.engine.findings import Finding
from rag_lab.experiments.engine.results import SweepResult

__all__ = ["LIKE_FOR_LIKE", "LikeForLike", "knob_table", "like_for_like"]


def knob_table(result: SweepResult, names: Mapping[str, str], knobs: Iterable[str] | None = None) -> pd.DataFrame:
    """:meth:`SweepResult.knob_rates` of each named configuration (one block of rows per name), only the
    ``knobs`` given (all when None)."""
    wanted = set(knobs) if knobs is not None else None
    out = pd.concat({name: result.knob_rates(cid) for name, cid in names.items()})
    return out[out["knob"].isin(wanted)] if wanted is not None else out


#: The like-for-like study of disclosure on the recorded model (prompt set v4: the arms differ by the cap clause alone).
LIKE_FOR_LIKE = "real_qwen_hotpotqa_disclosure"


class LikeForLike(NamedTuple):
    """The v4 disclosure study replayed: its declared findings, and what the model did in each arm (rounds and stop
    reasons per question, the controller's actions by round: :mod:`rag_lab.experiments.engine.behaviour`)."""

    findings: list[Finding]
    ends: pd.DataFrame
    decisions: pd.DataFrame

    @property
    def round_gap(self) -> float:
        """Mean rounds with the budget disclosed minus hidden (the base config)."""
        rounds = self.ends.set_index("configuration")["mean rounds"]
        return float(rounds["disclosure.disclosed=true"] - rounds["base"])

    def past_the_cap(self, cap: int = 4) -> pd.Series:
        """Per arm, how often the controller asked for another round after the ``cap``-th (the cap refuses it)."""
        return self.decisions[self.decisions["round"] == cap].set_index("configuration")["retrieve_again"]

    def shown(self) -> list[Any]:
        """What lesson 02 shows of it: the findings' table and sentences, then the two tables of what the model did."""
        from lessons.lesson_text import findings_markdown
        from lessons.real_model import study_table

        return [study_table({LIKE_FOR_LIKE: self.findings}), findings_markdown(*self.findings), self.ends,
                self.decisions]


def like_for_like(name: str = LIKE_FOR_LIKE) -> LikeForLike:
    """The like-for-like disclosure study (``sweeps/<name>.yaml``) replayed from its cassette."""
    from lessons.notebook import lesson_sweep
    from rag_lab.experiments.engine.behaviour import decisions_by_round, loop_ends
    from rag_lab.experiments.engine.findings import sweep_findings
    from rag_lab.paths import SWEEPS_DIR

    real = lesson_sweep(SWEEPS_DIR / f"{name}.yaml", replay=True)
    return LikeForLike(sweep_findings(real), loop_ends(real), decisions_by_round(real))
