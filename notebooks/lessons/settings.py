"""Each policy lesson's comparison, read from the sweep file that declares it once (``sweeps/lessons/``: the
lesson's world questions, base, simulated model, its two arms as the grid — the reference, then the candidate — and
the claims it states as ``findings:``). Notebooks 01–13 build their sweep and the arms of their claims from these
records, and the robustness table (:data:`~lessons.robustness.HEADLINE_FINDINGS`) re-runs each file's findings
from the same record — so a lesson's setting and claim cannot drift from its robustness row. The
``*_UNANSWERABLE`` records are a lesson's guard on the world's unanswerable test questions (every one), what the
robustness table's guard rows run there and on the real samples' unanswerable twins.

A notebook reads its record (``settings.ROUND_CAP.sweep("nb01_round_cap", grid)`` for its sweep,
``settings.ROUND_CAP.candidate`` / ``.reference`` for the arms it claims about); the robustness table turns the
record's findings into its cells (the world's questions of the record, the real samples, seeds 0 and 1)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.sweep import ClaimSpec
from rag_lab.experiments.engine.sweep_file import load_sweep_spec
from rag_lab.paths import SWEEPS_DIR

__all__ = ["BUDGET_DISCLOSURE", "BUDGET_THRIFT", "CITATION_CAP", "CITATION_PRICE", "CITATION_RULE_UNANSWERABLE",
           "CITATION_THRESHOLD", "CITATION_THRESHOLD_UNANSWERABLE", "CONTROLLER_VALIDATION", "CRAG", "CRAG_UNANSWERABLE",
           "HYDE", "JUDGE", "LESSON_SETTINGS", "LESSON_SWEEPS", "LessonSetting", "REWRITE", "ROUND_CAP",
           "ROUND_CAP_BRIDGE", "ROUTER", "SEARCH_BUDGET", "SOURCE_CONTRACT", "SOURCE_CONTRACT_PRICE",
           "SOURCE_CONTRACT_UNANSWERABLE", "TRUNCATION", "ZERO_YIELD", "ZERO_YIELD_UNANSWERABLE"]

#: The lessons' sweep files: ``<notebook>.yaml`` and ``<notebook>_<part>.yaml`` for a lesson's other comparisons.
LESSON_SWEEPS = SWEEPS_DIR / "lessons"


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
    #: the claims the lesson's sweep file states about this comparison (its ``findings:``, in order)
    findings: tuple[ClaimSpec, ...] = ()

    @classmethod
    def read(cls, notebook: str, part: str = "", folder: Path = LESSON_SWEEPS) -> LessonSetting:
        """The record of notebook ``notebook``'s comparison ``part`` (its main one when empty), from its sweep file
        ``<notebook>[_<part>].yaml`` in ``folder``: a grid of two arms of one value per setting, the reference
        first, on the world's test questions, with a base given as settings (not a config file)."""
        path = folder / (f"{notebook}_{part}.yaml" if part else f"{notebook}.yaml")
        spec = load_sweep_spec(path)
        arms = spec.grid if isinstance(spec.grid, list) else []
        if (len(arms) != 2 or not all(isinstance(v, list) and len(v) == 1 for arm in arms for v in arm.values())
                or not isinstance(spec.base, dict) or (spec.dataset, spec.split) != ("world", "test")):
            raise ConfigError(f"{path}: a lesson's sweep is its two arms (a grid of two dicts, one value per setting, "
                              "the reference first) on the world's test questions, over a base of settings")
        reference, candidate = ({k: v[0] for k, v in arm.items()} for arm in arms)
        return cls(notebook, candidate, reference, dict(spec.base), spec.backend.profile, dict(spec.backend.knobs),
                   tuple(spec.types) if spec.types is not None else None, spec.per_type, tuple(spec.findings))

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


#: 01: one round against two, on 10 test questions of each type; and (``bridge``) on every two-hop test question.
ROUND_CAP = LessonSetting.read("01_round_cap")
ROUND_CAP_BRIDGE = LessonSetting.read("01_round_cap", "bridge")
#: 02: the budget disclosed against hidden at a cap of 4, the anchored model; and the thrifty model.
BUDGET_DISCLOSURE = LessonSetting.read("02_budget_disclosure")
BUDGET_THRIFT = LessonSetting.read("02_budget_disclosure", "thrifty")
#: 03: the zero-yield stop on against off, a cap of 4, a controller that spins synonyms.
ZERO_YIELD = LessonSetting.read("03_zero_yield_stop")
#: 04: HyDE with 4 passages (and the question) against HyDE off, on the vocabulary-mismatch questions.
HYDE = LessonSetting.read("04_hyde")
#: 05: CRAG's lower threshold 0.5 against the default 0.2 (upper 0.5).
CRAG = LessonSetting.read("05_crag_thresholds")
#: 06: rank-then-truncate against append-then-truncate at a tight limit of 5 snippets, a cap of 3, two-hop questions.
TRUNCATION = LessonSetting.read("06_truncation")
#: 07: a 600-token search budget against none (no token and no time budget), a cap of 4, 15 test questions per type.
SEARCH_BUDGET = LessonSetting.read("07_search_budget")
#: 08: three rewrites fused by RRF (k 60) against no rewriting, on the aliased test questions.
REWRITE = LessonSetting.read("08_query_rewrite")
#: 09: the with-evidence judge against no judge, 20 test questions per type.
JUDGE = LessonSetting.read("09_judge_input")
#: 10: the router with the comparison upgrade against without, a router that under-rates every comparison, two
#: chunks a query, the 30 comparison test questions.
ROUTER = LessonSetting.read("10_router")
#: 11: a contract allowing only ``wiki`` documents, fail-open against fail-closed (the leak fail-open lets
#: through); and (``price``) fail-closed against fail-open (what closing costs).
SOURCE_CONTRACT = LessonSetting.read("11_source_contract")
SOURCE_CONTRACT_PRICE = LessonSetting.read("11_source_contract", "price")
#: 12: the deterministic fallback against refusing invalid controller output, the ideal model with format failures.
CONTROLLER_VALIDATION = LessonSetting.read("12_controller_validation")
#: 13: a citation-guard refusal threshold of 0.5 against 0.1 on 20 unanswerable test questions; (``price``) the same
#: thresholds on the answerable questions; (``cap``) a cap of one citation against ten.
CITATION_THRESHOLD = LessonSetting.read("13_citation_guard")
CITATION_PRICE = LessonSetting.read("13_citation_guard", "price")
CITATION_CAP = LessonSetting.read("13_citation_guard", "cap")

# --- the guards on unanswerable questions (the robustness table's guard rows; every unanswerable test question) ---
#: 13's rule for an answer left with no valid citation: refused (the default) against kept uncited.
CITATION_RULE_UNANSWERABLE = LessonSetting.read("13_citation_guard", "rule_unanswerable")
#: 13's threshold at 0.3 (a value of its grid) against the default 0.1.
CITATION_THRESHOLD_UNANSWERABLE = LessonSetting.read("13_citation_guard", "threshold_unanswerable")
#: 05's CRAG thresholds (lower 0.5 against 0.2).
CRAG_UNANSWERABLE = LessonSetting.read("05_crag_thresholds", "unanswerable")
#: 11's contract, fail-closed against fail-open.
SOURCE_CONTRACT_UNANSWERABLE = LessonSetting.read("11_source_contract", "unanswerable")
#: 03's zero-yield stop, on against off (a cap of 4, a spinning controller).
ZERO_YIELD_UNANSWERABLE = LessonSetting.read("03_zero_yield_stop", "unanswerable")

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
