"""``PipelineConfig``: every policy in one frozen object, each parameter addressable by a dotted key.

>>> config = PipelineConfig()
>>> config.get("crag.upper")
0.5
>>> stricter = config.with_params({"crag.upper": 0.6, "round_cap.max_rounds": 3})   # a new, validated copy
>>> (config.get("crag.upper"), stricter.get("crag.upper"))
(0.5, 0.6)"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from rag_lab.config_files import explain_validation, read_mapping, shown_input
from rag_lab.errors import ConfigError
from rag_lab.pipeline import policies
from rag_lab.pipeline.identity import identity as stable_identity
from rag_lab.pipeline.identity import removed, without_removed
from rag_lab.registry import Registry


class PipelineConfig(BaseModel):
    """All policies of one pipeline. Frozen: :meth:`with_params` returns a validated copy.

    :data:`POLICIES` (section name → policy class) is the one list of policies: the dotted keys, the
    widgets' controls and the policy contract test derive from it. The pipeline's own policies are the
    fields below (each field registers its policy); a policy from outside is one
    :class:`~rag_lab.pipeline.policies.Policy` subclass and one registration, ``POLICIES.add("name", Cls)``:
    its section is validated by its class, defaults to ``Cls()`` and reads as ``config.name``."""

    model_config = ConfigDict(frozen=True, extra="allow")  # the extra sections: registered policies only

    router: policies.Router = policies.Router()
    retrieval: policies.Retrieval = policies.Retrieval()
    rewrite: policies.QueryRewrite = policies.QueryRewrite()
    hyde: policies.HyDE = policies.HyDE()
    round_cap: policies.RoundCap = policies.RoundCap()
    budget: policies.SearchBudget = policies.SearchBudget()
    disclosure: policies.BudgetDisclosure = policies.BudgetDisclosure()
    validation: policies.ControllerValidation = policies.ControllerValidation()
    zero_yield: policies.ZeroYieldStop = policies.ZeroYieldStop()
    finalize: policies.Finalize = policies.Finalize()
    crag: policies.CRAG = policies.CRAG()
    truncation: policies.Truncation = policies.Truncation()
    judge: policies.JudgeInput = policies.JudgeInput()
    generation: policies.Generation = policies.Generation()
    citations: policies.CitationGuard = policies.CitationGuard()
    echo: policies.EchoGuard = policies.EchoGuard()
    sources: policies.SourceContract = policies.SourceContract()
    prompts: policies.Prompts = policies.Prompts()

    @model_validator(mode="before")
    @classmethod
    def _registered_sections(cls, data: Any) -> Any:
        """The sections of policies registered beside the fields: each validated by its class (``Cls()`` when
        absent); a section no policy is registered under is an error."""
        if not isinstance(data, Mapping):
            return data
        unknown = [name for name in data if name not in POLICIES]
        if unknown:
            raise ConfigError(f"unknown policy {unknown[0]!r}; policies: {', '.join(POLICIES)}")
        sections = dict(data)
        for name, policy in POLICIES.items():
            if name not in cls.model_fields:
                value = sections.get(name, {})
                sections[name] = value if isinstance(value, policy) else _section(name, policy, value)
        return sections

    @model_validator(mode="after")
    def _one_expansion(self) -> PipelineConfig:
        if self.rewrite.enabled and self.hyde.enabled:
            raise ConfigError("query expansion is one of none, rewrite or hyde: enable rewrite or hyde, not both")
        return self

    @property
    def max_rounds(self) -> int:
        """The effective round cap: the smaller of ``round_cap`` and ``budget.max_rounds``."""
        return min(self.round_cap.max_rounds, self.budget.max_rounds or self.round_cap.max_rounds)

    # --- dotted keys -------------------------------------------------------------------------

    def flat(self) -> dict[str, Any]:
        """Every parameter as ``{"policy.field": value}``."""
        return {
            f"{name}.{field}": value
            for name in POLICIES
            for field, value in getattr(self, name).model_dump().items()
        }

    def identity(self) -> dict[str, Any]:
        """The parameters that name this config in ids and fingerprints (:mod:`rag_lab.pipeline.identity`): the
        frozen baseline's, every other parameter only off its default (so a parameter added with its default
        changes no stored id), and each removed parameter with the one value it could hold."""
        return stable_identity(self.flat(), type(self)().flat())

    def get(self, key: str) -> Any:
        policy, field = _split(key)
        return getattr(getattr(self, policy), field)

    def with_params(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> PipelineConfig:
        """A copy with the dotted ``values`` changed, validated as a whole; the original is unchanged.
        Keyword form uses ``__`` for the dot, as scikit-learn's ``set_params`` does for nested parameters:
        ``config.with_params(crag__upper=0.6)``. The same verb changes a
        :meth:`~rag_lab.pipeline.Pipeline.with_params` and a
        :meth:`~rag_lab.widgets.PolicyExplorer.with_params`."""
        data = self.model_dump()
        for key, value in dotted_params(values, kwargs).items():
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
        data = without_removed(data, removed(cls().flat()))
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


#: The config sections: section name (the first part of a dotted key) → policy class; the fields first, in
#: field order, then the policies registered later.
POLICIES: Registry[type[policies.Policy]] = Registry("policy")
for _name, _field in PipelineConfig.model_fields.items():
    POLICIES.add(_name, _field.annotation)  # type: ignore[arg-type]
#: Every policy class of the fields, once each.
POLICY_CLASSES: tuple[type[policies.Policy], ...] = tuple(POLICIES.values())


def dotted_params(values: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of a ``with_params`` call as one dict of dotted keys: ``values``, then the keyword form
    ``kwargs`` (``__`` for the dot: ``crag__upper``)."""
    return {**(values or {}), **{k.replace("__", "."): v for k, v in kwargs.items()}}


def stored_parameters(flat: Mapping[str, Any]) -> dict[str, Any]:
    """A flat config as a run directory stores it (:meth:`PipelineConfig.identity`) read back as parameters: the
    removed ones dropped, those it leaves out at their default put back."""
    defaults = PipelineConfig().flat()
    gone = removed(defaults)
    plain = {k: v for k, v in flat.items() if k not in gone}
    return {**plain, **{k: v for k, v in defaults.items() if k not in plain}}


def _section(name: str, policy: type[policies.Policy], value: Any) -> policies.Policy:
    """The section ``name`` of a registered policy, validated by its class (errors name ``name.field``)."""
    try:
        return policy.model_validate(value)
    except ValidationError as exc:
        raise ConfigError("; ".join(f"{name}.{'.'.join(map(str, err['loc']))}: {err['msg']} "
                                    f"({shown_input('.'.join(map(str, err['loc'])), err['input'])})"
                                    for err in exc.errors())) from None


def _split(key: str) -> tuple[str, str]:
    policy, dot, field = key.partition(".")
    if not dot or "." in field:
        raise ConfigError(f"{key!r} is not a dotted key of the form 'policy.field' (e.g. 'crag.upper')")
    if policy not in POLICIES:
        raise ConfigError(f"unknown policy {policy!r} in {key!r}; policies: {', '.join(POLICIES)}")
    fields = POLICIES[policy].model_fields
    if field not in fields:
        raise ConfigError(f"unknown field {field!r} of policy {policy!r}; fields: {', '.join(fields)}")
    return policy, field
