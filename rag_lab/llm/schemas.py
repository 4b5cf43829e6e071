"""Response schemas of the LLM roles. Every structured role output is validated against one of these."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rag_lab.errors import ConfigError

ControllerAction = Literal["answer", "rerank", "retrieve_again", "insufficient"]
CONTROLLER_ACTIONS: tuple[str, ...] = get_args(ControllerAction)
Route = Literal["SIMPLE", "COMPLEX"]
ROUTES: tuple[str, ...] = get_args(Route)


class _Schema(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RouteDecision(_Schema):
    """``SIMPLE`` questions take one-shot retrieval; ``COMPLEX`` ones enter the controller loop."""

    route: Route
    reason: str = ""


class Rewrites(_Schema):
    """Alternative phrasings of the user's question for retrieval."""

    queries: list[str] = Field(min_length=1)

    @field_validator("queries")
    @classmethod
    def _non_empty(cls, queries: list[str]) -> list[str]:
        cleaned = [q.strip() for q in queries if q.strip()]
        if not cleaned:
            raise ConfigError("at least one non-empty query is required")
        return cleaned


class HydePassages(_Schema):
    """Hypothetical passages that would answer the question (HyDE)."""

    passages: list[str] = Field(min_length=1)


class _Decision(_Schema):
    """A controller decision's check: ``retrieve_again`` must carry at least one non-empty refined query."""

    @model_validator(mode="after")
    def _queries_match_action(self) -> _Decision:
        if self.action == "retrieve_again" and not any(q.strip() for q in self.queries):  # type: ignore[attr-defined]
            raise ConfigError("retrieve_again needs at least one non-empty refined query")
        return self


class ControllerDecision(_Decision):
    """Exactly one of four actions. ``retrieve_again`` must carry at least one non-empty refined query."""

    action: ControllerAction
    queries: list[str] = Field(default_factory=list)
    reason: str = ""


class ReasonedRouteDecision(_Schema):
    """:class:`RouteDecision` with the reason first and required (prompt set ``v2``): a model whose output a
    JSON-schema grammar constrains writes the fields in the schema's order, so it reasons before it routes."""

    reason: str
    route: Route


class ReasonedControllerDecision(_Decision):
    """:class:`ControllerDecision` with the reason first and every field required (prompt set ``v2``)."""

    reason: str
    action: ControllerAction
    queries: list[str]


class JudgeVerdict(_Schema):
    """Whether the draft answer is supported (with evidence) or useful (draft only)."""

    verdict: Literal["supported", "unsupported"]
    score: float = Field(ge=0.0, le=1.0)
    reason: str = ""


class RelevanceGrade(_Schema):
    """CRAG-style relevance of one chunk to the question, on [-1, 1]."""

    score: float = Field(ge=-1.0, le=1.0)
