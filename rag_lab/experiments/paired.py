"""Paired differences moved to :mod:`rag_lab.stats.paired` (the statistics layer); this name stays so
that code written against it (notebook 12) keeps working until it imports from there."""

from rag_lab.stats.paired import *  # noqa: F403
