"""Experiments: sweeps over policy parameters that persist, resume and scale out, their statistics
(bootstrap CIs, mean ± std over seeds, Pareto fronts, paired exact/permutation tests, Holm, TOST) and HTML
reports (docs/design.md §5–6); the figures
are in :mod:`rag_lab.figures`. Simulator profiles fitted to a real run's traces:
:mod:`rag_lab.experiments.calibrate`; a simulated sweep's winners re-run on a real backend:
:mod:`rag_lab.experiments.verify`."""

from rag_lab.experiments.findings import Finding, FindingFamily, paired_finding
from rag_lab.experiments.grid import Grid, GridCandidate, config_id
from rag_lab.experiments.results import CandidateTraces, SweepResult
from rag_lab.experiments.runner import load_sweep, run_sweep
from rag_lab.experiments.store import RunStore
from rag_lab.experiments.sweep import BackendSpec, SweepSpec, candidate_id, load_sweep_spec
from rag_lab.stats.significance import EquivalenceTest, PairedTest, equivalence_test, holm, paired_test
from rag_lab.stats.summary import aggregate_by_type, aggregate_rows, bootstrap_ci, mean_std_over_seeds, pareto_mask

__all__ = [
    "BackendSpec", "CandidateTraces", "EquivalenceTest", "Finding", "FindingFamily", "Grid", "GridCandidate",
    "PairedTest", "RunStore",
    "SweepResult", "SweepSpec", "aggregate_by_type", "aggregate_rows", "bootstrap_ci", "candidate_id", "config_id",
    "equivalence_test", "holm", "load_sweep", "load_sweep_spec", "mean_std_over_seeds", "paired_finding", "paired_test",
    "pareto_mask", "run_sweep",
]
