"""The simulated LLM backend: rag_lab's embedded default, deterministic, seeded, offline, fast.

:class:`SimulatedBackend` reads **only the messages of the request it receives** — the sections
built by :mod:`rag_lab.llm.prompts` (QUESTION, SEARCHES, EVIDENCE, DRAFT) and the instruction
text — and answers every role from generic signals found there (:mod:`rag_lab.llm.sim.reader`):
sentences, embedding similarity with the packaged all-MiniLM-L6-v2 (cached), capitalised names,
numbers and dates, question words, and which evidence item's title another item names. Reading
tuned to the synthetic world is an opt-in adapter (``SimulatorProfile(reader="world")``). It never
opens a dataset, an evaluation set or any label: ``tests/test_sim_honesty.py`` runs it in a
subprocess under an audit hook that fails on any such open or import, and checks that its answers
follow counterfactual edits of the evidence.

Roles (``request.role``): ``route``, ``rewrite``, ``hyde``, ``controller``, ``answer``, ``judge``,
``grade``. Each is documented in its module under :mod:`rag_lab.llm.sim`. HyDE passages only
rephrase the question: the simulator has no world knowledge.

Behaviour knobs (:class:`~rag_lab.llm.sim.profile.SimulatorProfile`; profiles ``ideal``,
``typical``, ``sloppy``) switch on the known failure modes of tool-calling models. A knob's effect
is a property of the simulator: it shows how to *measure* an effect; only a real model shows
whether the effect is real.

Determinism and common random numbers: every knob draw is SHA-256 of (seed, role, question, step
index, knob) — not of the evidence — so the same request always gives the same output, another
seed changes the draws, and two configurations that differ in one policy face the same model
"mood" on the same question. Every knob drawn is recorded on the generation (``Generation.knobs``)
and from there in the trace (``LLMCall.knobs``).
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
from rag_lab.llm.sim.answer import template_of
from rag_lab.llm.sim.controller import apply_knobs, parse_searches
from rag_lab.llm.sim.knobs import CallRandom, apply_format_failures
from rag_lab.llm.sim.profile import KNOBS, PROFILES, LatencyModel, SimulatorProfile, get_profile
from rag_lab.llm.sim.reader import make_reader
from rag_lab.llm.sim.routing import apply_route_knob, requested_count
from rag_lab.llm.sim.tokens import TokenCounter
from rag_lab.llm.sim.vectors import Similarity

__all__ = ["SimulatedBackend", "SimulatorProfile", "LatencyModel", "PROFILES", "KNOBS", "SIM_VERSION"]

#: Bumped whenever the simulator's behaviour changes, so cached responses of an older
#: simulator are never served for a newer one (it is folded into the cache identity).
SIM_VERSION = "sim-3"
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
        self.reader = make_reader(self.profile.reader, self.similarity, sentence_items)

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
        text, knobs = self.explain(request.role, request.messages)
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
            knobs=knobs,
        )

    def respond(self, role: str, messages: tuple[Message, ...] | list[Message]) -> str:
        """The raw output text for ``role`` given ``messages`` (no validation, no accounting)."""
        return self.explain(role, messages)[0]

    def explain(self, role: str, messages: tuple[Message, ...] | list[Message]) -> tuple[str, list[dict]]:
        """The raw output text and the record of every behaviour knob drawn where it applied
        (``{"knob", "rate", "draw", "fired"}``, in the order drawn; empty when none applied)."""
        system = "\n".join(m.content for m in messages if m.role == "system")
        role = self._resolve_role(role, system)
        user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        sections = parse_sections(user)
        question = sections.get("QUESTION", user).strip()
        searches = parse_searches(sections.get("SEARCHES", ""))
        draws = CallRandom(self.profile, role, question, step=len(searches) if role == "controller" else 0)
        reader = self.reader
        items = parse_evidence(sections.get("EVIDENCE", ""))

        if role == "route":
            obj = apply_route_knob(reader.route(question), reader.is_comparison(question), draws)
            text, _ = apply_format_failures(obj, draws)
        elif role == "rewrite":
            text = json.dumps({"queries": reader.rewrite(question, requested_count(system), draws.rng)})
        elif role == "hyde":
            text = json.dumps({"passages": reader.hyde(question, requested_count(system), draws.rng)})
        elif role == "controller":
            ideal = reader.decide(question, items, searches)
            decision = apply_knobs(ideal, reader, question, searches, system, draws)
            text, _ = apply_format_failures(decision.as_json(), draws)
        elif role == "answer":
            text = reader.answer(question, items, template_of(system), lambda: draws.fires("premature_stop"))
        elif role == "judge":
            text = json.dumps(reader.judge(question, sections.get("DRAFT", ""),
                                           items if "EVIDENCE" in sections else None))
        else:  # grade
            text = json.dumps(reader.grade(question, items[0]) if items else {"score": -1.0})
        return (text if text else INSUFFICIENT), draws.record

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

    def __repr__(self) -> str:
        return f"SimulatedBackend(model={self.model!r}, profile={self.profile.name!r})"
