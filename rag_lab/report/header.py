"""The report's header: the sweep's name as its title, a banner when the sweep has not finished ("k of n question
runs finished": the front and the claims are provisional), the facts line, where the results come from (the run's
stored :class:`~rag_lab.experiments.engine.provenance.Provenance`, as every export carries it) and a warning per
role whose replies failed validation (:func:`rag_lab.experiments.engine.summary.reply_warnings`). Prose: ``templates/``."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from rag_lab.paths import template

#: The report's title: the sweep's name (a bare table's given name).
TITLE = "rag_lab sweep report: {name}"


def header_html(name: str, when: str, facts: Sequence[str], provenance: Any = None, progress: Any = None,
                warnings: Sequence[str] = ()) -> str:
    """The header of a report titled by ``name``; ``provenance`` and ``progress`` (a
    :class:`~rag_lab.experiments.engine.results.RunProgress`) where the report is of a sweep."""
    banner = ""
    if progress is not None and not progress.complete:
        banner = template(__package__, "templates/incomplete_banner.html").substitute(
            progress=html.escape(progress.text())) + "\n"
    rows = "\n".join(f'<tr><td class="text">{html.escape(what)}</td><td class="text">{html.escape(text)}</td></tr>'
                     for what, text in (provenance.lines() if provenance is not None else []))
    warned = "\n".join(template(__package__, "templates/reply_warning.html").substitute(warning=html.escape(w))
                       for w in warnings)
    return template(__package__, "templates/header.html").substitute(
        title=html.escape(TITLE.format(name=name)), banner=banner, when=html.escape(when),
        facts=html.escape(" · ".join(facts)), provenance=rows, warnings=warned)
