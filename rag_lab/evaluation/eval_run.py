"""Run the full pipeline over an evaluation set and summarise quality and cost."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import pandas as pd

from rag_lab.evaluation.families import metric_columns
from rag_lab.evaluation.metric_table import question_metrics
from rag_lab.pipeline import Pipeline, Result, Trace
from rag_lab.pipeline.trace import KNOB_RATE_COLUMNS, knob_rates
from rag_lab.records import EvalSet, Question


@dataclass
class EvalRun:
    """Per-question rows (metrics), results and traces of one pipeline over one evaluation set."""

    rows: list[dict[str, Any]]
    results: dict[str, Result]
    traces: dict[str, Trace]

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)

    def knob_rates(self) -> pd.DataFrame:
        """Observed vs configured rate of every simulator knob per role (empty for a real model)."""
        return pd.DataFrame(knob_rates(self.traces.values()), columns=KNOB_RATE_COLUMNS)


class EvaluationCancelled(Exception):
    """Raised by :func:`evaluate_pipeline` when its ``cancelled`` check turns true."""


class ScoredRun(NamedTuple):
    """One question's run and its per-question metrics row (:func:`question_metrics`)."""

    question: Question
    result: Result
    trace: Trace
    row: dict[str, Any]


def run_questions(pipeline: Pipeline, questions: Sequence[Question],
                  cancelled: Callable[[], bool] | None = None) -> Iterator[ScoredRun]:
    """The one question loop: run ``pipeline`` on each of ``questions`` in order and score it. ``cancelled()``
    is checked before each question and stops the loop with :class:`EvaluationCancelled`. Both
    :func:`evaluate_pipeline` and a sweep's workers (:mod:`rag_lab.experiments.engine.worker`) run questions here."""
    total = len(questions)
    for done, question in enumerate(questions):
        if cancelled is not None and cancelled():
            raise EvaluationCancelled(f"stopped after {done} of {total} questions")
        result, trace = pipeline.run(question)
        yield ScoredRun(question, result, trace, question_metrics(question, result, trace))


def evaluate_pipeline(pipeline: Pipeline, evalset: EvalSet, progress: Callable[[int, int], None] | None = None,
                      cancelled: Callable[[], bool] | None = None) -> EvalRun:
    """Run ``pipeline`` on every question of ``evalset`` (in order). ``progress(done, total)`` is
    called after each question; ``cancelled()`` is checked before each one and stops the run with
    :class:`EvaluationCancelled` (used by widgets whose run a newer change supersedes)."""
    rows, results, traces = [], {}, {}
    questions = list(evalset)
    for done, run in enumerate(run_questions(pipeline, questions, cancelled), start=1):
        rows.append(run.row)
        results[run.question.qid] = run.result
        traces[run.question.qid] = run.trace
        if progress is not None:
            progress(done, len(questions))
    return EvalRun(rows, results, traces)


def summarize(rows: list[dict[str, Any]] | pd.DataFrame) -> dict[str, Any]:
    """Means of every ``quality_*``, ``cost_*``, ``spent_*`` and ``run_*`` column, overall and by question type
    (undefined values, e.g. answer containment of unanswerable questions, are left out)."""
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    cols = metric_columns(frame.columns)

    def means(part: pd.DataFrame) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(part)}
        for c in cols:
            values = pd.to_numeric(part[c], errors="coerce").dropna()
            out[c] = float(values.mean()) if len(values) else None
        return out

    return {"overall": means(frame), "by_type": {t: means(part) for t, part in frame.groupby("type", sort=True)},
            "stop_reasons": frame["stop_reason"].value_counts().sort_index().to_dict()}
