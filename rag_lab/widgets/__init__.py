"""Jupyter widgets: steer policies and watch cost vs quality move (:class:`PolicyExplorer`), run sweeps
(:class:`SweepPanel`), read traces (:class:`TraceViewer`). Every action is a plain method too, so
notebooks run headless (nbmake) and tests need no browser. A notebook's setup call and its sweep are in
the course's helpers beside the notebooks (``notebooks/lessons/notebook.py``)."""

from rag_lab.widgets.controls import ParamControl, controllable_keys, param_control, parse_value
from rag_lab.widgets.explorer import PolicyExplorer
from rag_lab.widgets.session import shared_data, simulator_backend
from rag_lab.widgets.sweep_panel import SweepPanel
from rag_lab.widgets.trace_viewer import OUTCOMES, TraceViewer

__all__ = ["OUTCOMES", "ParamControl", "PolicyExplorer", "SweepPanel", "TraceViewer", "controllable_keys",
           "param_control", "parse_value", "shared_data", "simulator_backend"]
