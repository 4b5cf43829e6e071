"""The lazy front doors of ``rag_lab.evaluation`` and ``rag_lab.experiments`` (``lazy_loader``): reading a sweep
file loads neither pandas nor scipy.stats, every re-exported name resolves to what its module defines, and no
re-exported name is also the name of a submodule (the import system would rebind the package's attribute to the
module when that module is imported: ``question_metrics`` lives in ``metric_table`` for that reason). Made to fail
once each way: an eager ``from rag_lab.experiments.sweep_runner import run_sweep`` in ``rag_lab/experiments/__init__.py``
loaded pandas and scipy.stats, and an empty ``rag_lab/evaluation/question_metrics.py`` was named by the submodule
check; both were removed again."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("rag_lab.evaluation", "rag_lab.experiments")


def test_reading_a_sweep_file_loads_neither_pandas_nor_scipy():
    code = ("import sys\n"
            "from rag_lab.experiments import load_sweep_spec\n"
            "from rag_lab.evaluation import label\n"
            "load_sweep_spec('sweeps/quickstart.yaml'); label('quality_contains')\n"
            "print([m for m in ('pandas', 'scipy.stats') if m in sys.modules])\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]"], done.stdout


@pytest.mark.parametrize("package", PACKAGES)
def test_no_re_exported_name_is_also_a_submodule(package):
    module = importlib.import_module(package)
    submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    assert not set(module.__all__) & submodules


@pytest.mark.parametrize("package", PACKAGES)
def test_every_re_exported_name_is_what_its_module_defines(package):
    module = importlib.import_module(package)
    assert sorted(dir(module)) == sorted(module.__all__)
    for name in module.__all__:
        value = getattr(module, name)
        assert getattr(importlib.import_module(value.__module__), name) is value, name
    with pytest.raises(AttributeError):
        module.not_a_name  # noqa: B018


def test_the_per_question_function_is_the_function_after_its_module_is_imported():
    code = ("import rag_lab.evaluation.metric_table\n"
            "from rag_lab.evaluation import question_metrics\n"
            "import rag_lab.evaluation as package\n"
            "assert callable(question_metrics) and package.question_metrics is question_metrics, question_metrics\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
