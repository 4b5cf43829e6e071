"""The widgets' progress bar: an ``IntProgress`` moved by the engine's
:class:`~rag_lab.experiments.engine.progress.Progress` records (a subscriber, like the command line's tqdm bar)."""

from __future__ import annotations

import ipywidgets as widgets

from rag_lab.experiments.engine.progress import Progress

#: Bar moves per run (each one is a message to the browser).
UPDATES = 40


class WidgetBar:
    """``widget`` counts pairs (or questions) done of ``total``; called with each record, it moves about
    :data:`UPDATES` times a run, and always on the last."""

    def __init__(self, description: str = "questions", total: int = 1) -> None:
        self.widget = widgets.IntProgress(value=0, min=0, max=total, description=description, bar_style="info")
        self.widget.add_class("rag-lab-progress")

    def start(self, total: int) -> None:
        """A new run of ``total`` steps: the bar empty, in the running colour."""
        self.widget.max, self.widget.value, self.widget.bar_style = total, 0, "info"

    def __call__(self, progress: Progress) -> None:
        step = max(1, self.widget.max // UPDATES)
        if progress.finished or abs(progress.done - self.widget.value) >= step:
            self.widget.value = min(progress.done, self.widget.max)
