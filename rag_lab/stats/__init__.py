"""The statistics, shared by experiments and figures (a leaf: it imports no other layer): summaries with
bootstrap intervals, mean ± std over seeds and Pareto fronts (:mod:`~rag_lab.stats.summary`), paired
differences on the same questions (:mod:`~rag_lab.stats.paired`), paired significance tests, Holm and
TOST (:mod:`~rag_lab.stats.significance`), rank agreement (:mod:`~rag_lab.stats.rank`), and risk–coverage of a
refusal threshold (:mod:`~rag_lab.stats.selective`)."""

from rag_lab.stats.paired import PairedDifference, paired_difference, paired_means
from rag_lab.stats.rank import kendall_tau, rank_agreement
from rag_lab.stats.selective import RiskCoverage, risk_coverage
from rag_lab.stats.significance import EquivalenceTest, PairedTest, equivalence_test, holm, p_text, paired_test
from rag_lab.stats.summary import add_pareto, aggregate_by_type, aggregate_rows, bootstrap_ci, mean_std_over_seeds, pareto_mask

__all__ = [
    "EquivalenceTest", "PairedDifference", "PairedTest", "RiskCoverage", "add_pareto", "aggregate_by_type", "aggregate_rows",
    "bootstrap_ci", "equivalence_test", "holm", "kendall_tau", "mean_std_over_seeds",
    "p_text", "paired_difference", "paired_means", "paired_test", "pareto_mask", "rank_agreement", "risk_coverage",
]
