"""Notebook 02's own code (budget disclosure): which simulator knobs fired under each configuration."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from rag_lab.experiments.engine.results import SweepResult

__all__ = ["knob_table"]


def knob_table(result: SweepResult, names: Mapping[str, str], knobs: Iterable[str] | None = None) -> pd.DataFrame:
    """:meth:`SweepResult.knob_rates` of each named configuration (one block of rows per name), only the
    ``knobs`` given (all when None)."""
    wanted = set(knobs) if knobs is not None else None
    out = pd.concat({name: result.knob_rates(cid) for name, cid in names.items()})
    return out[out["knob"].isin(wanted)] if wanted is not None else out
