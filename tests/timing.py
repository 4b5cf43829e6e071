"""How long a test may wait on this machine: the seconds it would wait on an idle one, scaled by the factor
``tests/conftest.py`` sets for the session from the load already running (``RAG_LAB_TIMEOUT_FACTOR``)."""

from __future__ import annotations

import os


def scaled(seconds: float) -> float:
    """``seconds`` times the session's load factor (1 on an idle machine)."""
    return seconds * float(os.environ.get("RAG_LAB_TIMEOUT_FACTOR", "1"))
