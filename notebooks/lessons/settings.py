"""Each policy lesson's comparison, declared once: notebooks 01–13 build their sweep and the arms of their
claims from these records, and the robustness table (:data:`~lessons.robustness.HEADLINE_FINDINGS`)
re-runs the same comparison from the same record — so a lesson's setting cannot drift from its robustness row.
The ``*_UNANSWERABLE`` records are a lesson's guard on the world's unanswerable test questions (every one), what
the robustness table's guard rows run there and on the real samples' unanswerable twins.

A notebook reads its record (``settings.ROUND_CAP.sweep("nb01_round_cap", grid)`` for its sweep,
``settings.ROUND_CAP.candidate`` / ``.reference`` for the arms it claims about); the robustness table turns the
record into its cells (the world's questions of the record, the real samples, seeds 0 and 1)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["ANSWERABLE_TYPES", "BUDGET_DISCLOSURE", "BUDGET_THRIFT", "CITATION_CAP", "CITATION_PRICE",
           "CITATION_RULE_UNANSWERABLE", "CITATION_THRESHOLD", "CITATION_THRESHOLD_UNANSWERABLE", "CONTROLLER_VALIDATION", "CRAG",
           "CRAG_UNANSWERABLE", "HYDE", "JUDGE", "LESSON_SETTINGS", "LessonSetting", "REWRITE", "ROUND_CAP",
           "ROUND_CAP_BRIDGE", "ROUTER", "SEARCH_BUDGET", "SOURCE_CONTRACT", "SOURCE_CONTRACT_PRICE",
           "SOURCE_CONTRACT_UNANSWERABLE", "TRUNCATION", "ZERO_YIELD", "ZERO_YIELD_UNANSWERABLE"]


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

#: 07: a 600-token search budget against none (no token and no time budget), a cap of 4, 15 test questions per type.
SEARCH_BUDGET = LessonSetting("07_search_budget", {"budget.max_tokens": 600},
                              {"budget.max_tokens": None, "budget.max_time_ms": None}, base={"round_cap.max_rounds": 4},
                              per_type=15)
#: 08: three rewrites fused by RRF (k 60) against no rewriting, on the aliased test questions.
REWRITE = LessonSetting("08_query_rewrite", {"rewrite.enabled": True, "rewrite.n_rewrites": 3, "rewrite.k_rrf": 60},
                        {"rewrite.enabled": False}, types=("alias",))
#: 09: the with-evidence judge against no judge, 20 test questions per type.
JUDGE = LessonSetting("09_judge_input", {"judge.enabled": True, "judge.mode": "with_evidence"}, {"judge.enabled": False},
                      per_type=20)
#: 10: the router with the comparison upgrade against without, a router that under-rates every comparison
#: (``comparison_underrate`` 1.0), two chunks a query, the 30 comparison test questions.
ROUTER = LessonSetting("10_router", {"router.enabled": True, "router.comparison_upgrade": True},
                       {"router.enabled": True, "router.comparison_upgrade": False}, base={"retrieval.top_k": 2},
                       knobs={"comparison_underrate": 1.0}, types=("comparison",), per_type=30)
#: 11: a contract allowing only ``wiki`` documents, fail-open against fail-closed, 8 test questions per type (the
#: leak fail-open lets through).
SOURCE_CONTRACT = LessonSetting("11_source_contract", {"sources.simple": ["wiki"], "sources.mode": "fail_open"},
                                {"sources.simple": ["wiki"], "sources.mode": "fail_closed"},
                                base={"sources.simple": ["wiki"], "sources.complex": ["wiki"]}, per_type=8)
#: 11's second claim: the same contract fail-closed against fail-open (what closing costs).
SOURCE_CONTRACT_PRICE = replace(SOURCE_CONTRACT, candidate=SOURCE_CONTRACT.reference,
                                reference=SOURCE_CONTRACT.candidate)
#: 12: the deterministic fallback against refusing invalid controller output, the ideal model with format failures.
CONTROLLER_VALIDATION = LessonSetting("12_controller_validation", {"validation.on_invalid": "fallback"},
                                      {"validation.on_invalid": "refuse"}, profile="ideal",
                                      knobs={"invalid_json": 0.1, "hallucinated_action": 0.1, "wrong_types": 0.1},
                                      per_type=8)
#: 13: a citation-guard refusal threshold of 0.5 against 0.1, on 20 unanswerable test questions.
CITATION_THRESHOLD = LessonSetting("13_citation_guard", {"citations.refusal_threshold": 0.5},
                                   {"citations.refusal_threshold": 0.1}, types=("unanswerable",), per_type=20)
#: 13's answerable questions: 8 test questions of each answerable type.
ANSWERABLE_TYPES = ("single", "bridge", "comparison", "mismatch", "alias", "vague", "stale")
#: 13's second claim: the same thresholds (at a cap of 10 citations) on the answerable questions.
CITATION_PRICE = LessonSetting("13_citation_guard", {"citations.refusal_threshold": 0.5, "citations.max_citations": 10},
                               {"citations.refusal_threshold": 0.1, "citations.max_citations": 10},
                               types=ANSWERABLE_TYPES, per_type=8)
#: 13's third claim: a cap of one citation against ten (threshold 0.1) on the answerable questions.
CITATION_CAP = replace(CITATION_PRICE, candidate={"citations.max_citations": 1, "citations.refusal_threshold": 0.1},
                       reference={"citations.max_citations": 10, "citations.refusal_threshold": 0.1})

# --- the guards on unanswerable questions (the robustness table's guard rows) ------------------------------------
_UNANSWERABLE = {"types": ("unanswerable",), "per_type": None}
#: 13's rule for an answer left with no valid citation: refused (the default) against kept uncited.
CITATION_RULE_UNANSWERABLE = LessonSetting("13_citation_guard", {"citations.require_citation": True},
                                           {"citations.require_citation": False}, **_UNANSWERABLE)
#: 13's threshold at 0.3 (a value of its grid) against the default 0.1.
CITATION_THRESHOLD_UNANSWERABLE = replace(CITATION_THRESHOLD, candidate={"citations.refusal_threshold": 0.3},
                                          **_UNANSWERABLE)
#: 05's CRAG thresholds (lower 0.5 against 0.2).
CRAG_UNANSWERABLE = replace(CRAG, **_UNANSWERABLE)
#: 11's contract, fail-closed against fail-open.
SOURCE_CONTRACT_UNANSWERABLE = replace(SOURCE_CONTRACT_PRICE, **_UNANSWERABLE)
#: 03's zero-yield stop, on against off (a cap of 4, a spinning controller).
ZERO_YIELD_UNANSWERABLE = replace(ZERO_YIELD, **_UNANSWERABLE)

#: Every record, by name.
LESSON_SETTINGS: dict[str, LessonSetting] = {
    "ROUND_CAP": ROUND_CAP, "ROUND_CAP_BRIDGE": ROUND_CAP_BRIDGE, "BUDGET_DISCLOSURE": BUDGET_DISCLOSURE,
    "BUDGET_THRIFT": BUDGET_THRIFT, "ZERO_YIELD": ZERO_YIELD, "HYDE": HYDE, "CRAG": CRAG, "TRUNCATION": TRUNCATION,
    "SEARCH_BUDGET": SEARCH_BUDGET, "REWRITE": REWRITE, "JUDGE": JUDGE, "ROUTER": ROUTER,
    "SOURCE_CONTRACT": SOURCE_CONTRACT, "SOURCE_CONTRACT_PRICE": SOURCE_CONTRACT_PRICE,
    "CONTROLLER_VALIDATION": CONTROLLER_VALIDATION, "CITATION_THRESHOLD": CITATION_THRESHOLD,
    "CITATION_PRICE": CITATION_PRICE, "CITATION_CAP": CITATION_CAP,
    "CITATION_RULE_UNANSWERABLE": CITATION_RULE_UNANSWERABLE,
    "CITATION_THRESHOLD_UNANSWERABLE": CITATION_THRESHOLD_UNANSWERABLE, "CRAG_UNANSWERABLE": CRAG_UNANSWERABLE,
    "SOURCE_CONTRACT_UNANSWERABLE": SOURCE_CONTRACT_UNANSWERABLE, "ZERO_YIELD_UNANSWERABLE": ZERO_YIELD_UNANSWERABLE}
