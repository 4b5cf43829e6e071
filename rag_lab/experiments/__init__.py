"""Experiments, in three subpackages by concern: the sweep engine (:mod:`rag_lab.experiments.engine`: sweeps over
policy parameters that persist, resume and scale out, their result tables and claims), search and racing
(:mod:`rag_lab.experiments.tuning`) and the simulator against a real model (:mod:`rag_lab.experiments.calibration`:
calibrated simulator profiles, a simulated sweep's winners verified on a real backend). The statistics (bootstrap
CIs, mean ± std over seeds, Pareto fronts, paired exact/permutation tests, Holm, TOST) are in :mod:`rag_lab.stats`,
the figures in :mod:`rag_lab.figures` (docs/design.md §5–6). The names below are the engine's front door (and a few
of the statistics), imported when first used (``lazy_loader``): reading a sweep file does not load pandas and scipy."""

from typing import TYPE_CHECKING, Any

import lazy_loader

if TYPE_CHECKING:
    from rag_lab.experiments.engine.findings import Finding, FindingFamily, paired_finding
    from rag_lab.experiments.engine.grid import Grid, GridCandidate, config_id
    from rag_lab.experiments.engine.resolved_sweep import candidate_id
    from rag_lab.experiments.engine.results import CandidateTraces, SweepResult
    from rag_lab.experiments.engine.store import RunStore
    from rag_lab.experiments.engine.sweep import BackendSpec, SweepSpec
    from rag_lab.experiments.engine.sweep_file import load_sweep_spec
    from rag_lab.experiments.sweep_runner import load_sweep, run_sweep
    from rag_lab.stats.significance import EquivalenceTest, PairedTest, equivalence_test, holm, paired_test
    from rag_lab.stats.summary import aggregate_by_type, aggregate_rows, bootstrap_ci, mean_std_over_seeds, pareto_mask

_engine_attr, _, _ = lazy_loader.attach(__name__, submod_attrs={
    "engine.findings": ["Finding", "FindingFamily", "paired_finding"],
    "engine.grid": ["Grid", "GridCandidate", "config_id"],
    "engine.results": ["CandidateTraces", "SweepResult"],
    "engine.store": ["RunStore"],
    "engine.sweep": ["BackendSpec", "SweepSpec"],
    "engine.sweep_file": ["load_sweep_spec"],
    "engine.resolved_sweep": ["candidate_id"],
    "sweep_runner": ["load_sweep", "run_sweep"],
})
# lazy_loader imports below the package it is attached to only; the statistics live in a package beside it
_stats_attr, _, _stats_names = lazy_loader.attach("rag_lab.stats", submod_attrs={
    "significance": ["EquivalenceTest", "PairedTest", "equivalence_test", "holm", "paired_test"],
    "summary": ["aggregate_by_type", "aggregate_rows", "bootstrap_ci", "mean_std_over_seeds", "pareto_mask"],
})
__all__ = [
    "BackendSpec", "CandidateTraces", "EquivalenceTest", "Finding", "FindingFamily", "Grid", "GridCandidate",
    "PairedTest", "RunStore",
    "SweepResult", "SweepSpec", "aggregate_by_type", "aggregate_rows", "bootstrap_ci", "candidate_id", "config_id",
    "equivalence_test", "holm", "load_sweep", "load_sweep_spec", "mean_std_over_seeds", "paired_finding", "paired_test",
    "pareto_mask", "run_sweep",
]


def __getattr__(name: str) -> Any:
    """The re-exported ``name``, imported from its module on first use and then kept on the package."""
    value = (_stats_attr if name in _stats_names else _engine_attr)(name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
