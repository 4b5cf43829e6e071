"""The report's Jinja2 templates (``templates/*.html.j2`` beside this module): :func:`render` fills one with plain
data, every value HTML-escaped unless marked safe."""

from __future__ import annotations

import functools
from typing import Any

import jinja2


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("rag_lab.report", "templates"),
                              autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)


def render(name: str, **values: Any) -> str:
    """The template ``templates/<name>`` filled with ``values`` (its final newline dropped)."""
    return _environment().get_template(name).render(**values).removesuffix("\n")
