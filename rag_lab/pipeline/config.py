"""``PipelineConfig``: every policy in one frozen object, each parameter addressable by a dotted key.

>>> config = PipelineConfig()
>>> config.get("crag.upper")
0.5
>>> stricter = config.with_params({"crag.upper": 0.6, "round_cap.max_rounds": 3})   # a new, validated copy
>>> (config.get("crag.upper"), stricter.get("crag.upper"))
(0.5, 0.6)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from rag_lab.config_files import explain_validation, read_mapping
from rag_lab.errors import ConfigError
from rag_lab.pipeline.policies import (
    CRAG,
    BudgetDisclosure,
    CitationGuard,
    ControllerValidation,
    EchoGuard,
    Finalize,
    HyDE,
    JudgeInput,
    Policy,
    Prompts,
    QueryRewrite,
    Retrieval,
    RoundCap,
    Router,
    SearchBudget,
    SourceContract,
    Truncation,
    ZeroYieldStop,
)
from rag_lab.registry import Registry


class PipelineConfig(BaseModel):
    """All policies of one pipeline. Frozen: :meth:`with_params` returns a validated copy.

    Its fields are the one list of policies: :data:`POLICIES` (section name → policy class) and
    :data:`POLICY_CLASSES` derive from them, and so do the dotted keys, the widgets' controls and the
    policy contract test. A new policy is one :class:`~rag_lab.pipeline.policies.Policy` subclass and
    one field here."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    router: Router = Router()
    retrieval: Retrieval = Retrieval()
    rewrite: QueryRewrite = QueryRewrite()
    hyde: HyDE = HyDE()
    round_cap: RoundCap = RoundCap()
    budget: SearchBudget = SearchBudget()
    disclosure: BudgetDisclosure = BudgetDisclosure()
    validation: ControllerValidation = ControllerValidation()
    zero_yield: ZeroYieldStop = ZeroYieldStop()
    finalize: Finalize = Finalize()
    crag: CRAG = CRAG()
    truncation: Truncation = Truncation()
    judge: JudgeInput = JudgeInput()
    citations: CitationGuard = CitationGuard()
    echo: EchoGuard = EchoGuard()
    sources: SourceContract = SourceContract()
    prompts: Prompts = Prompts()

    @model_validator(mode="after")
    def _one_expansion(self) -> PipelineConfig:
        if self.rewrite.enabled and self.hyde.enabled:
            raise ValueError("query expansion is one of none, rewrite or hyde: enable rewrite or hyde, not both")
        return self

    @property
    def max_rounds(self) -> int:
        """The effective round cap: the smaller of ``round_cap`` and ``budget.max_rounds``."""
        caps = [self.round_cap.max_rounds]
        if self.budget.max_rounds is not None:
            caps.append(self.budget.max_rounds)
        return min(caps)

    # --- dotted keys -------------------------------------------------------------------------

    def flat(self) -> dict[str, Any]:
        """Every parameter as ``{"policy.field": value}``."""
        return {
            f"{name}.{field}": value
            for name in type(self).model_fields
            for field, value in getattr(self, name).model_dump().items()
        }

    def get(self, key: str) -> Any:
        policy, field = _split(key)
        return getattr(getattr(self, policy), field)

    def with_params(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> PipelineConfig:
        """A copy with the dotted ``values`` changed, validated as a whole; the original is unchanged.
        Keyword form uses ``__`` for the dot, as scikit-learn's ``set_params`` does for nested parameters:
        ``config.with_params(crag__upper=0.6)``. The same verb changes a
        :meth:`~rag_lab.pipeline.Pipeline.with_params` and a
        :meth:`~rag_lab.widgets.PolicyExplorer.with_params`."""
        updates = {**(values or {}), **{k.replace("__", "."): v for k, v in kwargs.items()}}
        data = self.model_dump()
        for key, value in updates.items():
            policy, field = _split(key)
            data[policy][field] = value
        try:
            return PipelineConfig.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(explain_validation(exc, "pipeline config")) from None

    # --- files -------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PipelineConfig:
        """From nested ``{"crag": {"upper": 0.6}}`` and/or dotted ``{"crag.upper": 0.6}`` keys."""
        nested = {k: v for k, v in data.items() if "." not in k}
        dotted = {k: v for k, v in data.items() if "." in k}
        try:
            base = cls.model_validate(nested)
        except ValidationError as exc:
            raise ConfigError(explain_validation(exc, "pipeline config")) from None
        return base.with_params(dotted) if dotted else base

    @classmethod
    def from_file(cls, path: str | Path) -> PipelineConfig:
        """Read a YAML or JSON config file (nested or dotted keys)."""
        data = read_mapping(path, "config")
        try:
            return cls.from_dict(data)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None


#: The config sections: section name (the first part of a dotted key) → policy class, in field order.
POLICIES: Registry[type[Policy]] = Registry("policy")
for _name, _field in PipelineConfig.model_fields.items():
    POLICIES.add(_name, _field.annotation)  # type: ignore[arg-type]
#: Every policy class, once each.
POLICY_CLASSES: tuple[type[Policy], ...] = tuple(POLICIES.values())


def _split(key: str) -> tuple[str, str]:
    policy, dot, field = key.partition(".")
    if not dot or "." in field:
        raise ConfigError(f"{key!r} is not a dotted key of the form 'policy.field' (e.g. 'crag.upper')")
    policies = PipelineConfig.model_fields
    if policy not in policies:
        raise ConfigError(f"unknown policy {policy!r} in {key!r}; policies: {', '.join(policies)}")
    fields = policies[policy].annotation.model_fields  # type: ignore[union-attr]
    if field not in fields:
        raise ConfigError(f"unknown field {field!r} of policy {policy!r}; fields: {', '.join(fields)}")
    return policy, field
