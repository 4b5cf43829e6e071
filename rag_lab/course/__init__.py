"""The course: what the notebooks run and the tooling around them. Lesson helpers: the notebook's setup call and
its sweep (:mod:`.notebook`), the contrasts the lessons read off a sweep (:mod:`.contrasts`), a lesson's
findings written out (:mod:`.lesson_text`), lesson 16's real model beside the simulator (:mod:`.real_model`);
the robustness table of the headline findings (:mod:`.robustness`, with the recorded real-model columns in
:mod:`.robustness_recorded`); the lesson map (:mod:`.map`), the executed notebooks as HTML (:mod:`.export`) and
the rendered course site with its pytest plugin (:mod:`.site`).

A notebook imports its helpers from here::

    from rag_lab.course import FindingFamily, contrasts, findings_markdown, lesson_sweep, paired_finding, setup_notebook

(:class:`~rag_lab.experiments.engine.findings.FindingFamily` and
:func:`~rag_lab.experiments.engine.findings.paired_finding` are the engine's, how a lesson declares its claims.)
"""

from rag_lab.course import contrasts, robustness
from rag_lab.course.lesson_text import findings_markdown
from rag_lab.course.notebook import lesson_sweep, policy_fields, setup_notebook, validation_table
from rag_lab.experiments.engine.findings import FindingFamily, paired_finding

__all__ = ["FindingFamily", "contrasts", "findings_markdown", "lesson_sweep", "paired_finding", "policy_fields",
           "robustness", "setup_notebook", "validation_table"]
