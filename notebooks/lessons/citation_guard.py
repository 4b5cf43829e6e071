"""Notebook 13's own code (the citation guard): the question with the largest value."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from rag_lab.errors import ConfigError

__all__ = ["top_question"]


def top_question(values: pd.Series, among: Iterable[str] | None = None) -> str:
    """The question with the largest value (of those in ``among``, when given and not empty; the first in
    question order on a tie)."""
    among = list(among) if among is not None else []
    picked = values.loc[among] if among else values
    if picked.empty:
        raise ConfigError("top_question needs at least one question")
    return str(picked.astype(float).idxmax())
