"""What a widget shows where no kernel runs it (an HTML export, GitHub): a short static note beside
the live view. JupyterLab renders the widget itself; a renderer without widget state falls back to
this ``text/html`` instead of the widget tree's ``VBox(children=…)`` text."""

from __future__ import annotations

import html
from typing import Any


def with_static_html(bundle: dict[str, Any], what: str) -> dict[str, Any]:
    """``bundle`` (an ipywidget's mime bundle) with a ``text/html`` fallback describing ``what`` the widget is."""
    note = (f"<div class='rag-lab-static-note' style='border:1px dashed #999;padding:6px 10px;color:#444'>"
            f"<b>{html.escape(what)}</b> — an interactive widget: open this notebook in JupyterLab and run it "
            f"to use it (the cells below show what its runs measured).</div>")
    return {**bundle, "text/html": note}
