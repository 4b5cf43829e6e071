"""Evaluation of full pipeline runs: answer matching, per-question metrics, summaries. The names below are
imported when first used (:mod:`rag_lab.lazy`): the metric catalog alone does not load pandas."""

from typing import TYPE_CHECKING

from rag_lab.lazy import lazy_exports

if TYPE_CHECKING:
    from rag_lab.evaluation.answers import contains, contains_strict, exact_match, f1, normalize_answer
    from rag_lab.evaluation.catalog import label
    from rag_lab.evaluation.eval_run import EvalRun, EvaluationCancelled, evaluate_pipeline, summarize
    from rag_lab.evaluation.question_metrics import question_metrics
    from rag_lab.evaluation.trace_facts import steps_table

__getattr__, __dir__ = lazy_exports(globals(), {
    **dict.fromkeys(["contains", "contains_strict", "exact_match", "f1", "normalize_answer"],
                    "rag_lab.evaluation.answers"),
    "label": "rag_lab.evaluation.catalog",
    "question_metrics": "rag_lab.evaluation.question_metrics",
    **dict.fromkeys(["EvalRun", "EvaluationCancelled", "evaluate_pipeline", "summarize"], "rag_lab.evaluation.eval_run"),
    "steps_table": "rag_lab.evaluation.trace_facts",
})

__all__ = ["EvalRun", "EvaluationCancelled", "contains", "contains_strict", "evaluate_pipeline", "exact_match", "f1",
           "label", "normalize_answer", "question_metrics", "steps_table", "summarize"]
