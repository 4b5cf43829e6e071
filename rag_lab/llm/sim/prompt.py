"""Prompt parsing: everything the simulator learns from a request, read off its messages only.

:func:`read_prompt` turns the messages into a :class:`Prompt` — the role to play, the question,
the searches already run, the numbered evidence, the draft a judge is shown, the answer template
the instructions select, the count a rewrite/HyDE instruction asks for and the search budget the
controller instructions state (if any). Nothing else in the simulator looks at the raw messages."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag_lab.llm.base import Message
from rag_lab.llm.prompts import EvidenceItem, parse_evidence, parse_searches, parse_sections
from rag_lab.llm.role_table import resolve_role

#: A budget stated in the prompt: "at most 3 searches", "no more than 2 retrieval rounds".
_BUDGET = re.compile(
    r"\b(?:at most|no more than|up to|maximum of|max(?:imum)?)\s+(\d+)\s+(?:searches|search(?:es)? rounds?|"
    r"retrieval rounds?|rounds?|retrievals?|queries|tool calls)\b",
    re.IGNORECASE,
)
_RUN = re.compile(r"\b(\d+)\s+(?:rounds?\s+of\s+searches\s+)?(?:have|has)\s+been\s+run\b", re.IGNORECASE)
_N = re.compile(r"\bWrite (\d+) (?:alternative|short hypothetical|hypothetical)", re.IGNORECASE)


def stated_budget(system_text: str) -> int | None:
    """The budget the prompt states, in its own unit ("at most N rounds of searches", "at most N
    searches", "up to N tool calls"), or None when it states none ("as few rounds as possible")."""
    m = _BUDGET.search(system_text)
    return int(m.group(1)) if m else None


def rounds_run(system_text: str, searches: list[str]) -> int:
    """How many rounds of searches ran: the number the prompt states ("2 have been run", "1 round of searches has
    been run"), else the SEARCHES listed (one round each)."""
    m = _RUN.search(system_text)
    return int(m.group(1)) if m else len(searches)


@dataclass(frozen=True)
class Prompt:
    """One request as the simulator reads it. ``items`` is ``None`` when the prompt has no EVIDENCE
    section at all (a draft-only judge), ``[]`` when the section is empty."""

    role: str
    system: str
    question: str
    searches: list[str] = field(default_factory=list)
    items: list[EvidenceItem] | None = None
    draft: str = ""

    @property
    def evidence(self) -> list[EvidenceItem]:
        return self.items or []

    @property
    def budget(self) -> int | None:
        return stated_budget(self.system)

    @property
    def rounds_run(self) -> int:
        return rounds_run(self.system, self.searches)

    @property
    def template(self) -> str:
        """Which answer template the prompt uses: ``fallback``, ``ambiguous`` or ``correct``."""
        if "No usable evidence was found" in self.system:
            return "fallback"
        if "may be only partly relevant" in self.system or "confidence is low" in self.system:
            return "ambiguous"
        return "correct"

    @property
    def count(self) -> int:
        """The ``n`` the instruction asks for ("Write 3 alternative search queries"; 3 when it names none)."""
        m = _N.search(self.system)
        return max(1, min(16, int(m.group(1)))) if m else 3


def read_prompt(role: str, messages: tuple[Message, ...] | list[Message]) -> Prompt:
    """The :class:`Prompt` of a request: its system text, its last user message's sections."""
    system = "\n".join(m.content for m in messages if m.role == "system")
    user = next((m.content for m in reversed(messages) if m.role == "user"), "")
    sections = parse_sections(user)
    return Prompt(
        role=resolve_role(role, system), system=system, question=sections.get("QUESTION", user).strip(),
        searches=parse_searches(sections.get("SEARCHES", "")),
        items=parse_evidence(sections["EVIDENCE"]) if "EVIDENCE" in sections else None,
        draft=sections.get("DRAFT", ""))
