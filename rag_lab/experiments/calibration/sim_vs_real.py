"""The simulator against a recorded real model, contrast by contrast: does each policy's effect on the real
model (candidate − base, paired on the same questions) have the sign the simulator gives it?

:func:`contrast_agreement` takes the real sweep (a replayed recording) and its simulator twin (the same spec
with a simulator backend: same configs, same questions) and returns one row per contrast and metric: the real
Δ with its interval, its exact paired p and the Holm-adjusted p over every real contrast of the table (one
family), the simulator's Δ, whether the two signs agree (0 is a sign of its own: "no effect" agrees only with
"no effect"), and whether the real Δ is *shown* (interval excludes 0 and Holm p < α) — the contrasts where a
fitted simulator must agree — and, where it is not, the smallest |Δ| the recording could have detected
(``real_detectable``: 80% power, the two-sided paired test at Holm's strictest level over the table;
:func:`rag_lab.stats.power.detectable`). :func:`agreement_summary` counts them.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.comparisons import is_measured, with_holm
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.stats.paired import interval_text

COLUMNS = ["contrast", "metric", "real", "real_delta", "real_p", "real_holm", "real_shown", "real_detectable", "sim",
           "sim_delta", "sign_agrees"]


def contrast_agreement(real: SweepResult, sim: SweepResult, metrics: Iterable[str], alpha: float = 0.05) -> pd.DataFrame:
    """Each non-base config of ``real`` against the base, on each metric, beside ``sim``'s (see the module doc). The
    real Δs are one Holm family, shown and not shown by the exploratory table's rule
    (:func:`~rag_lab.experiments.engine.comparisons.with_holm`)."""
    if list(real.qids) != list(sim.qids):
        raise ConfigError("the real sweep and its simulator twin must run the same questions in the same order")
    rows = []
    for metric, r in with_holm({m: real.compare(m) for m in metrics}, alpha).items():
        s = sim.compare(metric).set_index("config_id")
        missing = [c for c in r["config_id"] if c not in s.index]
        if missing:
            raise ConfigError(f"configs {missing} of the real sweep are not in the simulator twin")
        for _, row in r[~r["is_reference"]].iterrows():
            twin = s.loc[row["config_id"]]
            rows.append({"contrast": row["label"], "metric": metric, "real": interval_text(row), "real_delta": row["delta"],
                         "real_p": row["p"], "real_holm": row["p_holm"], "real_shown": is_measured(row, alpha),
                         "real_detectable": "" if row["detectable"] is None else row["detectable"].text,
                         "sim": interval_text(twin), "sim_delta": twin["delta"],
                         "sign_agrees": bool(np.sign(round(row["delta"], 12)) == np.sign(round(twin["delta"], 12)))})
    return pd.DataFrame(rows, columns=COLUMNS)


def agreement_summary(table: pd.DataFrame) -> dict[str, int]:
    """How many contrasts agree in sign, in all and among those the real model shows."""
    shown = table[table["real_shown"]]
    return {"contrasts": len(table), "sign_agrees": int(table["sign_agrees"].sum()),
            "real_shown": len(shown), "shown_and_agrees": int(shown["sign_agrees"].sum())}
