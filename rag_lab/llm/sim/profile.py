"""Behaviour knobs of the simulated LLM (:class:`SimulatorProfile`), its named profiles and its
per-token latency model (:class:`LatencyModel`).

A knob's effect is a property of the simulator, not a measurement of any real model: the
simulator shows how to *measure* an effect; a real model shows whether the effect is real.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rag_lab.errors import ConfigError

KNOBS: tuple[str, ...] = (
    "synonym_spinning",
    "budget_anchoring",
    "premature_stop",
    "bridge_drop",
    "invalid_json",
    "hallucinated_action",
    "wrong_types",
    "comparison_underrate",
)

_Rate = Field(default=0.0, ge=0.0, le=1.0)


class SimulatorProfile(BaseModel):
    """Failure-mode rates of the simulated LLM. Every knob is a probability in [0, 1], drawn
    independently per call from the call's seeded RNG (so a knob at 1.0 always fires where it
    applies and a knob at 0.0 never does); ``ideal`` has every knob at zero.

    Knobs (where each applies, and what it does when it fires):

    * ``synonym_spinning`` — controller, when the evidence already suffices: asks
      ``retrieve_again`` with a paraphrase of the original question (same entities, words swapped
      for synonyms). Re-searching the same source with a paraphrase mostly returns the same chunks,
      which is what a zero-yield stop catches.
    * ``budget_anchoring`` — controller, only when its prompt itself states a budget
      ("at most N searches", found by a regex; "as few searches as possible" is not a budget) and
      fewer than N searches ran: instead of stopping (answer, rerank or insufficient) it keeps
      searching with a paraphrase. Drawn per decision.
    * ``premature_stop`` — controller, on multi-focus questions (comparisons, relation chains):
      answers when only one focus (or only the first hop) is covered, instead of asking for the
      missing one.
    * ``bridge_drop`` — controller, when it asks for the second hop of a relation chain: the
      refined query leaves out the bridge entity found in the evidence and re-uses the question's
      own words instead.
    * ``invalid_json`` — structured roles route and controller: emits text that is not a JSON
      object (truncated JSON, single-quoted keys, unquoted keys, or ``key: value`` prose with no
      braces); none of these can be repaired, so validation falls back.
    * ``hallucinated_action`` — controller: names an action outside the four allowed ones
      (``search_web``, ``lookup``, ``final_answer``…); route: a label outside SIMPLE/COMPLEX.
    * ``wrong_types`` — controller and route: right keys, wrong JSON types (queries as a string,
      action as a list, reason as an object, route as a list).
    * ``comparison_underrate`` — route: a comparison question is classified SIMPLE (small models
      under-rate them; the pipeline's deterministic comparison rule can upgrade it).

    Only one format failure is applied per output (invalid JSON first, then hallucinated action,
    then wrong types). The other structured roles (rewrite, HyDE, judge, grade) always emit valid
    JSON so the format knobs stay attributable to the decisions that matter.

    ``seed`` seeds every per-call RNG; ``name`` labels the profile (it enters the model string).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default="custom", min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_.-]+$")
    seed: int = Field(default=0, ge=0)
    synonym_spinning: float = _Rate
    budget_anchoring: float = _Rate
    premature_stop: float = _Rate
    bridge_drop: float = _Rate
    invalid_json: float = _Rate
    hallucinated_action: float = _Rate
    wrong_types: float = _Rate
    comparison_underrate: float = _Rate

    def knobs(self) -> dict[str, float]:
        """``{knob: rate}`` for every knob, in :data:`KNOBS` order."""
        return {k: getattr(self, k) for k in KNOBS}


#: Named profiles. ``ideal``: every knob off. ``typical``: a capable small instruction-tuned
#: model — each behavioural failure now and then (rates 0.15–0.2) and each format failure at
#: 0.05 (the three together break about one structured output in seven; at 0.1 each they broke
#: over a quarter, and fallbacks then drowned every policy effect). ``sloppy``: a weak model that
#: fails often (rates 0.3–0.5). The numbers are settings of the simulator, chosen to make effects
#: visible, not measurements of any model.
PROFILES: dict[str, SimulatorProfile] = {
    "ideal": SimulatorProfile(name="ideal"),
    "typical": SimulatorProfile(
        name="typical",
        synonym_spinning=0.15,
        budget_anchoring=0.2,
        premature_stop=0.15,
        bridge_drop=0.15,
        invalid_json=0.05,
        hallucinated_action=0.05,
        wrong_types=0.05,
        comparison_underrate=0.2,
    ),
    "sloppy": SimulatorProfile(
        name="sloppy",
        synonym_spinning=0.4,
        budget_anchoring=0.5,
        premature_stop=0.4,
        bridge_drop=0.4,
        invalid_json=0.3,
        hallucinated_action=0.3,
        wrong_types=0.3,
        comparison_underrate=0.5,
    ),
}

ProfileName = Literal["ideal", "typical", "sloppy"]


def get_profile(profile: str | SimulatorProfile, seed: int | None = None) -> SimulatorProfile:
    """A profile by name (or the given one), with ``seed`` replacing its seed when given."""
    if isinstance(profile, str):
        if profile not in PROFILES:
            raise ConfigError(f"unknown simulator profile {profile!r}; choose one of {sorted(PROFILES)}")
        profile = PROFILES[profile]
    if seed is not None:
        profile = SimulatorProfile.model_validate({**profile.model_dump(), "seed": seed})
    return profile


class LatencyModel(BaseModel):
    """The stated per-token speed model behind the simulator's *modelled* latency::

        modelled_latency_s = overhead_s + prompt_tokens / prefill_tokens_per_s
                                        + completion_tokens / decode_tokens_per_s

    Defaults describe a small model on a laptop-class GPU: 2000 tokens/s prefill, 50 tokens/s
    decode, 50 ms fixed overhead per call. The simulator's own wall time is far lower; this is a
    model, reported as such.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    prefill_tokens_per_s: float = Field(default=2000.0, gt=0.0)
    decode_tokens_per_s: float = Field(default=50.0, gt=0.0)
    overhead_s: float = Field(default=0.05, ge=0.0)

    def latency(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Modelled seconds for one call with these token counts."""
        return (
            self.overhead_s
            + prompt_tokens / self.prefill_tokens_per_s
            + completion_tokens / self.decode_tokens_per_s
        )
