"""ipywidgets controls generated from the policies' field types and bounds: :func:`param_control` reads one dotted key
of :class:`~rag_lab.pipeline.PipelineConfig` and builds the control its type calls for (a checkbox, a dropdown of the
allowed or registered values, a slider or a bounded box, an ``unlimited`` checkbox for an optional integer, a
comma-separated text). Each control's ``description`` is the dotted key (the browser test finds controls by it) and its
tooltip the field's description, or else its policy's docstring. The mapping: docs/course.md, "The widgets"."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import annotated_types
import ipywidgets as widgets

from rag_lab.errors import ConfigError
from rag_lab.pipeline import POLICIES, PipelineConfig
from rag_lab.registry import registry_of

#: Layout of every generated control: room for the dotted key as its label.
DESCRIPTION_STYLE = {"description_width": "initial"}
SLIDER_STEPS = 100
#: Integer ranges wider than this get a bounded number box instead of a slider.
WIDE_INT_RANGE = 1000


@dataclass(frozen=True)
class FieldSpec:
    """What a control needs to know about one policy field: its kind, bounds, choices and tooltip."""

    key: str
    kind: Literal["bool", "literal", "int", "float", "optional_int", "tuple"]
    lo: float | None = None
    hi: float | None = None
    choices: tuple[Any, ...] = ()
    tooltip: str = ""


def field_spec(key: str) -> FieldSpec:
    """Classify the pydantic field behind ``key`` by its annotation and read its ``ge``/``le`` bounds (``ConfigError``
    if there is no such field)."""
    PipelineConfig().get(key)  # validates the key with a helpful message
    policy, field = key.split(".")
    info = POLICIES[policy].model_fields[field]
    tooltip = info.description or inspect.cleandoc(POLICIES[policy].__doc__ or "")
    lo = next((m.ge for m in info.metadata if isinstance(m, annotated_types.Ge)), None)
    hi = next((m.le for m in info.metadata if isinstance(m, annotated_types.Le)), None)
    annotation = info.annotation
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is bool:
        return FieldSpec(key, "bool", tooltip=tooltip)
    if origin is Literal:
        return FieldSpec(key, "literal", choices=args, tooltip=tooltip)
    registry = registry_of(info.metadata)
    if registry is not None:
        return FieldSpec(key, "literal", choices=registry.names(), tooltip=tooltip)
    if origin is tuple:
        return FieldSpec(key, "tuple", tooltip=tooltip)
    if origin in (typing.Union, types.UnionType) and set(args) == {int, type(None)} and lo is not None and hi is not None:
        return FieldSpec(key, "optional_int", lo, hi, tooltip=tooltip)
    if annotation in (int, float) and lo is not None and hi is not None:
        return FieldSpec(key, "int" if annotation is int else "float", lo, hi, tooltip=tooltip)
    raise ConfigError(f"{key!r}: no control for a field of type {annotation!r} (bounds ge={lo}, le={hi})")


def parse_value(key: str, text: str) -> Any:
    """One value of ``key`` from text: ``true``/``false``, a number, ``none``/``unlimited`` (optional ints) or a Literal
    choice. ``ConfigError`` if it does not parse; tuple fields are not parsed here (commas separate values)."""
    spec = field_spec(key)
    word = text.strip()
    parsers: dict[str, Callable[[str], Any]] = {
        "bool": lambda w: {"true": True, "false": False}[w.lower()],
        "literal": lambda w: spec.choices[[str(c) for c in spec.choices].index(w)], "int": int, "float": float,
        "optional_int": lambda w: None if w.lower() in ("none", "unlimited") else int(w)}
    if spec.kind not in parsers:
        raise ConfigError(f"{key!r}: a {spec.kind} field cannot be given as one of several comma-separated values")
    try:
        return parsers[spec.kind](word)
    except (KeyError, ValueError):
        choices = f" (one of {', '.join(map(str, spec.choices))})" if spec.choices else ""
        raise ConfigError(f"{key!r}: cannot read {text!r} as a {spec.kind} value{choices}") from None


class ParamControl:
    """One generated control: ``widget`` to display, ``value`` in the config's terms, ``observe``."""

    def __init__(self, spec: FieldSpec, value: Any) -> None:
        self.key = spec.key
        self.spec = spec
        self._inputs: list[widgets.ValueWidget] = []
        self.widget = self._build(spec)
        self.value = value

    def _build(self, spec: FieldSpec) -> widgets.Widget:
        common = {"description": spec.key, "description_allow_html": False, "tooltip": spec.tooltip,
                  "style": DESCRIPTION_STYLE}
        box: widgets.ValueWidget
        if spec.kind == "bool":
            box = widgets.Checkbox(indent=False, **common)
        elif spec.kind == "literal":
            box = widgets.Dropdown(options=list(spec.choices), **common)
        elif spec.kind == "tuple":
            box = widgets.Text(placeholder="comma separated", continuous_update=False, **common)
        elif spec.kind == "float":
            step = (spec.hi - spec.lo) / SLIDER_STEPS  # type: ignore[operator]
            box = widgets.FloatSlider(min=spec.lo, max=spec.hi, step=step, continuous_update=False,
                                      readout_format=".3g", **common)
        else:
            lo, hi = int(spec.lo), int(spec.hi)  # type: ignore[arg-type]
            int_box = widgets.BoundedIntText if hi - lo > WIDE_INT_RANGE else widgets.IntSlider
            box = int_box(min=lo, max=hi, step=1, continuous_update=False, **common)
        self._inputs = [box]
        if spec.kind != "optional_int":
            return box
        unlimited = widgets.Checkbox(description="unlimited", indent=False, tooltip=f"{spec.key} = None (no limit)")
        unlimited.observe(lambda change: setattr(box, "disabled", change["new"]), names="value")
        self._inputs.append(unlimited)
        return widgets.HBox([box, unlimited])

    @property
    def value(self) -> Any:
        """The control's value as the config takes it (``None`` for an unlimited optional int)."""
        if self.spec.kind == "optional_int":
            slider, unlimited = self._inputs
            return None if unlimited.value else slider.value
        if self.spec.kind == "tuple":
            return tuple(part.strip() for part in self._inputs[0].value.split(",") if part.strip())
        return self._inputs[0].value

    @value.setter
    def value(self, value: Any) -> None:
        if self.spec.kind == "optional_int":
            slider, unlimited = self._inputs
            if value is not None:
                slider.value = value
            unlimited.value = value is None
        elif self.spec.kind == "tuple":
            self._inputs[0].value = ", ".join(value)
        else:
            self._inputs[0].value = value

    def observe(self, callback: Callable[[ParamControl], None]) -> None:
        """Call ``callback(self)`` whenever the user (or code) changes the value."""
        for widget in self._inputs:
            widget.observe(lambda _change: callback(self), names="value")


def param_control(key: str, base: PipelineConfig | None = None) -> ParamControl:
    """The control for dotted ``key``, set to its value in ``base`` (default: ``PipelineConfig()``).

    >>> control = param_control("round_cap.max_rounds")
    >>> type(control.widget).__name__, control.value
    ('IntSlider', 2)"""
    return ParamControl(field_spec(key), (base or PipelineConfig()).get(key))


def controllable_keys(include_tuples: bool = True) -> list[str]:
    """Every dotted key of ``PipelineConfig`` that :func:`param_control` can build a control for."""
    keys = []
    for key in PipelineConfig().flat():
        try:
            kind = field_spec(key).kind
        except ConfigError:
            continue
        if include_tuples or kind != "tuple":
            keys.append(key)
    return keys
