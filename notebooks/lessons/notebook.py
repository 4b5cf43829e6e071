"""The one setup call of a course notebook and the sweep it runs: pandas display options for wide tables
(and the policy's fields), a sweep run quietly into a fresh temporary directory named after the sweep (a
notebook's sweeps are throw-away; the simulator's response cache keeps re-runs fast; a replay goes to
``$RAG_LAB_REPLAYS`` when that is set), and a table of how validation treats sample structured outputs."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from rag_lab.errors import ConfigError
from rag_lab.experiments import SweepResult, SweepSpec, load_sweep_spec, run_sweep
from rag_lab.experiments.engine.results import DEFAULT_PARETO
from rag_lab.experiments.engine.run_lock import WaitingForWriter
from rag_lab.llm.structured import validate_output

#: A folder where the replays of recorded sweeps are kept, one run directory per sweep (its name and a digest of the
#: sweep), and resumed by the next replay of the same sweep, in this process or another (which waits for a replay
#: under way). Unset, each replay goes to a fresh temporary directory. The test session sets it to a folder of its own
#: (tests/conftest.py), so that the tests and the notebooks that replay one recording read one replay.
REPLAYS_ENV = "RAG_LAB_REPLAYS"


def setup_notebook(policy: type[BaseModel] | None = None, colwidth: int = 90) -> pd.DataFrame | None:
    """Show wide tables whole (200 characters a line, 20 columns, ``colwidth`` characters a cell); with a
    ``policy`` class, print its docstring and return its fields (:func:`policy_fields`) to display."""
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 20)
    pd.set_option("display.max_colwidth", colwidth)
    if policy is None:
        return None
    print(inspect.cleandoc(policy.__doc__ or policy.__name__))
    return policy_fields(policy)


def policy_fields(policy: type[BaseModel]) -> pd.DataFrame:
    """One row per field of a policy class: its type, default and bounds (``ge``/``le``/... constraints)."""
    rows = []
    for name, info in policy.model_fields.items():
        bounds = ", ".join(f"{sym} {getattr(m, attr)}" for m in info.metadata
                           for attr, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")) if hasattr(m, attr))
        rows.append({"field": name, "type": getattr(info.annotation, "__name__", None) or str(info.annotation),
                     "default": info.get_default(call_default_factory=True), "bounds": bounds,
                     "description": info.description or ""})
    return pd.DataFrame(rows).set_index("field")


def lesson_sweep(spec: Mapping[str, Any] | SweepSpec | str | Path, pareto: tuple[str, str] = DEFAULT_PARETO,
                 replay: bool = False, **changes: Any) -> SweepResult:
    """Run ``spec`` (a mapping, with ``changes`` applied on top, e.g. ``name=..., grid=...``; or a sweep file
    or :class:`SweepSpec`, as is) quietly into a new temporary directory and return its results.
    ``replay``: answer from the backend's cassette alone (a recorded real-model sweep, offline, in seconds), into
    ``$RAG_LAB_REPLAYS`` when that is set (:data:`REPLAYS_ENV`)."""
    if isinstance(spec, Mapping):
        spec = {**spec, **changes}
        name = spec.get("name", "sweep")
    elif changes:
        raise ConfigError(f"changes {sorted(changes)} need the spec as a mapping, not {type(spec).__name__}")
    else:
        spec = load_sweep_spec(spec)
        name = spec.name
    shared = os.environ.get(REPLAYS_ENV) if replay else None
    if not shared:
        return run_sweep(spec, tempfile.mkdtemp(prefix=f"{name}_"), progress="quiet", pareto=pareto, replay=replay)
    plain = spec.model_dump(mode="json") if isinstance(spec, SweepSpec) else spec
    digest = hashlib.sha256(json.dumps(plain, sort_keys=True, default=str).encode()).hexdigest()[:16]
    with warnings.catch_warnings():   # another process replaying it is no news: this one reads its replay after it
        warnings.simplefilter("ignore", WaitingForWriter)
        return run_sweep(spec, Path(shared) / f"{name}-{digest}", progress="quiet", pareto=pareto, replay=True,
                         wait=True)


def validation_table(samples: Mapping[str, str], schema: type[BaseModel], fallback: BaseModel | None = None) -> pd.DataFrame:
    """How structured-output validation treats each sample output (name → raw text): the outcome, the
    decision it yields and why, with ``fallback`` and without one."""
    rows = []
    for name, text in samples.items():
        with_fb, without = validate_output(text, schema, fallback), validate_output(text, schema)
        rows.append({"output": name, "outcome": with_fb.outcome, "decision": _action(with_fb.parsed),
                     "why": with_fb.reason, "without a fallback": without.outcome})
    return pd.DataFrame(rows).set_index("output")


def _action(parsed: BaseModel | None) -> Any:
    return getattr(parsed, "action", parsed) if parsed is not None else None
