"""The repeated-query stop, a policy in one module: the loop ends when every refined query the controller asks for
nearly repeats one it already ran — the query rewritten again and again with no new evidence (the first design
article's failure). "Nearly" is the share of content words two queries have in common (Jaccard), at
``threshold`` or above. Off by default; registered here as a policy section and a row of the stop table, so
neither the loop nor the identity code knows of it (``repeated_query.threshold`` is a sweep key, and the widgets
offer it, because both derive from :data:`~rag_lab.pipeline.config.POLICIES`)."""

from __future__ import annotations

from pydantic import Field

from rag_lab.pipeline.config import POLICIES
from rag_lab.pipeline.policies import Policy
from rag_lab.pipeline.resources import content_words
from rag_lab.pipeline.stop_rules import STOP_RULES, StopCheck, StopRule


class RepeatedQueryStop(Policy):
    """Stop the loop (``repeated_query``) when each refined query shares ``threshold`` or more of its content words
    (Jaccard) with a query already run; the answer is made from what was gathered."""

    enabled: bool = False
    threshold: float = Field(default=0.8, ge=0.05, le=1.0)


def similarity(a: str, b: str) -> float:
    """The share of content words two queries have in common (Jaccard; 1.0 for two with none)."""
    wa, wb = content_words(a), content_words(b)
    return len(wa & wb) / len(wa | wb) if wa | wb else 1.0


def nearest(query: str, searches: list[str]) -> tuple[float, str]:
    """The query already run most like ``query``, with its similarity."""
    return max(((similarity(query, s), s) for s in searches), default=(0.0, ""))


def _fires(policy: RepeatedQueryStop, check: StopCheck) -> bool:
    return (policy.enabled and check.asks_round and bool(check.state.searches)
            and all(nearest(q, check.state.searches)[0] >= policy.threshold for q in check.queries))


def _says(policy: RepeatedQueryStop, check: StopCheck) -> str:
    score, ran = nearest(check.queries[0], check.state.searches)
    return (f"repeated-query stop: {check.queries[0]!r} nearly repeats {ran!r} "
            f"(similarity {score:.2f} ≥ {policy.threshold})")


POLICIES.add("repeated_query", RepeatedQueryStop)
STOP_RULES.add("repeated_query", StopRule("decision", "repeated_query", _fires, policy="repeated_query",
                                          code="repeated_query", says=_says))
