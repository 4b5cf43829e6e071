"""Lazy re-exports for a package's front door: ``from rag_lab.experiments import run_sweep`` imports the module
that defines ``run_sweep`` when the name is first asked for, not when the package is imported. So a command
that needs one light submodule (``rag-lab sweep`` reading and validating a sweep file) does not pay for the
heavy ones its package also re-exports (pandas, scipy.stats: seconds).
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any


class _LazyPackage(types.ModuleType):
    """A package whose re-exported names win over its submodules of the same name: importing the submodule
    ``rag_lab.evaluation.question_metrics`` would otherwise rebind ``rag_lab.evaluation.question_metrics``, the
    function, to the module (the import system sets a package's attribute for each submodule it loads), and which
    one a caller got would depend on what was imported before (as with an eager ``from … import``, the name wins)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and name in self.__dict__.get("_lazy_names", ()):
            return
        super().__setattr__(name, value)


def lazy_exports(namespace: dict[str, Any], exports: Mapping[str, str]) -> tuple[Callable[[str], Any],
                                                                               Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` (PEP 562) of the package whose ``globals()`` is
    ``namespace``: ``exports`` maps each re-exported name to the module defining it; a name is imported on first
    access and then kept."""
    package = namespace["__name__"]
    namespace["_lazy_names"] = frozenset(exports)
    sys.modules[package].__class__ = _LazyPackage

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
