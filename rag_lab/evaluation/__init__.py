"""Evaluation of full pipeline runs: answer matching, per-question metrics, summaries."""

from rag_lab.evaluation.answers import contains, contains_strict, exact_match, f1, normalize_answer
from rag_lab.evaluation.catalog import label
from rag_lab.evaluation.question_metrics import question_metrics
from rag_lab.evaluation.runner import EvalRun, EvaluationCancelled, evaluate_pipeline, summarize
from rag_lab.evaluation.trace_facts import steps_table

__all__ = ["EvalRun", "EvaluationCancelled", "contains", "contains_strict", "evaluate_pipeline", "exact_match", "f1",
           "label", "normalize_answer", "question_metrics", "steps_table", "summarize"]
