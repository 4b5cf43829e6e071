"""The LLM roles table, :data:`LLM_ROLES`: one :class:`Role` row per kind of LLM call (prompt builder, template
and response schema per prompt set, simulated output, calibration fields), and the prompt sets
(:data:`PROMPT_SETS`). The pipeline asks the table for a role by name; the simulator, the per-role cost metrics
and calibration read it too. The built-in rows are in :mod:`rag_lab.llm.builtin_roles` (``rag_lab.llm`` imports it,
and importing any module of the package runs that first); a new role is one row (docs/design.md §7)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from rag_lab.errors import ConfigError
from rag_lab.registry import Registry

__all__ = ["BASE_SET", "LLM_ROLES", "PROMPT_SETS", "PromptSet", "PromptSetName", "Role", "resolve_role", "template_name"]

#: The prompt sets (policy ``prompts.version``), each with what it changes and the set it builds on; why each was
#: written (v2 for a small real model, v3's answer template): docs/simulate-then-verify.md.
PROMPT_SETS: Registry[PromptSet] = Registry("prompt set")


@dataclass(frozen=True)
class PromptSet:
    """One prompt set: what it changes, and the set it builds on (``parent``): a role that names no template
    for this set speaks its template of the parent set (and of the parent's parent ...)."""

    description: str
    parent: str | None = None

    def lineage(self) -> tuple[str, ...]:
        """The sets a role's template is looked up in, this one's parent first, down to the base set."""
        chain: list[str] = []
        name = self.parent
        while name is not None:
            chain.append(name)
            name = PROMPT_SETS[name].parent
        return tuple(chain)


PROMPT_SETS.add("v1", PromptSet("the original wording"))
PROMPT_SETS.add("v2", PromptSet("reason first (router, controller), each needed fact checked, a few cited words "
                                "(answer)", parent="v1"))
PROMPT_SETS.add("v3", PromptSet("v2 with an answer template that names no kind of answer and shows no example "
                                "answer (answer-v3)", parent="v2"))
PROMPT_SETS.add("v4", PromptSet("v3 with a controller (controller-v4) whose budget arms differ by the cap alone: "
                                "without a stated budget it says only the rounds run, not v3's 'use as few rounds "
                                "of searches as possible'", parent="v3"))
#: A prompt set's name as a pydantic field type (the policy ``prompts.version``).
PromptSetName = PROMPT_SETS.field()
#: The set every role names; a role that does not name another set speaks this one there.
BASE_SET = "v1"

#: The simulated model's answer for a role: ``(ideal, prompt, draws)`` -> the output text, or a JSON object
#: (``ideal``: :class:`~rag_lab.llm.sim.ideal.IdealModel`; ``prompt``: :class:`~rag_lab.llm.sim.prompt.Prompt`;
#: ``draws``: :class:`~rag_lab.llm.sim.knobs.CallRandom`).
Simulate = Callable[[Any, Any, Any], "str | dict[str, Any]"]


def _no_simulation(ideal: Any, prompt: Any, draws: Any) -> str:
    return ""  # the simulator writes INSUFFICIENT for an empty output


@dataclass(frozen=True)
class Role:
    """One LLM role. A new role is one row, e.g.
    ``LLM_ROLES.add("toy", Role(prompt=toy_prompt, templates={"v1": "toy-v1"}, schemas={"v1": ToyAnswer},
    simulate=lambda ideal, prompt, draws: {"answer": prompt.question}))``; a role that names no template (or
    schema) for a prompt set speaks that of the nearest set it builds on, ``v1`` last:

    >>> row = Role(prompt=print, templates={"v1": "toy-v1"})
    >>> row.template("v2"), row.schema("v2") is None
    ('toy-v1', True)

    ``prompt``: the builder of its messages (:mod:`rag_lab.llm.prompts`); ``templates``: keyed by prompt set (a name of
    :data:`PROMPT_SETS`), the template it speaks there: the file ``templates/<name>.txt`` and the tag that opens its
    system message (``[route-v2] …``); a template's own revision number counts its rewrites and need not match the
    set's; ``v1`` required. ``schemas``: the response schema per prompt set (empty: free text, as the answer);
    ``simulate``: the simulated model's output (:data:`Simulate`); ``step``: the decision index its knob draws are keyed
    by (the controller's is the rounds already run; common random numbers); ``breaks_format``: whether the simulator
    applies the format knobs (invalid JSON, hallucinated action, wrong types) to its output, which is also what
    calibration pools the format rates over; ``label``: the field whose value must be one of the allowed values
    (calibration counts another string as a hallucinated action)."""

    prompt: Callable[..., Any]
    templates: Mapping[str, str]
    schemas: Mapping[str, type[BaseModel]] = field(default_factory=dict)
    simulate: Simulate = _no_simulation
    step: Callable[[Any], int] = lambda prompt: 0
    breaks_format: bool = False
    label: tuple[str, tuple[str, ...]] | None = None

    def __post_init__(self) -> None:
        for what, table in (("templates", self.templates), ("schemas", self.schemas)):
            for name in table:
                PROMPT_SETS.check(name)
            if table and BASE_SET not in table:
                raise ConfigError(f"a role's {what} must name the base prompt set {BASE_SET!r}, got {sorted(table)}")
        if BASE_SET not in self.templates:
            raise ConfigError(f"a role must name its template in the {BASE_SET!r} prompt set")
        if self.breaks_format and not self.schemas:
            raise ConfigError("breaks_format needs a schema: only a structured output has a format to break")

    def template(self, prompt_set: str = BASE_SET) -> str:
        """The template this role speaks in ``prompt_set`` (or in the nearest set it builds on)."""
        return _inherited(self.templates, prompt_set)

    def schema(self, prompt_set: str = BASE_SET) -> type[BaseModel] | None:
        """The response schema in ``prompt_set`` (or in the nearest set it builds on; None: free text)."""
        return _inherited(self.schemas, prompt_set) if self.schemas else None


def _inherited(table: Mapping[str, Any], prompt_set: str) -> Any:
    """``table``'s entry for ``prompt_set``, else for the nearest set in its lineage (the base set last)."""
    for name in (prompt_set, *PROMPT_SETS[prompt_set].lineage()):
        if name in table:
            return table[name]
    return table[BASE_SET]


LLM_ROLES: Registry[Role] = Registry("LLM role")

_TAG = re.compile(r"^\[([a-z]+)-v\d+\]")


def template_name(role: str, prompt_set: str = BASE_SET) -> str:
    """The template ``role`` speaks in ``prompt_set`` (a name of :data:`PROMPT_SETS`).

    >>> template_name("controller", "v3")
    'controller-v3'
    >>> template_name("route", "v9")
    Traceback (most recent call last):
    ...
    rag_lab.registry.UnknownName: unknown prompt set 'v9'; choose one of v1, v2, v3, v4"""
    PROMPT_SETS.check(prompt_set)
    return LLM_ROLES[role].template(prompt_set)


def resolve_role(role: str, system: str) -> str:
    """The role a request plays: ``role`` when it is a registered role; for a generic ``chat`` request
    (e.g. through ``rag-lab serve`` without a role header) the role named by the system message's template
    tag (``[controller-v1] …``), else ``answer`` (extractive, or INSUFFICIENT)."""
    if role in LLM_ROLES:
        return role
    tag = _TAG.match(system)
    if tag and tag.group(1) in LLM_ROLES:
        return tag.group(1)
    if role == "chat":
        return "answer"
    raise ConfigError(f"the simulated backend has no role {role!r}; roles: {', '.join(LLM_ROLES)} (or chat)")
