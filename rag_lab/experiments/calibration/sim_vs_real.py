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
from rag_lab.evaluation.catalog import value_range
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.stats.holds import holds
from rag_lab.stats.paired import interval_text
from rag_lab.stats.power import detectable, paired_differences
from rag_lab.stats.significance import holm

COLUMNS = ["contrast", "metric", "real", "real_delta", "real_p", "real_holm", "real_shown", "real_detectable", "sim",
           "sim_delta", "sign_agrees"]


def contrast_agreement(real: SweepResult, sim: SweepResult, metrics: Iterable[str], alpha: float = 0.05) -> pd.DataFrame:
    """Each non-base config of ``real`` against the base, on each metric, beside ``sim``'s (see the module doc)."""
    if list(real.qids) != list(sim.qids):
        raise ConfigError("the real sweep and its simulator twin must run the same questions in the same order")
    rows = []
    for metric in metrics:
        r = real.compare(metric).set_index("config_id")
        s = sim.compare(metric).set_index("config_id")
        missing = [c for c in r.index if c not in s.index]
        if missing:
            raise ConfigError(f"configs {missing} of the real sweep are not in the simulator twin")
        reference = r.index[r["is_reference"]][0]
        for config_id, row in r[~r["is_reference"]].iterrows():
            twin = s.loc[config_id]
            values, ref_values = real.paired_values(metric, config_id, reference)
            rows.append({"contrast": row["label"], "metric": metric, "real": interval_text(row), "real_delta": row["delta"],
                         "real_lo": row["lo"], "real_hi": row["hi"], "real_p": row["p"],
                         "differences": paired_differences(values, ref_values),
                         "sim": interval_text(twin), "sim_delta": twin["delta"],
                         "sign_agrees": bool(np.sign(round(row["delta"], 12)) == np.sign(round(twin["delta"], 12)))})
    out = pd.DataFrame(rows)
    if out.empty:
        return pd.DataFrame(columns=COLUMNS)
    out["real_holm"] = holm(out["real_p"].to_list())
    out["real_shown"] = [holds("two-sided", p, lo, hi, alpha)
                         for p, lo, hi in zip(out["real_holm"], out["real_lo"], out["real_hi"], strict=True)]
    level = alpha / len(out)   # Holm's strictest step over the table: shown at that effect whatever the others show
    out["real_detectable"] = [
        "" if shown else detectable(d, direction="two-sided", alpha=level, value_range=value_range(m)).text
        for shown, d, m in zip(out["real_shown"], out["differences"], out["metric"], strict=True)]
    return out[COLUMNS]


def agreement_summary(table: pd.DataFrame) -> dict[str, int]:
    """How many contrasts agree in sign, in all and among those the real model shows."""
    shown = table[table["real_shown"]]
    return {"contrasts": len(table), "sign_agrees": int(table["sign_agrees"].sum()),
            "real_shown": len(shown), "shown_and_agrees": int(shown["sign_agrees"].sum())}
