"""Each headline lesson's comparison, declared once: notebooks 01–06 build their sweep and the arms of their
claims from these records, and the robustness table (:data:`~rag_lab.course.robustness.HEADLINE_FINDINGS`)
re-runs the same comparison from the same record — so a lesson's setting cannot drift from its robustness row.

A notebook reads its record (``settings.ROUND_CAP.sweep("nb01_round_cap", grid)`` for its sweep,
``settings.ROUND_CAP.candidate`` / ``.reference`` for the arms it claims about); the robustness table turns the
record into its cells (the world's questions of the record, the real samples, seeds 0 and 1)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["BUDGET_DISCLOSURE", "BUDGET_THRIFT", "CRAG", "HYDE", "LESSON_SETTINGS", "LessonSetting", "ROUND_CAP",
           "ROUND_CAP_BRIDGE", "TRUNCATION", "ZERO_YIELD"]


@dataclass(frozen=True)
class LessonSetting:
    """One lesson's headline comparison: ``candidate`` against ``reference`` (dotted pipeline settings over
    ``base``), the simulated model (``profile``, with the simulator knob overrides ``knobs``) and the world's test
    questions (``types``: every type when None; ``per_type`` of each: all when None), as notebook ``notebook``
    runs it."""

    notebook: str
    candidate: Mapping[str, Any]
    reference: Mapping[str, Any]
    base: Mapping[str, Any] = field(default_factory=dict)
    profile: str = "typical"
    knobs: Mapping[str, float] = field(default_factory=dict)
    types: tuple[str, ...] | None = None
    per_type: int | None = None

    def sweep(self, name: str, grid: Any) -> dict[str, Any]:
        """The notebook's sweep ``name`` over ``grid``: the world's test questions of this setting, its base and
        its simulated model.

        >>> spec = ZERO_YIELD.sweep("nb03_zero_yield", {"zero_yield.enabled": [True, False]})
        >>> spec["per_type"], spec["base"], spec["backend"]
        (10, {'round_cap.max_rounds': 4}, {'kind': 'sim', 'profile': 'typical', 'knobs': {'synonym_spinning': 0.6}})
        """
        spec: dict[str, Any] = {"name": name, "dataset": "world", "split": "test"}
        if self.types is not None:
            spec["types"] = list(self.types)
        if self.per_type is not None:
            spec["per_type"] = self.per_type
        if self.base:
            spec["base"] = dict(self.base)
        spec["backend"] = {"kind": "sim", "profile": self.profile, **({"knobs": dict(self.knobs)} if self.knobs else {})}
        spec["grid"] = grid
        return spec


#: 01: one round against two, on 10 test questions of each type.
ROUND_CAP = LessonSetting("01_round_cap", {"round_cap.max_rounds": 1}, {"round_cap.max_rounds": 2}, per_type=10)
#: 01's second claim: the same caps on every two-hop (bridge) test question.
ROUND_CAP_BRIDGE = replace(ROUND_CAP, types=("bridge",), per_type=None)
#: 02: the budget disclosed against hidden at a cap of 4, the anchored model.
BUDGET_DISCLOSURE = LessonSetting("02_budget_disclosure", {"disclosure.disclosed": True, "round_cap.max_rounds": 4},
                                  {"disclosure.disclosed": False, "round_cap.max_rounds": 4}, profile="anchored",
                                  per_type=10)
#: 02: the same, the thrifty model.
BUDGET_THRIFT = replace(BUDGET_DISCLOSURE, profile="thrifty")
#: 03: the zero-yield stop on against off, a cap of 4, a controller that spins synonyms.
ZERO_YIELD = LessonSetting("03_zero_yield_stop", {"zero_yield.enabled": True}, {"zero_yield.enabled": False},
                           base={"round_cap.max_rounds": 4}, knobs={"synonym_spinning": 0.6}, per_type=10)
#: 04: HyDE with 4 passages (and the question) against HyDE off, on the vocabulary-mismatch questions.
HYDE = LessonSetting("04_hyde", {"hyde.enabled": True, "hyde.n_docs": 4, "hyde.include_query": True},
                     {"hyde.enabled": False}, types=("mismatch",))
#: 05: CRAG's lower threshold 0.5 against the default 0.2 (upper 0.5).
CRAG = LessonSetting("05_crag_thresholds", {"crag.lower": 0.5, "crag.upper": 0.5}, {"crag.lower": 0.2, "crag.upper": 0.5},
                     per_type=10)
#: 06: rank-then-truncate against append-then-truncate at a tight limit of 5 snippets, a cap of 3, two-hop questions.
TRUNCATION = LessonSetting("06_truncation", {"truncation.strategy": "rank_then_truncate", "truncation.max_snippets": 5},
                           {"truncation.strategy": "append_then_truncate", "truncation.max_snippets": 5},
                           base={"round_cap.max_rounds": 3}, types=("bridge", "comparison"))

#: Every record, by name.
LESSON_SETTINGS: dict[str, LessonSetting] = {
    "ROUND_CAP": ROUND_CAP, "ROUND_CAP_BRIDGE": ROUND_CAP_BRIDGE, "BUDGET_DISCLOSURE": BUDGET_DISCLOSURE,
    "BUDGET_THRIFT": BUDGET_THRIFT, "ZERO_YIELD": ZERO_YIELD, "HYDE": HYDE, "CRAG": CRAG, "TRUNCATION": TRUNCATION}
