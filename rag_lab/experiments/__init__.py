"""Experiments, in three subpackages by concern: the sweep engine (:mod:`rag_lab.experiments.engine`: sweeps over
policy parameters that persist, resume and scale out, their result tables and claims), search and racing
(:mod:`rag_lab.experiments.tuning`) and the simulator against a real model (:mod:`rag_lab.experiments.calibration`:
calibrated simulator profiles, a simulated sweep's winners verified on a real backend). The statistics (bootstrap
CIs, mean ± std over seeds, Pareto fronts, paired exact/permutation tests, Holm, TOST) are in :mod:`rag_lab.stats`,
the figures in :mod:`rag_lab.figures` (docs/design.md §5–6). The names below are the engine's front door,
imported when first used (:mod:`rag_lab.lazy`): reading a sweep file does not load pandas and scipy."""

from typing import TYPE_CHECKING

from rag_lab.lazy import lazy_exports

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

__getattr__, __dir__ = lazy_exports(globals(), {
    **dict.fromkeys(["Finding", "FindingFamily", "paired_finding"], "rag_lab.experiments.engine.findings"),
    **dict.fromkeys(["Grid", "GridCandidate", "config_id"], "rag_lab.experiments.engine.grid"),
    **dict.fromkeys(["CandidateTraces", "SweepResult"], "rag_lab.experiments.engine.results"),
    "RunStore": "rag_lab.experiments.engine.store",
    **dict.fromkeys(["BackendSpec", "SweepSpec"], "rag_lab.experiments.engine.sweep"),
    "load_sweep_spec": "rag_lab.experiments.engine.sweep_file",
    "candidate_id": "rag_lab.experiments.engine.resolved_sweep",
    **dict.fromkeys(["load_sweep", "run_sweep"], "rag_lab.experiments.sweep_runner"),
    **dict.fromkeys(["EquivalenceTest", "PairedTest", "equivalence_test", "holm", "paired_test"],
                    "rag_lab.stats.significance"),
    **dict.fromkeys(["aggregate_by_type", "aggregate_rows", "bootstrap_ci", "mean_std_over_seeds", "pareto_mask"],
                    "rag_lab.stats.summary"),
})

__all__ = [
    "BackendSpec", "CandidateTraces", "EquivalenceTest", "Finding", "FindingFamily", "Grid", "GridCandidate",
    "PairedTest", "RunStore",
    "SweepResult", "SweepSpec", "aggregate_by_type", "aggregate_rows", "bootstrap_ci", "candidate_id", "config_id",
    "equivalence_test", "holm", "load_sweep", "load_sweep_spec", "mean_std_over_seeds", "paired_finding", "paired_test",
    "pareto_mask", "run_sweep",
]
