"""Lazily re-exported names (rag_lab.lazy) win over a submodule of the same name whatever was imported first:
``from rag_lab.evaluation import question_metrics`` is the function even after something imported the module
``rag_lab.evaluation.question_metrics`` (the import system rebinds the package's attribute to the module)."""

from __future__ import annotations

import subprocess
import sys


def test_a_re_exported_function_is_not_shadowed_by_its_module():
    code = ("import rag_lab.evaluation.question_metrics\n"
            "from rag_lab.evaluation import question_metrics\n"
            "import rag_lab.evaluation as package\n"
            "assert callable(question_metrics) and callable(package.question_metrics), question_metrics\n"
            "import sys; assert sys.modules['rag_lab.evaluation.question_metrics'].__name__.endswith('question_metrics')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
