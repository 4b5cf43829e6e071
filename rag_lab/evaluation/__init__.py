"""Evaluation of full pipeline runs: answer matching, per-question metrics, summaries. The names below are
imported when first used (``lazy_loader``): the metric catalog alone does not load pandas."""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from rag_lab.evaluation.answers import contains, contains_strict, exact_match, f1, normalize_answer
    from rag_lab.evaluation.catalog import label
    from rag_lab.evaluation.eval_run import EvalRun, EvaluationCancelled, evaluate_pipeline, summarize
    from rag_lab.evaluation.metric_table import question_metrics
    from rag_lab.evaluation.trace_facts import steps_table

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "answers": ["contains", "contains_strict", "exact_match", "f1", "normalize_answer"],
    "catalog": ["label"],
    "metric_table": ["question_metrics"],
    "eval_run": ["EvalRun", "EvaluationCancelled", "evaluate_pipeline", "summarize"],
    "trace_facts": ["steps_table"],
})

__all__ = ["EvalRun", "EvaluationCancelled", "contains", "contains_strict", "evaluate_pipeline", "exact_match", "f1",
           "label", "normalize_answer", "question_metrics", "steps_table", "summarize"]
