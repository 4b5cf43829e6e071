"""Evaluation of full pipeline runs: answer matching, per-question metrics, summaries."""

from rag_lab.evaluation.answers import contains, contains_strict, exact_match, f1, normalize_answer
from rag_lab.evaluation.question_metrics import question_metrics
from rag_lab.evaluation.runner import EvalRun, EvaluationCancelled, evaluate_pipeline, summarize

__all__ = ["EvalRun", "EvaluationCancelled", "contains", "contains_strict", "evaluate_pipeline", "exact_match", "f1",
           "normalize_answer", "question_metrics", "summarize"]
