"""The course: what the notebooks run — the lesson helpers (:mod:`.notebook`, :mod:`.contrasts`,
:mod:`.lesson_text`), the code one lesson alone reads in a module named after its notebook (:mod:`.hyde` for
lesson 04, …), the settings of lessons 01–13's comparisons (:mod:`.settings`) and the robustness registry with
the shipped table a notebook quotes (:mod:`.robustness`). The authoring tools (lesson map, banners, the robustness
table's run and writer, HTML export, course site) are outside the library, in ``tools/course/``. A notebook imports
its helpers from here::

    from rag_lab.course import FindingFamily, contrasts, findings_markdown, hyde, lesson_sweep, paired_finding, setup_notebook

Which module serves which lesson: docs/course.md, "The course"."""

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
