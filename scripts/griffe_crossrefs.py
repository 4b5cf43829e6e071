"""A Griffe extension for the API pages (mkdocs.yml): the docstrings' Sphinx-style cross-references become
links, and a reference to a name that does not exist fails ``mkdocs build --strict``.

The docstrings are Markdown with Sphinx roles (``:func:`~rag_lab.stats.holm```, ``:class:`Registry```,
``:meth:`LLMRequest.cache_key <rag_lab.llm.types.LLMRequest.cache_key>```, ``:mod:`.question```). Once the
package is loaded, every role in every docstring is resolved: an absolute ``rag_lab.`` path as is, a short
name in the scope of the object that holds the docstring (its members, then its parents', the module's
imports included), a leading dot relative to the module's package. A name in ``rag_lab`` becomes a
Markdown cross-reference (``[`holm`][rag_lab.stats.significance.holm]``) that mkdocs-autorefs turns into a
link, or reports ("Could not find cross-reference target") when no API page documents it. A name outside
``rag_lab`` (the standard library, NumPy, pydantic: no inventories are loaded offline) stays code. A name
that resolves to nothing is logged as a warning naming the docstring's file and line, which ``--strict``
turns into a failure. A private name (``_generate``) is checked but not linked: the API pages leave private
names out.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import logging
import re
from typing import Any

from griffe import Alias, Extension, GriffeLoader, Module, Object

LOG = logging.getLogger("mkdocs.plugins.griffe_crossrefs")

ROLE = re.compile(r":(?:py:)?(?P<role>func|class|meth|mod|data|attr|exc|obj|const):`(?P<body>[^`]+)`")
PACKAGE = "rag_lab"


class SphinxCrossRefs(Extension):
    """Rewrite the Sphinx roles of every docstring in the package (see the module docstring)."""

    def __init__(self, package: str = PACKAGE) -> None:
        super().__init__()
        self.package = package
        self.broken: list[str] = []

    def on_package(self, *, pkg: Module, loader: GriffeLoader, **kwargs: Any) -> None:
        if pkg.path != self.package:
            return
        for obj in _walk(pkg):
            if obj.docstring is not None and ":" in obj.docstring.value:
                obj.docstring.value = ROLE.sub(lambda m, o=obj: self._link(o, m, loader), obj.docstring.value)

    def _link(self, obj: Object, match: re.Match[str], loader: GriffeLoader) -> str:
        body = match["body"].strip()
        title, target = body, body
        if body.endswith(">") and " <" in body:
            title, _, target = body[:-1].partition(" <")
        short = target.startswith("~")
        target = target.lstrip("~").rstrip("()")
        if title == body:
            title = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
        path = _resolve(obj, target, self.package)
        if path is None:
            if _external(target, self.package):
                return f"``{title}``"
            if not _defined_at_runtime(obj.module.path, target):
                self._broken(obj, match[0], "names nothing in its scope")
                return f"``{title}``"
            return f"``{title}``"  # e.g. one of ``A, B = 1, 2``: it exists, Griffe does not see it, no page has it
        if not (path == self.package or path.startswith(self.package + ".")):
            return f"``{title}``"
        found = _lookup(loader, path)
        if found is None and not _defined_at_runtime(*path.rsplit(".", 1)):
            self._broken(obj, match[0], f"names {path}, which does not exist")
            return f"``{title}``"
        if found is None:
            return f"``{title}``"  # it exists at run time only (Griffe does not see it), so no page has it
        if found.is_alias and getattr(found, "inherited", False):
            path = found.target_path  # an inherited method is documented on the class that defines it
        if any(part.startswith("_") and not part.startswith("__") for part in path.split(".")):
            return f"``{title}``"  # it exists; the API pages leave private names out, so no link
        return f"[`{title}`][{path}]"

    def _broken(self, obj: Object, role: str, why: str) -> None:
        where = f"{obj.relative_filepath}:{obj.docstring.lineno if obj.docstring else obj.lineno}"
        message = f"{where}: the docstring of {obj.path} cites {role}, which {why}"
        self.broken.append(message)
        LOG.warning(message)


def _walk(obj: Object):
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _walk(member)


def _resolve(obj: Object, target: str, package: str) -> str | None:
    """The full path ``target`` names in the scope of ``obj`` (None when it names nothing there)."""
    if target.startswith(package + ".") or target == package:
        return target
    if target.startswith("."):
        module = obj.module
        package = module.path if module.is_init_module else module.parent.path
        dots = len(target) - len(target.lstrip("."))
        base = package.rsplit(".", dots - 1)[0] if dots > 1 else package
        return f"{base}.{target.lstrip('.')}"
    first, _, rest = target.partition(".")
    resolved = None
    scope: Object | None = obj
    while scope is not None and resolved is None:
        try:  # a class's scope holds its inherited members too
            members = scope.all_members if scope.is_class else scope.members
        except Exception:  # a base class Griffe cannot follow
            members = scope.members
        if first in members:
            member = members[first]
            resolved = member.target_path if member.is_alias else member.path
        elif scope.name == first and not scope.is_module:
            resolved = scope.path
        scope = scope.parent
    if resolved is None:
        return None
    return f"{resolved}.{rest}" if rest else resolved


def _defined_at_runtime(module: str, name: str) -> bool:
    """Whether importing ``module`` gives it the (dotted) attribute ``name``: the last resort for names
    Griffe's static analysis does not see."""
    try:
        value: Any = importlib.import_module(module)
        for part in name.split("."):
            value = getattr(value, part)
    except Exception:
        return False
    return True


def _lookup(loader: GriffeLoader, path: str) -> Object | Alias | None:
    try:
        return loader.modules_collection[path]
    except Exception:  # KeyError, or an alias that leads outside the loaded packages
        return None


def _external(target: str, package: str) -> bool:
    """A builtin or a name in an importable module other than the package (kept as code, no link)."""
    first = target.lstrip(".").split(".")[0]
    if hasattr(builtins, first):
        return True
    try:
        return first != package and importlib.util.find_spec(first) is not None
    except (ImportError, ValueError):
        return False
