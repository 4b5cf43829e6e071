"""Behaviour knobs of the simulated LLM (:class:`SimulatorProfile`), its named profiles and its
per-token latency model (:class:`LatencyModel`).

A knob's effect is a property of the simulator, not a measurement of any real model: the
simulator shows how to *measure* an effect; a real model shows whether the effect is real.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rag_lab.errors import ConfigError

KNOBS: tuple[str, ...] = (
    "synonym_spinning",
    "budget_anchoring",
    "budget_thrift",
    "premature_stop",
    "bridge_drop",
    "invalid_json",
    "hallucinated_action",
    "wrong_types",
    "comparison_underrate",
    "route_underrate",
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
      ("at most N rounds of searches", found by a regex; "as few rounds as possible" is not a
      budget) and fewer than N rounds ran: instead of stopping (answer, rerank or insufficient) it
      keeps searching with a paraphrase. Drawn per decision.
    * ``budget_thrift`` — the opposite reaction to a stated budget: controller, only when its prompt
      states a budget, when no other knob changed the decision and the ideal decision is one more
      search although the evidence already holds an answer the model would settle for once its
      searches were spent (:func:`~rag_lab.llm.sim.knobs.settles`; a comparison with a side missing
      never settles): a model that knows its budget stops there and answers — fewer rounds than it
      would otherwise take, and sometimes a worse answer (the search it skipped could have found the
      next hop). Independent of ``synonym_spinning``, and its opportunities (a search) are disjoint
      from anchoring's (a stop), so neither undoes the other: the sign of disclosure's effect on
      rounds is the balance of the two knobs' firings on the opportunities the data offers
      (``anchored`` raises rounds, ``thrifty`` lowers them; ``typical`` and ``sloppy`` depend on the
      questions), measured by a run, not fixed by code.
    * ``premature_stop`` — controller, on multi-part questions (comparisons, bridges): answers when
      only one part is covered, instead of asking for the missing one; answer role, when the
      evidence covers only part of the question: a confident answer from that partial evidence
      (the one compared fact, or the first hop) instead of ``INSUFFICIENT``.
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
    * ``route_underrate`` — route: any other question the reader routes COMPLEX (a chain of lookups, a
      described subject) is classified SIMPLE: a model that sends everything down the one-shot path
      (Qwen2.5-Coder-1.5B routed every recorded HotpotQA question SIMPLE). No named profile sets it (0.0):
      it comes from a calibration (``rag-lab calibrate``) or an override.

    Only one format failure is applied per output (invalid JSON first, then hallucinated action,
    then wrong types; a later one has an opportunity only when the earlier ones did not fire), so
    the share of structured outputs broken is ``1 - (1-a)(1-b)(1-c)``: 0.143 for ``typical``
    (0.05 each) and 0.271 for ``sloppy`` (0.1 each). The other structured roles (rewrite, HyDE,
    judge, grade) always emit valid JSON so the format knobs stay attributable to the decisions
    that matter.

    Draws are common random numbers (:class:`~rag_lab.llm.sim.knobs.CallRandom`): a function of
    (seed, role, question, decision index — for the controller the rounds already run), not of the
    evidence or the rest of the prompt. Every opportunity and firing is recorded in
    the trace (``LLMCall.knobs``), and observed rates per role are reported next to these.

    ``seed`` seeds every per-call RNG; ``name`` labels the profile (it enters the model string).
    No field selects a reader: the simulator has one (:mod:`rag_lab.llm.sim.ideal`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default="custom", min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_.-]+$")
    seed: int = Field(default=0, ge=0)
    synonym_spinning: float = _Rate
    budget_anchoring: float = _Rate
    budget_thrift: float = _Rate
    premature_stop: float = _Rate
    bridge_drop: float = _Rate
    invalid_json: float = _Rate
    hallucinated_action: float = _Rate
    wrong_types: float = _Rate
    comparison_underrate: float = _Rate
    route_underrate: float = _Rate

    def knobs(self) -> dict[str, float]:
        """``{knob: rate}`` for every knob, in :data:`KNOBS` order."""
        return {k: getattr(self, k) for k in KNOBS}


#: Named profiles. ``ideal``: every knob off. ``typical``: a capable small instruction-tuned
#: model — each behavioural failure now and then (rates 0.15–0.2) and each format failure at
#: 0.05 (the three together break 14.3% of structured outputs). ``sloppy``: a weak model whose
#: behavioural failures are frequent (0.3–0.5) and whose format failures break 27.1% of
#: structured outputs (0.1 each; at 0.3 each two thirds fell back and fallbacks drowned every
#: policy effect). ``anchored`` and ``thrifty``: ``typical`` with the two reactions to a stated
#: budget set apart — ``anchored`` the model of the agent article (told "at most 4 calls", simple
#: questions ran all four: 3.2 rounds against 1.8 with the cap hidden; anchoring 0.9, thrift 0.05),
#: ``thrifty`` a model that economises a budget it knows (thrift 0.8, anchoring 0.05). On the
#: world's 80 test questions at a cap of 4 (router and zero-yield stop off) disclosure moves rounds
#: 1.66 → 2.74 under ``anchored`` and 1.66 → 1.4 under ``thrifty``
#: (``tests/test_sim_knobs.py::test_disclosure_sign_is_measured``). The numbers are settings of
#: the simulator, chosen to make effects visible, not measurements of any model.
PROFILES: dict[str, SimulatorProfile] = {
    "ideal": SimulatorProfile(name="ideal"),
    "typical": SimulatorProfile(
        name="typical",
        synonym_spinning=0.15,
        budget_anchoring=0.2,
        budget_thrift=0.15,
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
        budget_thrift=0.3,
        premature_stop=0.4,
        bridge_drop=0.4,
        invalid_json=0.1,
        hallucinated_action=0.1,
        wrong_types=0.1,
        comparison_underrate=0.5,
    ),
}
PROFILES["anchored"] = SimulatorProfile.model_validate(
    {**PROFILES["typical"].model_dump(), "name": "anchored", "budget_anchoring": 0.9, "budget_thrift": 0.05})
PROFILES["thrifty"] = SimulatorProfile.model_validate(
    {**PROFILES["typical"].model_dump(), "name": "thrifty", "budget_anchoring": 0.05, "budget_thrift": 0.8})

ProfileName = Literal["ideal", "typical", "sloppy", "anchored", "thrifty"]


#: File suffixes read as a profile file (YAML, or JSON for ``.json``) rather than a profile name.
PROFILE_FILE_SUFFIXES = (".yaml", ".yml", ".json")
#: The key of a profile file that holds how it was made (``rag-lab calibrate`` writes it); the
#: simulator ignores it.
CALIBRATION_KEY = "calibration"


def is_profile_file(profile: str) -> bool:
    """Whether ``profile`` names a profile file (a YAML/JSON suffix, or a path separator) rather
    than a named profile."""
    return profile.lower().endswith(PROFILE_FILE_SUFFIXES) or "/" in profile or "\\" in profile


def load_profile_file(path: str | Path) -> SimulatorProfile:
    """A profile from a YAML (or ``.json``) file holding :class:`SimulatorProfile`'s fields, e.g.
    one written by ``rag-lab calibrate``; its ``calibration`` mapping (provenance and estimates) is
    not a knob and is ignored here. A missing or malformed file, an unknown key or a rate outside
    [0, 1] is a :class:`ConfigError` naming the file and every field at fault."""
    from pydantic import ValidationError

    from rag_lab.config_files import explain_validation, read_mapping

    data = read_mapping(path, "simulator profile")
    data.pop(CALIBRATION_KEY, None)
    if not data:
        raise ConfigError(f"{path}: the simulator profile file sets no field (knobs: {', '.join(KNOBS)})")
    try:
        return SimulatorProfile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {explain_validation(exc, 'simulator profile')}") from None


def get_profile(profile: str | Path | SimulatorProfile, seed: int | None = None) -> SimulatorProfile:
    """A profile by name, from a profile file (:func:`load_profile_file`: a ``.yaml``/``.yml``/
    ``.json`` path), or the given one, with ``seed`` replacing its seed when given."""
    if isinstance(profile, Path) or (isinstance(profile, str) and profile not in PROFILES and is_profile_file(profile)):
        profile = load_profile_file(profile)
    elif isinstance(profile, str):
        if profile not in PROFILES:
            raise ConfigError(f"unknown simulator profile {profile!r}; choose one of {sorted(PROFILES)} "
                              "or give a profile file (profile.yaml, e.g. from rag-lab calibrate)")
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
