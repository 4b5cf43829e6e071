"""The course's helpers: what the notebooks run — the lesson helpers (:mod:`.notebook`, :mod:`.contrasts`,
:mod:`.lesson_text`), the code one lesson alone reads in a module named after its notebook (:mod:`.hyde` for
lesson 04, …), the settings of lessons 01–13's comparisons (:mod:`.settings`) and the robustness registry with
the shipped table a notebook quotes (:mod:`.robustness`). Beside the notebooks, not in the library's wheel: a
notebook's kernel starts in ``notebooks/`` and imports it from there; the authoring tools (``tools/course/``) and
the tests put ``notebooks/`` on ``sys.path``. A notebook imports its helpers from here::

    from lessons import FindingFamily, contrasts, findings_markdown, hyde, lesson_sweep, paired_finding, setup_notebook

Which module serves which lesson: docs/course.md, "The course"."""

from lessons import (
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
from lessons.lesson_text import findings_markdown
from lessons.notebook import lesson_sweep, policy_fields, setup_notebook, validation_table
from rag_lab.experiments.engine.findings import FindingFamily, paired_finding

__all__ = ["FindingFamily", "budget_disclosure", "citation_guard", "contrasts", "controller_validation", "crag_thresholds",
           "findings_markdown", "hyde", "judge_input", "lesson_sweep", "paired_finding", "policy_fields", "query_rewrite",
           "real_data", "real_model", "robustness", "settings", "setup_notebook", "source_contract", "validation_table"]
