"""The course: what the notebooks run and the tooling around them. Lesson helpers: the notebook's setup call and
its sweep (:mod:`.notebook`), the contrasts the lessons read off a sweep (:mod:`.contrasts`), a lesson's
findings written out (:mod:`.lesson_text`); the code one lesson alone reads, in a module named after its notebook
(:mod:`.budget_disclosure` 02, :mod:`.hyde` 04, :mod:`.crag_thresholds` 05, :mod:`.query_rewrite` 08,
:mod:`.judge_input` 09, :mod:`.source_contract` 11, :mod:`.controller_validation` 12, :mod:`.citation_guard` 13,
:mod:`.real_data` 15, :mod:`.real_model` 16: the real model beside the simulator); the settings of lessons
01–06's headline comparisons, which the notebooks and the robustness table both read (:mod:`.settings`);
the robustness table of the headline findings (:mod:`.robustness`, with the recorded real-model columns in
:mod:`.robustness_recorded`); the lesson map (:mod:`.map`), the executed notebooks as HTML (:mod:`.export`) and
the rendered course site with its pytest plugin (:mod:`.site`).

A notebook imports its helpers from here::

    from rag_lab.course import FindingFamily, contrasts, findings_markdown, hyde, lesson_sweep, paired_finding, setup_notebook

(:class:`~rag_lab.experiments.engine.findings.FindingFamily` and
:func:`~rag_lab.experiments.engine.findings.paired_finding` are the engine's, how a lesson declares its claims.)
"""

from rag_lab.course import (
    budget_disclosure,
    citation_guard,
    contrasts,
    controller_validation,
    crag_thresholds,
    hyde,
    judge_input,
    query_rewrite,
    real_data,
    real_model,
    robustness,
    settings,
    source_contract,
)
from rag_lab.course.lesson_text import findings_markdown
from rag_lab.course.notebook import lesson_sweep, policy_fields, setup_notebook, validation_table
from rag_lab.experiments.engine.findings import FindingFamily, paired_finding

__all__ = ["FindingFamily", "budget_disclosure", "citation_guard", "contrasts", "controller_validation", "crag_thresholds",
           "findings_markdown", "hyde", "judge_input", "lesson_sweep", "paired_finding", "policy_fields", "query_rewrite",
           "real_data", "real_model", "robustness", "settings", "setup_notebook", "source_contract", "validation_table"]
