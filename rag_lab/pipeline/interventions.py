"""What a policy did to one question, as a code (:data:`INTERVENTION_CODES`): every intervention in a trace step
carries one beside its plain-words text; code that looks for an event matches the code, never the text. A code
names the event, not its numbers; a stop rule registered later brings its own code."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator

from rag_lab.registry import Registry


class Intervention(StrEnum):
    """One kind of policy intervention, by the step that records it."""

    # route
    ROUTER_DISABLED = "router_disabled"
    """The router is off: every question enters the loop."""
    COMPARISON_UPGRADE = "comparison_upgrade"
    """Comparison wording upgraded a SIMPLE route to COMPLEX."""
    CLOSED_BOOK = "closed_book"
    """The closed-book reader (``generation.reader=closed_book``): no route, no retrieval, the question alone."""
    # retrieve
    SOURCE_REMOVED = "source_removed"
    """The source contract removed chunks of a type the route does not allow."""
    SOURCE_FAIL_OPEN = "source_fail_open"
    """Fail-open: the contract left nothing, so the unfiltered (off-contract) hits were used."""
    ZERO_YIELD_STOP = "zero_yield_stop"
    """The round brought no new chunk and the zero-yield stop ended the loop."""
    # controller
    INVALID_FALLBACK = "invalid_fallback"
    """Invalid controller output was replaced by the deterministic fallback decision."""
    INVALID_REFUSED = "invalid_refused"
    """Invalid controller output was refused (``validation.on_invalid=refuse``)."""
    REJECTED_NO_EVIDENCE = "rejected_no_evidence"
    """Policy rejection: answer or rerank with no usable evidence."""
    REJECTED_CAP = "rejected_cap"
    """Policy rejection: a retrieval round requested past the round cap."""
    REJECTED_TOKENS = "rejected_tokens"
    """Policy rejection: the token budget is exhausted."""
    REJECTED_TIME = "rejected_time"
    """Policy rejection: the time budget is exhausted."""
    # fallback
    EMPTY_FALLBACK = "empty_fallback"
    """Nothing was found in any round: one-shot retrieval with the original question."""
    # finalize
    NO_CONTEXT = "no_context"
    """The run ends in a refusal before finalize builds a context."""
    RERANK_REQUESTED = "rerank_requested"
    """The controller asked to rerank: evidence ordered by relevance before truncation."""
    CRAG_DISCARDED = "crag_discarded"
    """CRAG graded the evidence Incorrect: every chunk discarded."""
    CRAG_DROPPED = "crag_dropped"
    """CRAG dropped chunks below its lower threshold."""
    # guard
    REFUSED_EMPTY_CONTEXT = "refused_empty_context"
    """The guard refused: the final context is empty."""
    REFUSED_INSUFFICIENT = "refused_insufficient"
    """The guard refused: the generator reported insufficient evidence."""
    REFUSED_BELOW_THRESHOLD = "refused_below_threshold"
    """The guard refused: the best relevance is below the refusal threshold."""
    ECHO = "echo"
    """The echo guard found the draft a copy of its prompt: not an answer."""
    CITATIONS_REMOVED = "citations_removed"
    """The guard removed citations outside the context or past ``max_citations``."""
    REFUSED_UNCITED = "refused_uncited"
    """The guard refused: no valid citation to the context remains."""
    KEPT_UNCITED = "kept_uncited"
    """No valid citation remains, and the answer was kept (``citations.require_citation=false``)."""
    PLAIN_READER = "plain_reader"
    """The plain reader wrote the answer (``generation.reader=plain``): no guard but the model's own refusal."""
    # judge
    JUDGE_REFUSED = "judge_refused"
    """The judge found the answer unsupported: refused."""


#: Every code a trace step may record: :class:`Intervention`'s (each mapped to its member), then the codes of stop
#: rules registered later (each a plain string).
INTERVENTION_CODES: Registry[str] = Registry("intervention code")
for _code in Intervention:
    INTERVENTION_CODES.add(_code.value, _code)


def intervention_code(code: str) -> str:
    """``code`` as a trace records it: the :class:`Intervention` member, or a registered stop rule's code."""
    return INTERVENTION_CODES[code]


#: The type of a recorded code (a ``str``; JSON and equality are the value's).
InterventionCode = Annotated[str, AfterValidator(intervention_code)]
