"""Figures of runs and sweeps, each split Optuna-style into plain data (``*_info``, what tests compare)
and a plotly figure built from it (``*_figure``): cost vs quality with the Pareto front, rounds used by
question type, the per-round yield curve, the CRAG threshold heat-map, truncation retention, one
question's trace timeline, the forest plot of paired differences against a reference, simulated vs
real means of verified candidates (``rag-lab verify``), where each headline finding holds (the robustness
grid), risk against coverage of a refusal threshold, and the right answers each guardrail loses against the
wrong ones it prevents. Every info is a :class:`typing.NamedTuple`; a figure is ``<name>_figure(<name>_info(data))``."""

from rag_lab.figures.cost_quality import CostQualityInfo, cost_quality_figure, cost_quality_info
from rag_lab.figures.crag_heatmap import CragHeatmapInfo, crag_heatmap_figure, crag_heatmap_info
from rag_lab.figures.forest import ForestInfo, forest_figure, forest_info
from rag_lab.figures.guard_tradeoff import GuardTradeoffInfo, guard_tradeoff_figure, guard_tradeoff_info
from rag_lab.figures.risk_coverage import RiskCoverageCurve, RiskCoverageInfo, risk_coverage_figure, risk_coverage_info
from rag_lab.figures.round_yield import RoundYieldInfo, round_yield_figure, round_yield_info
from rag_lab.figures.rounds_histogram import RoundsHistogramInfo, rounds_histogram_figure, rounds_histogram_info
from rag_lab.figures.sim_vs_real import SimVsRealInfo, sim_vs_real_figure, sim_vs_real_info
from rag_lab.figures.trace_timeline import TimelineStep, TraceTimelineInfo, trace_timeline_figure, trace_timeline_info
from rag_lab.figures.truncation_retention import TruncationRetentionInfo, truncation_retention_figure, truncation_retention_info
from rag_lab.figures.where_grid import WhereGridInfo, where_grid_figure, where_grid_info

__all__ = [
    "CostQualityInfo", "CragHeatmapInfo", "ForestInfo", "GuardTradeoffInfo", "RiskCoverageCurve", "RiskCoverageInfo",
    "RoundYieldInfo", "RoundsHistogramInfo", "SimVsRealInfo", "TimelineStep",
    "TraceTimelineInfo", "TruncationRetentionInfo", "cost_quality_figure", "cost_quality_info",
    "crag_heatmap_figure", "crag_heatmap_info", "forest_figure", "forest_info", "guard_tradeoff_figure",
    "guard_tradeoff_info", "risk_coverage_figure", "risk_coverage_info", "round_yield_figure", "round_yield_info",
    "rounds_histogram_figure", "rounds_histogram_info", "sim_vs_real_figure", "sim_vs_real_info",
    "trace_timeline_figure", "trace_timeline_info",
    "truncation_retention_figure", "truncation_retention_info", "WhereGridInfo", "where_grid_figure", "where_grid_info"]
