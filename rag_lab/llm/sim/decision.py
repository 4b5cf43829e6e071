"""A controller decision as a reader reaches it, with what the behaviour knobs need to know."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Decision:
    """A controller decision. ``partial``: a multi-part question (comparison, bridge) with some
    part covered and some missing; ``bridge``: the bridge entity the refined query carries;
    ``sufficient``: the evidence already answers the question (the ideal action is answer or
    rerank); ``knobs``: the behaviour knobs that changed the ideal decision, in order."""

    action: str
    queries: tuple[str, ...] = ()
    reason: str = ""
    partial: bool = False
    bridge: str | None = None
    knobs: tuple[str, ...] = ()

    @property
    def sufficient(self) -> bool:
        return self.action in ("answer", "rerank") and not self.knobs

    def as_json(self) -> dict[str, object]:
        return {"action": self.action, "queries": list(self.queries), "reason": self.reason}
