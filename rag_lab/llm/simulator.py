"""The simulated LLM backend: rag_lab's embedded default, deterministic, seeded, offline, fast.

:class:`SimulatedBackend` reads **only the messages of the request it receives** — the sections
built by :mod:`rag_lab.llm.prompts` (QUESTION, SEARCHES, EVIDENCE, DRAFT) and the instruction
text — and answers every role from real signals found there: the evidence text, embedding
similarity with the packaged all-MiniLM-L6-v2 (cached), and the entities and identifiers it can
see. It never opens a dataset, an evaluation set or any label; a test runs it on prompts whose
evaluation labels were scrambled and checks the output bytes do not change.

Roles (``request.role``): ``route``, ``rewrite``, ``hyde``, ``controller``, ``answer``, ``judge``,
``grade``. Each is documented in its module under :mod:`rag_lab.llm.sim`. HyDE passages only
rephrase the question: the simulator has no world knowledge.

Behaviour knobs (:class:`~rag_lab.llm.sim.profile.SimulatorProfile`; profiles ``ideal``,
``typical``, ``sloppy``) switch on the known failure modes of tool-calling models. A knob's effect
is a property of the simulator: it shows how to *measure* an effect; only a real model shows
whether the effect is real.

Determinism: every call's randomness comes from SHA-256 of (seed, role, message texts), so the
same request always gives the same output and a different seed changes the knob draws.
Similarities are rounded to 4 decimals so float noise from batched embedding cannot flip them.

Cost: tokens are counted with the packaged MiniLM WordPiece tokenizer; latency is *modelled*
from a stated per-token speed model (:class:`~rag_lab.llm.sim.profile.LatencyModel`).
"""

from __future__ import annotations

import hashlib
import json
import re

from rag_lab.embedding import Embedder
from rag_lab.llm.base import Generation, LLMBackend, LLMRequest, Message, Usage
from rag_lab.llm.prompts import INSUFFICIENT, parse_evidence, parse_sections
from rag_lab.llm.schemas import ROLES
from rag_lab.llm.sim.answer import answer, template_of
from rag_lab.llm.sim.controller import decide, parse_searches
from rag_lab.llm.sim.evidence import Evidence
from rag_lab.llm.sim.judging import grade, judge_draft_only, judge_with_evidence
from rag_lab.llm.sim.knobs import CallRandom, apply_format_failures
from rag_lab.llm.sim.profile import KNOBS, PROFILES, LatencyModel, SimulatorProfile, get_profile
from rag_lab.llm.sim.question import analyse
from rag_lab.llm.sim.routing import hyde, requested_count, rewrite, route
from rag_lab.llm.sim.tokens import TokenCounter
from rag_lab.llm.sim.vectors import Similarity

__all__ = ["SimulatedBackend", "SimulatorProfile", "LatencyModel", "PROFILES", "KNOBS", "SIM_VERSION"]

#: Bumped whenever the simulator's behaviour changes, so cached responses of an older
#: simulator are never served for a newer one (it is folded into the cache identity).
SIM_VERSION = "sim-1"
_TAG = re.compile(r"^\[([a-z]+)-v\d+\]")


class SimulatedBackend(LLMBackend):
    """The deterministic, offline LLM that every experiment runs on by default.

    ``profile``: a profile name (``ideal``, ``typical``, ``sloppy``) or a
    :class:`SimulatorProfile`; ``seed`` overrides the profile's seed; ``latency`` is the stated
    speed model behind ``modelled_latency_s``; ``embedder`` replaces the packaged MiniLM (for
    similarity only); ``sentence_items`` is how many of the most similar evidence items the answer
    role also reads sentence by sentence with embeddings (0: lexical sentence choice only, no
    sentence embeddings, a faster cold start). The model name is ``sim-{profile}-s{seed}``; :meth:`cache_identity` adds a
    digest of every knob and the latency model, so caches never mix profiles.
    """

    name = "simulated"

    def __init__(
        self,
        profile: str | SimulatorProfile = "typical",
        seed: int | None = None,
        latency: LatencyModel | None = None,
        embedder: Embedder | None = None,
        similarity: Similarity | None = None,
        tokens: TokenCounter | None = None,
        sentence_items: int = 4,
    ) -> None:
        self.profile = get_profile(profile, seed)
        self.latency = latency if latency is not None else LatencyModel()
        super().__init__(f"sim-{self.profile.name}-s{self.profile.seed}")
        self.similarity = similarity if similarity is not None else Similarity(embedder)
        self.tokens = tokens if tokens is not None else TokenCounter()
        if sentence_items < 0:
            raise ValueError(f"sentence_items must be >= 0, got {sentence_items}")
        self.sentence_items = sentence_items

    def cache_identity(self) -> tuple[str, str]:
        blob = json.dumps(
            {"profile": self.profile.model_dump(), "latency": self.latency.model_dump(), "version": SIM_VERSION,
             "sentence_items": self.sentence_items,
             "embedder": self.similarity.label},
            sort_keys=True,
        )
        return self.name, f"{self.model}-{hashlib.sha256(blob.encode()).hexdigest()[:12]}"

    # --- the backend interface ----------------------------------------------------------------

    def _generate(self, request: LLMRequest) -> Generation:
        text = self.respond(request.role, request.messages)
        max_tokens = request.params.max_tokens
        completion = self.tokens.count(text)
        if completion > max_tokens:
            text = self.tokens.truncate(text, max_tokens)
            completion = max_tokens
        prompt = self.tokens.prompt_tokens(request.messages)
        return Generation(
            text=text,
            usage=Usage(prompt_tokens=prompt, completion_tokens=completion),
            modelled_latency_s=round(self.latency.latency(prompt, completion), 6),
        )

    def respond(self, role: str, messages: tuple[Message, ...] | list[Message]) -> str:
        """The raw output text for ``role`` given ``messages`` (no validation, no accounting)."""
        return self.explain(role, messages)[0]

    def explain(self, role: str, messages: tuple[Message, ...] | list[Message]) -> tuple[str, str | None]:
        """The raw output text and the behaviour knob or format failure that shaped it (``None``
        when the output is the ideal one)."""
        system = "\n".join(m.content for m in messages if m.role == "system")
        role = self._resolve_role(role, system)
        user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        sections = parse_sections(user)
        question = sections.get("QUESTION", user).strip()
        draws = CallRandom(self.profile, role, messages)
        qa = analyse(question)
        knob: str | None = None

        if role == "route":
            obj, knob = route(qa, draws)
            text, failure = apply_format_failures(obj, draws)
            knob = failure or knob
        elif role == "rewrite":
            text = json.dumps(rewrite(question, requested_count(system), draws))
        elif role == "hyde":
            text = json.dumps(hyde(question, requested_count(system), draws))
        elif role == "controller":
            ev = self._evidence(qa, sections)
            searches = parse_searches(sections.get("SEARCHES", ""))
            decision = decide(qa, ev, searches, system, draws)
            text, failure = apply_format_failures(decision.as_json(), draws)
            knob = failure or decision.knob
        elif role == "answer":
            ev = self._evidence(qa, sections)
            text = answer(qa, ev, template_of(system))
        elif role == "judge":
            draft = sections.get("DRAFT", "")
            if "EVIDENCE" in sections:
                verdict = judge_with_evidence(qa, draft, self._evidence(qa, sections))
            else:
                verdict = judge_draft_only(qa, draft)
            text = json.dumps(verdict)
        else:  # grade
            text = json.dumps(grade(qa, self._evidence(qa, sections)))
        return (text if text else INSUFFICIENT), knob

    @staticmethod
    def _resolve_role(role: str, system: str) -> str:
        """The role to play: ``role`` when it is a pipeline role; for a generic ``chat`` request
        (e.g. through ``rag-lab serve`` without a role header) the role named by the prompt's
        version tag (``[controller-v1] …``), else ``answer`` (extractive, or INSUFFICIENT)."""
        if role in ROLES:
            return role
        tag = _TAG.match(system)
        if tag and tag.group(1) in ROLES:
            return tag.group(1)
        if role == "chat":
            return "answer"
        raise ValueError(f"the simulated backend has no role {role!r}; roles: {', '.join(ROLES)} (or chat)")

    def _evidence(self, qa, sections: dict[str, str]) -> Evidence:  # noqa: ANN001
        return Evidence(qa, parse_evidence(sections.get("EVIDENCE", "")), self.similarity,
                        sentence_items=self.sentence_items)

    def __repr__(self) -> str:
        return f"SimulatedBackend(model={self.model!r}, profile={self.profile.name!r})"
