"""The LLM roles table (``rag_lab.llm.role_table.LLM_ROLES``): every built-in role keeps its contract
(:func:`rag_lab.testing.check_role`: its prompt in every prompt set carries the row's version tag, the simulated
model answers it, the answer fits the row's schema), and a toy role goes in with one registration — its
prompt is built, the simulator answers it from the row, the schema lookup and calibration read the row — and
leaves no trace."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from rag_lab.errors import ConfigError
from rag_lab.llm import prompts
from rag_lab.llm.base import LLMRequest
from rag_lab.llm.role_table import LLM_ROLES, Role, template_name
from rag_lab.llm.simulator import SimulatedBackend
from rag_lab.testing import ContractViolation, check_role

Q = "Which city hosted the first show of the band that released Tinted Windows?"
ITEM = prompts.EvidenceItem(1, "Tinted Windows", "Tinted Windows is the debut album of a band from Leeds.")

#: The builder's arguments for each built-in role (a role added without an entry here fails the test below).
ARGS: dict[str, tuple] = {
    "route": (Q,),
    "rewrite": (Q, 2),
    "hyde": (Q, 1),
    "controller": (Q, [ITEM], [Q], 3, True),
    "answer": (Q, [ITEM], "correct"),
    "reader": (Q, [ITEM]),
    "closedbook": (Q,),
    "judge": (Q, "Leeds [1]", [ITEM]),
    "grade": (Q, ITEM),
}


@pytest.mark.parametrize("name", list(ARGS))
def test_every_built_in_role_keeps_its_contract(name: str) -> None:
    check_role(name, *ARGS[name])


def test_every_role_is_covered() -> None:
    assert set(LLM_ROLES) == set(ARGS)


class Mood(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mood: Literal["calm", "stormy"]
    reason: str = ""


class ReasonedMood(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str
    mood: Literal["calm", "stormy"]


def mood_prompt(question: str, prompt_set: str = "v1"):
    """The toy role's prompt, built as every role's is (:func:`rag_lab.llm.prompts.role_messages`)."""
    return prompts.role_messages("mood", 'Say whether the question sounds calm or stormy. Reply with JSON only: '
                                 '{"mood": "calm" | "stormy"}.', ("QUESTION", question), prompt_set=prompt_set)


def _mood(ideal, prompt, draws) -> dict[str, str]:
    return {"mood": "stormy" if "!" in prompt.question else "calm", "reason": "punctuation"}


@pytest.fixture
def toy_role() -> Iterator[str]:
    LLM_ROLES.add("mood", Role(mood_prompt, {"v1": "mood-v1", "v2": "mood-v2"}, {"v1": Mood, "v2": ReasonedMood},
                               _mood, breaks_format=True, label=("mood", ("calm", "stormy"))))
    yield "mood"
    LLM_ROLES.remove("mood")


def test_a_toy_role_is_one_registration(toy_role: str) -> None:
    from rag_lab.experiments.calibration.calibrate import format_failure

    check_role(toy_role, "Is the sea rough today!")
    # the prompt: the row's version tag per prompt set
    assert template_name("mood", "v2") == "mood-v2"
    assert mood_prompt("q", "v2")[0].content.startswith("[mood-v2] Say whether")
    # the simulator answers it from the row, the format knobs drawn because the row says it breaks formats
    sim = SimulatedBackend("ideal")
    text, knobs = sim.explain("mood", mood_prompt("Is the sea rough today!"))
    assert Mood.model_validate_json(text).mood == "stormy"
    assert [k["knob"] for k in knobs] == ["invalid_json", "hallucinated_action", "wrong_types"]
    assert sim.respond("chat", mood_prompt("Is the sea calm?")) == '{"mood": "calm", "reason": "punctuation"}'
    # the schema lookup and calibration read the row
    assert LLM_ROLES["mood"].schema("v2") is ReasonedMood and LLM_ROLES["mood"].schema("v3") is ReasonedMood
    response = sim.complete(LLMRequest(role="mood", messages=mood_prompt("Calm?", "v2"),
                                       response_schema=LLM_ROLES["mood"].schema("v2")))
    assert response.outcome == "valid" and isinstance(response.parsed, ReasonedMood)
    assert format_failure("mood", '{"mood": "sunny"}')[0] == "hallucinated_action"
    assert format_failure("mood", '{"mood": ["calm"]}')[0] == "wrong_types"


def test_the_toy_role_leaves_no_trace() -> None:
    assert "mood" not in LLM_ROLES
    with pytest.raises(ConfigError, match="unknown LLM role 'mood'"):
        mood_prompt("q")


def test_a_row_is_checked_when_registered() -> None:
    with pytest.raises(ConfigError, match="unknown prompt set 'v7'"):
        Role(mood_prompt, {"v1": "mood-v1", "v7": "mood-v7"})
    with pytest.raises(ConfigError, match="base prompt set 'v1'"):
        Role(mood_prompt, {"v1": "mood-v1"}, {"v2": Mood})
    with pytest.raises(ConfigError, match="needs a schema"):
        Role(mood_prompt, {"v1": "mood-v1"}, breaks_format=True)


def test_check_role_refuses_a_broken_role(toy_role: str) -> None:
    row = LLM_ROLES.remove(toy_role)
    try:
        with pytest.raises(ContractViolation, match="rule 'registered'"):
            check_role(toy_role, "q")
        LLM_ROLES.add(toy_role, Role(lambda q, prompt_set="v1": prompts.route_prompt(q, prompt_set), row.templates,
                                     row.schemas, row.simulate))
        with pytest.raises(ContractViolation, match="rule 'version tag'"):
            check_role(toy_role, "q")
        LLM_ROLES.remove(toy_role)
        LLM_ROLES.add(toy_role, Role(mood_prompt, row.templates, row.schemas, lambda ideal, p, draws: {"mood": "sunny"}))
        with pytest.raises(ContractViolation, match="rule 'answer fits the schema'"):
            check_role(toy_role, "q")
    finally:
        LLM_ROLES.remove(toy_role)
        LLM_ROLES.add(toy_role, row)


class _Recording(SimulatedBackend):
    """The simulated backend, keeping each request's role and response schema."""

    def __init__(self) -> None:
        super().__init__("ideal")
        self.schemas: list[tuple[str, type[BaseModel] | None]] = []

    def complete(self, request, fallback=None):
        self.schemas.append((request.role, request.response_schema))
        return super().complete(request, fallback=fallback)


class ReasonedRewrites(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str = ""
    queries: list[str]


@pytest.fixture
def rewrite_with_a_v2_schema() -> Iterator[Role]:
    """The rewrite row with a v2 schema of its own (a role whose schema changes between prompt sets)."""
    row = LLM_ROLES.remove("rewrite")
    LLM_ROLES.add("rewrite", Role(row.prompt, row.templates, {**row.schemas, "v2": ReasonedRewrites}, row.simulate))
    yield LLM_ROLES["rewrite"]
    LLM_ROLES.remove("rewrite")
    LLM_ROLES.add("rewrite", row)


def test_the_pipeline_asks_each_role_its_rows_schema(rewrite_with_a_v2_schema: Role) -> None:
    """Every call the pipeline makes carries the schema its role's row names for the config's prompt set: a v2
    schema given to ``rewrite`` is what a v2 run asks for (no call site wires a schema of its own)."""
    from rag_lab.pipeline import Pipeline, PipelineConfig
    from rag_lab.widgets.session import shared_data

    dataset, resources = shared_data("world")
    for prompt_set in ("v1", "v2"):
        backend = _Recording()
        cfg = PipelineConfig.from_dict({"prompts.version": prompt_set, "rewrite.enabled": True,
                                        "router.enabled": False})
        Pipeline(cfg, resources, backend).run(dataset.evalset.questions[0])
        asked = dict(backend.schemas)
        assert asked["rewrite"] is (ReasonedRewrites if prompt_set == "v2" else rewrite_with_a_v2_schema.schemas["v1"])
        assert all(schema is LLM_ROLES[role].schema(prompt_set) for role, schema in backend.schemas)


def test_the_tables_are_complete_on_import_of_their_module() -> None:
    """A fresh interpreter that imports only the module of a table finds every built-in row in it."""
    import subprocess
    import sys

    code = ("from rag_lab.llm.role_table import LLM_ROLES\n"
            "from rag_lab.evaluation.metric_table import METRICS\n"
            "import rag_lab.evaluation.metric as m\n"
            "print(len(LLM_ROLES), 'cost_calls_controller' in METRICS, hasattr(m, 'METRICS'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["9", "True", "False"]


def test_a_roles_label_values_are_the_values_its_schemas_accept() -> None:
    """One list of the allowed labels (the route's SIMPLE / COMPLEX, the controller's four actions): the role's
    ``label`` (what calibration counts a hallucinated label against) is what every schema of the role accepts."""
    from typing import get_args

    from rag_lab.llm.role_table import PROMPT_SETS

    labelled = {name: row for name, row in LLM_ROLES.items() if row.label is not None}
    assert set(labelled) == {"route", "controller"}
    for row in labelled.values():
        field, allowed = row.label
        assert {get_args(row.schema(s).model_fields[field].annotation) for s in PROMPT_SETS} == {allowed}
