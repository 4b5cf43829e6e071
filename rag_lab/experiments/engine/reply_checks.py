"""Replies that failed validation, counted from a sweep's stored traces: per role, the structured replies the
model sent and those that were not valid JSON or did not fit the schema (the trace records each call's validation
``outcome``, :mod:`rag_lab.llm.structured`: ``fallback`` and ``invalid`` failed; a ``repaired`` reply held a valid
object and counts as valid). Above :data:`WARN_RATE` of a role's replies from a real model, ``rag-lab sweep`` and
the report warn: a server that sends garbage inside valid HTTP replies otherwise gives a normal-looking table of
refusals. The simulator's failures are its profile's knobs (invalid JSON, hallucinated actions), set on purpose:
no warning."""

from __future__ import annotations

from typing import Any, NamedTuple

#: The share of a role's replies failing validation above which a sweep warns.
WARN_RATE = 0.2
#: Validation outcomes of a reply that failed (nothing valid was found in it).
FAILED = ("fallback", "invalid")
#: Structured outcomes (a ``text`` reply has no schema to fail).
STRUCTURED = ("valid", "repaired", *FAILED)


class ReplyFailures(NamedTuple):
    """One role's structured ``replies`` over a sweep, those that ``failed`` validation, and of those the ones
    that were ``not_json`` (the rest broke the schema)."""

    role: str
    replies: int
    failed: int
    not_json: int

    @property
    def rate(self) -> float:
        return self.failed / self.replies if self.replies else 0.0

    def warning(self) -> str:
        """``38 of 40 controller replies were not valid JSON: check the model and the server``."""
        if self.not_json == self.failed:
            what = "were not valid JSON"
        elif self.not_json == 0:
            what = "did not fit the reply's schema"
        else:
            what = f"failed validation ({self.not_json} not valid JSON, {self.failed - self.not_json} not the schema's shape)"
        return f"{self.failed:,} of {self.replies:,} {self.role} replies {what}: check the model and the server"


def reply_failures(result: Any) -> list[ReplyFailures]:
    """Per role (in first-seen order), the structured replies of every stored question run of ``result`` (a
    :class:`~rag_lab.experiments.engine.results.SweepResult`) and how many failed validation."""
    counts: dict[str, list[int]] = {}
    for candidate in result.table["candidate_id"]:
        for trace in result.traces(candidate).values():
            for call in trace.llm_calls():
                if call.outcome not in STRUCTURED:
                    continue
                entry = counts.setdefault(call.role, [0, 0, 0])
                entry[0] += 1
                if call.outcome in FAILED:
                    entry[1] += 1
                    entry[2] += int(call.reason.startswith("invalid JSON"))
    return [ReplyFailures(role, n, failed, not_json) for role, (n, failed, not_json) in counts.items()]


def reply_warnings(result: Any, rate: float = WARN_RATE) -> list[str]:
    """One :meth:`ReplyFailures.warning` per role whose replies from a real model failed validation above ``rate``
    (none for the simulator)."""
    if result.provenance.backend.kind == "sim":
        return []
    return [f.warning() for f in reply_failures(result) if f.rate > rate]
