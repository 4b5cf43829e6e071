"""Helpers shared by the figures: input checks, missing values, value formatting and hover escaping."""

from __future__ import annotations

import contextlib
import html
import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rag_lab.errors import ConfigError
from rag_lab.evaluation.families import PARAM_PREFIX

#: Group label of rows whose grouping value is missing (e.g. a parameter a conditional grid left unset).
UNSET = "(unset)"


def is_missing(value: Any) -> bool:
    """None, ``pd.NA`` or a float NaN."""
    return value is None or value is pd.NA or (isinstance(value, (float, np.floating)) and math.isnan(value))


def format_value(value: Any) -> str:
    """A table or hover cell: integers without decimals, other numbers to 4 significant digits, '–' if missing."""
    if is_missing(value):
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:.4g}"
    return str(value)


def as_frame(data: pd.DataFrame | Sequence[Mapping[str, Any]], what: str) -> pd.DataFrame:
    """``data`` as a DataFrame: a DataFrame as is, or a sequence of row mappings."""
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)) and all(isinstance(r, Mapping) for r in data):
        return pd.DataFrame(list(data))
    raise ConfigError(f"expected the {what} as a pandas DataFrame or a sequence of mappings, got {type(data).__name__}")


def require_columns(table: pd.DataFrame, cols: Iterable[str], what: str) -> None:
    """Raise a ValueError naming every column of ``cols`` that ``table`` lacks."""
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise ConfigError(f"no column(s) {missing} in the {what} (columns: {list(table.columns)})")


def numeric(table: pd.DataFrame, col: str) -> np.ndarray:
    """Column ``col`` as a float array, missing values as NaN."""
    try:
        return pd.to_numeric(table[col]).to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"column {col!r} must be numeric: {exc}") from exc


def axis_values(keys: Sequence[Hashable]) -> tuple:
    """The distinct non-missing ``keys``, sorted (in first-appearance order when unorderable)."""
    values = list(dict.fromkeys(k.item() if isinstance(k, np.generic) else k for k in keys if not is_missing(k)))
    with contextlib.suppress(TypeError):  # unorderable values keep their first-appearance order
        values = sorted(values)
    return tuple(values)


def group_names(values: Sequence[Any]) -> tuple[str, ...]:
    """Distinct formatted values in natural order (:func:`axis_values`: numbers numerically; first appearance if
    unorderable), :data:`UNSET` last when any value is missing."""
    names = list(dict.fromkeys(format_value(v) for v in axis_values(values)))
    return (*names, UNSET) if any(is_missing(v) for v in values) else tuple(names)


def group_label(value: Any) -> str:
    """The group name of one value (see :func:`group_names`)."""
    return UNSET if is_missing(value) else format_value(value)


def hover(text: str) -> str:
    """Plain text made safe for plotly hover labels: HTML-escaped, newlines as ``<br>``."""
    return "<br>".join(html.escape(line) for line in text.split("\n"))


def frozen(array: np.ndarray) -> np.ndarray:
    """``array`` made read-only, for the grids kept in frozen info objects."""
    array.setflags(write=False)
    return array


def short(col: str) -> str:
    """A column name for titles and legends: ``param_`` prefix removed."""
    return col.removeprefix(PARAM_PREFIX)


def point_texts(x: Sequence[float], y: Sequence[float], texts: Sequence[str]) -> list[str]:
    """The text drawn next to each point: points drawn at the same place show one text, the first one's
    with ``(+k same)`` appended, and the others none (their hover still names each of them)."""
    points = list(zip(x, y, strict=True))
    counts = Counter(points)
    return [texts[i] + (f" (+{counts[p] - 1} same)" if counts[p] > 1 else "") if points.index(p) == i else ""
            for i, p in enumerate(points)]
