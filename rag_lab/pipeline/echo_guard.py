"""The echo guard (:func:`check_echo`, policy ``echo``): a draft that parrots its prompt is not an answer. On normalized
tokens it measures the longest run copied from the system instructions (or the prompt's section markers), the share of
the evidence reproduced in long runs (by a draft longer than a short answer), and the share of the draft copied from the
question; each is flagged at its threshold of :class:`~rag_lab.pipeline.policies.EchoGuard`. The measurements stay in
the trace whether or not they flag; a flagged draft gets the status ``echo`` and the refusal text. The method:
docs/backends.md, "A metric a parrot cannot beat"."""

from __future__ import annotations

import re
from typing import NamedTuple

from rag_lab.pipeline.policies import EchoGuard
from rag_lab.text_overlap import answer_tokens, covered_share, longest_run, tokens

#: The prompt's section delimiters (:mod:`rag_lab.llm.prompts`), in any case and however many closing
#: brackets: a draft that contains one is echoing the prompt (SmolLM2 writes "<<<Question>>").
PROMPT_MARKER = re.compile(r"<<<\s*(?:END\s+)?(?:QUESTION|EVIDENCE|SEARCHES|DRAFT)\b>*", re.IGNORECASE)


class EchoCheck(NamedTuple):
    """What the guard measured on one draft, and why it flagged it (``reasons`` empty: not an echo)."""

    draft_tokens: int
    instruction_run: int
    evidence_copied: float
    question_copied: float
    markers: tuple[str, ...]
    reasons: tuple[str, ...]

    @property
    def flagged(self) -> bool:
        return bool(self.reasons)

    def as_detail(self) -> dict[str, object]:
        """A JSON-ready record for the trace."""
        return {"draft_tokens": self.draft_tokens, "instruction_run": self.instruction_run,
                "evidence_copied": round(self.evidence_copied, 4), "question_copied": round(self.question_copied, 4),
                "markers": list(self.markers), "flagged": self.flagged, "reasons": list(self.reasons)}


def check_echo(draft: str, instructions: str, evidence: list[str], question: str, policy: EchoGuard) -> EchoCheck:
    """Measure ``draft`` against the prompt it answered: the system ``instructions``, the
    ``evidence`` texts and the ``question`` (see the module doc)."""
    toks = answer_tokens(draft)
    run = longest_run(toks, tokens(instructions))
    evidence_share = covered_share(tokens(" ".join(evidence)), toks, policy.copy_run)
    question_share = covered_share(toks, tokens(question), policy.question_run) if len(toks) > policy.question_run else 0.0
    markers = tuple(dict.fromkeys(m.group(0) for m in PROMPT_MARKER.finditer(draft)))
    reasons: list[str] = []
    if markers:
        reasons.append(f"the draft contains the prompt's section markers ({', '.join(markers)})")
    if run >= policy.instruction_run:
        reasons.append(f"the draft reproduces the instructions (a run of {run} tokens ≥ {policy.instruction_run})")
    if evidence_share >= policy.evidence_share and len(toks) > policy.short_answer_tokens:
        reasons.append(f"the draft copies {evidence_share:.0%} of the evidence (≥ {policy.evidence_share:.0%}) "
                       f"in {len(toks)} tokens (> {policy.short_answer_tokens})")
    if question_share >= policy.question_share:
        reasons.append(f"{question_share:.0%} of the draft is copied from the question (≥ {policy.question_share:.0%})")
    return EchoCheck(len(toks), run, evidence_share, question_share, markers, tuple(reasons))
