"""The contract of an LLM role (a row of :data:`~rag_lab.llm.role_table.LLM_ROLES`), as a check anyone who adds a role
can run: :func:`check_role` builds the role's prompt in every prompt set from its row, has the simulated model
answer it, and validates the answer against the row's schema for that set."""

from __future__ import annotations

from typing import Any

from rag_lab.llm.base import LLMBackend, LLMRequest
from rag_lab.llm.role_table import BASE_SET, LLM_ROLES, PROMPT_SETS, resolve_role
from rag_lab.llm.simulator import SimulatedBackend
from rag_lab.llm.structured import validate_output
from rag_lab.testing.checks import ContractViolation, _Contract

__all__ = ["check_role"]


def check_role(name: str, *args: Any, backend: LLMBackend | None = None, **kwargs: Any) -> None:
    """Check the LLM role ``name`` end to end from its row alone. In every prompt set: the row's builder,
    called with ``args`` and ``kwargs`` (and ``prompt_set=`` for a role that names more than one set), gives a
    system and a user message; the system message opens with the row's version tag for the set, which also
    names the role to a generic ``chat`` request; ``backend`` (default: the simulated model, profile
    ``ideal``, whose format knobs are off) answers the request, and the answer validates against the row's
    schema for the set (a free-text role: a non-empty answer). Raises :class:`ContractViolation`."""
    contract = _Contract("role", repr(name))
    if name not in LLM_ROLES:
        raise contract.fail("registered", f"not in LLM_ROLES ({', '.join(LLM_ROLES)})")
    row = LLM_ROLES[name]
    backend = backend if backend is not None else SimulatedBackend("ideal")
    several_sets = set(row.templates) != {BASE_SET}
    for prompt_set in PROMPT_SETS:
        try:
            messages = tuple(row.prompt(*args, **kwargs, prompt_set=prompt_set) if several_sets
                             else row.prompt(*args, **kwargs))
        except Exception as exc:
            raise contract.fail("prompt builds", f"set {prompt_set}: {type(exc).__name__}: {exc}") from exc
        contract.require([m.role for m in messages] == ["system", "user"], "system and user message",
                         f"set {prompt_set}: the prompt's messages are {[m.role for m in messages]}")
        tag = f"[{row.template(prompt_set)}] "
        system = messages[0].content
        contract.require(system.startswith(tag), "version tag", f"set {prompt_set}: the system message opens "
                                                                f"{system[:40]!r}, not {tag!r}")
        contract.require(resolve_role("chat", system) == name, "tag names the role",
                         f"set {prompt_set}: a chat request with this prompt plays {resolve_role('chat', system)!r}")
        schema = row.schema(prompt_set)
        try:
            response = backend.complete(LLMRequest(role=name, messages=messages, response_schema=schema))
        except ContractViolation:
            raise
        except Exception as exc:
            raise contract.fail("answered", f"set {prompt_set}: {type(exc).__name__}: {exc}") from exc
        if schema is None:
            contract.require(response.text.strip(), "answered", f"set {prompt_set}: empty answer")
        else:
            outcome = validate_output(response.text, schema).outcome
            contract.require(outcome == "valid", "answer fits the schema",
                             f"set {prompt_set}: {schema.__name__} outcome {outcome!r} for {response.text[:80]!r}")
