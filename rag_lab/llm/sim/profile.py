"""Behaviour knobs of the simulated LLM (:class:`SimulatorProfile`), its named profiles and its
per-token latency model (:class:`LatencyModel`).

A knob's effect is a property of the simulator, not a measurement of any real model: the
simulator shows how to *measure* an effect; a real model shows whether the effect is real."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from rag_lab.errors import ConfigError

_Rate = Field(default=0.0, ge=0.0, le=1.0)


class SimulatorProfile(BaseModel):
    """Failure-mode rates of the simulated LLM: each knob (:data:`KNOBS`) is a probability in [0, 1], drawn
    independently where it applies from the call's seeded common random numbers
    (:class:`~rag_lab.llm.sim.knobs.CallRandom`) and recorded in the trace (``LLMCall.knobs``); ``ideal`` has
    every knob at zero. Controller: ``synonym_spinning`` (the evidence suffices, yet search a paraphrase),
    ``budget_anchoring`` (a stated budget not used up: keep searching instead of stopping), ``budget_thrift``
    (a stated budget: answer now instead of one more search), ``premature_stop`` (also the answer role: answer
    from partial evidence), ``bridge_drop`` (the next-hop query loses its bridge entity); route:
    ``comparison_underrate`` and ``route_underrate`` (a question classified SIMPLE); output format of route and
    controller: ``invalid_json``, ``hallucinated_action``, ``wrong_types``, one at most per output, so
    ``typical`` breaks 0.143 of structured outputs and ``sloppy`` 0.271. The details: docs/backends.md.
    ``seed`` seeds every per-call RNG; ``name`` labels the profile (it enters the model string)."""

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


#: The behaviour knobs: every rate of :class:`SimulatorProfile`, in the order it declares them.
KNOBS: tuple[str, ...] = tuple(name for name, field in SimulatorProfile.model_fields.items() if field.annotation is float)

#: Named profiles (settings of the simulator chosen to make effects visible, not measurements of any model;
#: docs/backends.md describes each).
PROFILES: dict[str, SimulatorProfile] = {
    "ideal": SimulatorProfile(name="ideal"),
    "typical": SimulatorProfile(name="typical", synonym_spinning=0.15, budget_anchoring=0.2, budget_thrift=0.15,
                                premature_stop=0.15, bridge_drop=0.15, invalid_json=0.05, hallucinated_action=0.05,
                                wrong_types=0.05, comparison_underrate=0.2),
    "sloppy": SimulatorProfile(name="sloppy", synonym_spinning=0.4, budget_anchoring=0.5, budget_thrift=0.3,
                               premature_stop=0.4, bridge_drop=0.4, invalid_json=0.1, hallucinated_action=0.1,
                               wrong_types=0.1, comparison_underrate=0.5),
}
PROFILES["anchored"] = SimulatorProfile.model_validate(
    {**PROFILES["typical"].model_dump(), "name": "anchored", "budget_anchoring": 0.9, "budget_thrift": 0.05})
PROFILES["thrifty"] = SimulatorProfile.model_validate(
    {**PROFILES["typical"].model_dump(), "name": "thrifty", "budget_anchoring": 0.05, "budget_thrift": 0.8})


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

        modelled_latency_s = overhead_s + prompt_tokens / prefill_tokens_per_s + completion_tokens / decode_tokens_per_s

    Defaults: a small model on a laptop-class GPU (2000 tokens/s prefill, 50 decode, 50 ms per call); a model,
    reported as such."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prefill_tokens_per_s: float = Field(default=2000.0, gt=0.0)
    decode_tokens_per_s: float = Field(default=50.0, gt=0.0)
    overhead_s: float = Field(default=0.05, ge=0.0)

    def latency(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Modelled seconds for one call with these token counts."""
        return self.overhead_s + prompt_tokens / self.prefill_tokens_per_s + completion_tokens / self.decode_tokens_per_s
