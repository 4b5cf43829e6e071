"""The built-in LLM roles, one row each in :data:`~rag_lab.llm.role_table.LLM_ROLES`: prompt builder and template
per prompt set, response schema, the simulated model's output (ideal output plus the knobs that apply) and the
calibration fields. ``rag_lab.llm`` imports this module, so the table is complete whenever the LLM layer is used.

In pipeline order: ``route``, ``rewrite``, ``hyde``, ``controller``, ``answer``, ``judge``, ``grade``; then
``reader`` (the plain reader, ``generation.reader=plain``) and ``closedbook`` (no passage at all,
``generation.reader=closed_book``; the simulator has no memory, so it writes INSUFFICIENT there)."""

from __future__ import annotations

import re
from operator import attrgetter
from typing import Any

from rag_lab.llm import prompts, schemas
from rag_lab.llm.role_table import LLM_ROLES, Role
from rag_lab.llm.sim.ideal import IdealModel
from rag_lab.llm.sim.knobs import CallRandom, controller_knobs, route_knob, settles
from rag_lab.llm.sim.prompt import Prompt

_CITATIONS = re.compile(r"\[\d+\]")


def _route(ideal: IdealModel, p: Prompt, draws: CallRandom) -> dict[str, str]:
    return route_knob(ideal.route(p.question), ideal.is_comparison(p.question), draws)


def _rewrite(ideal: IdealModel, p: Prompt, draws: CallRandom) -> dict[str, Any]:
    return {"queries": ideal.rewrite(p.question, p.count, draws.rng)}


def _hyde(ideal: IdealModel, p: Prompt, draws: CallRandom) -> dict[str, Any]:
    return {"passages": ideal.hyde(p.question, p.count, draws.rng)}


def _controller(ideal: IdealModel, p: Prompt, draws: CallRandom) -> dict[str, Any]:
    decision = controller_knobs(ideal.decide(p.question, p.evidence, p.searches), p.question, p.searches,
                                p.budget, p.rounds_run, draws,
                                settled=lambda: settles(ideal.evidence(p.question, p.evidence)))
    return decision.as_json()


def _answer(ideal: IdealModel, p: Prompt, draws: CallRandom) -> str:
    return ideal.answer(p.question, p.evidence, p.template, draws.partial_answer)


def _reader(ideal: IdealModel, p: Prompt, draws: CallRandom) -> str:
    """The plain reader: the simulated answer without its citations (the reader's prompt asks for none)."""
    return " ".join(_CITATIONS.sub(" ", _answer(ideal, p, draws)).split())


def _judge(ideal: IdealModel, p: Prompt, draws: CallRandom) -> dict[str, Any]:
    return ideal.judge(p.question, p.draft, p.items)


def _grade(ideal: IdealModel, p: Prompt, draws: CallRandom) -> dict[str, Any]:
    return ideal.grade(p.question, p.evidence[0]) if p.evidence else {"score": -1.0}


# Each row's ``templates`` and ``schemas`` are keyed by prompt set (PROMPT_SETS: v1 .. v4), a set it does not name
# speaking that of the set it builds on. A template's name carries its own revision, which counts the rewrites of
# that role's instructions and not the prompt sets: the controller's first template (controller-v1) was rewritten
# before prompt sets existed, so set v1 speaks controller-v2, v2 and v3 speak controller-v3, v4 controller-v4.
LLM_ROLES.add("route", Role(
    prompts.route_prompt, templates={"v1": "route-v1", "v2": "route-v2"},
    schemas={"v1": schemas.RouteDecision, "v2": schemas.ReasonedRouteDecision}, simulate=_route,
    breaks_format=True, label=("route", schemas.ROUTES)))
LLM_ROLES.add("rewrite", Role(prompts.rewrite_prompt, templates={"v1": "rewrite-v1"}, schemas={"v1": schemas.Rewrites},
                              simulate=_rewrite))
LLM_ROLES.add("hyde", Role(prompts.hyde_prompt, templates={"v1": "hyde-v1"}, schemas={"v1": schemas.HydePassages},
                           simulate=_hyde))
LLM_ROLES.add("controller", Role(
    prompts.controller_prompt, templates={"v1": "controller-v2", "v2": "controller-v3", "v4": "controller-v4"},
    schemas={"v1": schemas.ControllerDecision, "v2": schemas.ReasonedControllerDecision}, simulate=_controller,
    step=attrgetter("rounds_run"), breaks_format=True, label=("action", schemas.CONTROLLER_ACTIONS)))
LLM_ROLES.add("answer", Role(prompts.answer_prompt, templates={"v1": "answer-v1", "v2": "answer-v2", "v3": "answer-v3"},
                             simulate=_answer))
LLM_ROLES.add("reader", Role(prompts.reader_prompt, templates={"v1": "reader-v1"}, simulate=_reader))
LLM_ROLES.add("closedbook", Role(prompts.closed_book_prompt, templates={"v1": "closedbook-v1"}, simulate=_reader))
LLM_ROLES.add("judge", Role(prompts.judge_prompt, templates={"v1": "judge-v1"}, schemas={"v1": schemas.JudgeVerdict},
                            simulate=_judge))
LLM_ROLES.add("grade", Role(prompts.grade_prompt, templates={"v1": "grade-v1"}, schemas={"v1": schemas.RelevanceGrade},
                            simulate=_grade))
