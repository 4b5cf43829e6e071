"""The simulated LLM backend (:class:`SimulatedBackend`): rag_lab's embedded default, deterministic, seeded,
offline, fast. It reads only the messages of the request it receives — never a dataset or a label
(``tests/test_sim_honesty.py`` audits it); each role's output comes from its row of
:data:`~rag_lab.llm.role_table.LLM_ROLES`. The design: docs/backends.md, "Simulated" and "The simulator, part by part"."""

from __future__ import annotations

import hashlib
import json

from rag_lab.embedding import Embedder
from rag_lab.errors import ConfigError
from rag_lab.llm.base import Completion, LLMBackend, LLMRequest, Message, Usage
from rag_lab.llm.prompts import INSUFFICIENT
from rag_lab.llm.role_table import LLM_ROLES
from rag_lab.llm.sim.ideal import IdealModel
from rag_lab.llm.sim.knobs import CallRandom, apply_format_failures
from rag_lab.llm.sim.profile import KNOBS, PROFILES, LatencyModel, SimulatorProfile, get_profile
from rag_lab.llm.sim.prompt import read_prompt
from rag_lab.llm.sim.similarity import Similarity
from rag_lab.llm.sim.tokens import TokenCounter

__all__ = ["SimulatedBackend", "SimulatorProfile", "LatencyModel", "PROFILES", "KNOBS", "SIM_VERSION"]

#: Bumped whenever the simulator's behaviour changes, so cached responses of an older
#: simulator are never served for a newer one (it is folded into the cache identity).
#: sim-12: sim-11 (issue 22's reader, issue 19's thrift and CRN), and a subject question's verb is what it
#: asks, one relation read in other words (married / wife), a chain followed through a name in the text
SIM_VERSION = "sim-12"


class SimulatedBackend(LLMBackend):
    """The deterministic, offline LLM that every experiment runs on by default. ``profile``: a profile name or a
    :class:`SimulatorProfile`; ``seed`` overrides its seed; ``latency``: the speed model behind
    ``modelled_latency_s``; ``embedder`` replaces the packaged MiniLM (similarity only); ``sentence_items``: how many
    of the most similar evidence items the answer role also reads sentence by sentence with embeddings (0: lexical
    only, a faster cold start). The model name is ``sim-{profile}-s{seed}``; :meth:`cache_identity` adds a digest of
    every knob and the latency model."""

    name = "simulated"

    def __init__(self, profile: str | SimulatorProfile = "typical", seed: int | None = None,
                 latency: LatencyModel | None = None, embedder: Embedder | None = None,
                 similarity: Similarity | None = None, tokens: TokenCounter | None = None,
                 sentence_items: int = 4) -> None:
        self.profile = get_profile(profile, seed)
        self.latency = latency if latency is not None else LatencyModel()
        super().__init__(f"sim-{self.profile.name}-s{self.profile.seed}")
        self.similarity = similarity if similarity is not None else Similarity(embedder)
        self.tokens = tokens if tokens is not None else TokenCounter()
        if sentence_items < 0:
            raise ConfigError(f"sentence_items must be >= 0, got {sentence_items}")
        self.sentence_items = sentence_items
        self.model_ideal = IdealModel(self.similarity, sentence_items)

    def cache_identity(self) -> tuple[str, str]:
        blob = json.dumps(
            {"profile": self.profile.model_dump(), "latency": self.latency.model_dump(), "version": SIM_VERSION,
             "sentence_items": self.sentence_items,
             "embedder": self.similarity.label},
            sort_keys=True)
        return self.name, f"{self.model}-{hashlib.sha256(blob.encode()).hexdigest()[:12]}"

    # --- the backend interface ----------------------------------------------------------------

    def _generate(self, request: LLMRequest) -> Completion:
        text, knobs = self.explain(request.role, request.messages)
        max_tokens = request.params.max_tokens
        completion = self.tokens.count(text)
        if completion > max_tokens:
            text = self.tokens.truncate(text, max_tokens)
            completion = max_tokens
        prompt = self.tokens.prompt_tokens(request.messages)
        return Completion(text=text, usage=Usage(prompt_tokens=prompt, completion_tokens=completion),
                          modelled_latency_s=round(self.latency.latency(prompt, completion), 6), knobs=knobs)

    def respond(self, role: str, messages: tuple[Message, ...] | list[Message]) -> str:
        """The raw output text for ``role`` given ``messages`` (no validation, no accounting)."""
        return self.explain(role, messages)[0]

    def explain(self, role: str, messages: tuple[Message, ...] | list[Message]) -> tuple[str, list[dict]]:
        """The raw output text and the record of every behaviour knob drawn where it applied
        (``{"knob", "rate", "draw", "fired"}``, in the order drawn; empty when none applied)."""
        p = read_prompt(role, messages)
        row = LLM_ROLES[p.role]
        # common random numbers keyed by decision (the role's step: the controller's is the rounds already run)
        draws = CallRandom(self.profile, p.role, p.question, step=row.step(p))
        out = row.simulate(self.model_ideal, p, draws)
        if row.breaks_format:
            text, _ = apply_format_failures(out, draws)  # type: ignore[arg-type]
        else:
            text = out if isinstance(out, str) else json.dumps(out)
        return (text if text else INSUFFICIENT), draws.record

    def __repr__(self) -> str:
        return f"SimulatedBackend(model={self.model!r}, profile={self.profile.name!r})"
