"""The parts of the simulated LLM (:mod:`rag_lab.llm.simulator`), one job per module: :mod:`.profile` (knobs,
profiles, latency model), :mod:`.prompt` (prompt parsing), reading (:mod:`.text`, :mod:`.names`,
:mod:`.question`, :mod:`.evidence`, :mod:`.similarity`), :mod:`.ideal` (every role's ideal output, with
:mod:`.controller_decision`, :mod:`.extractive_answer`, :mod:`.judging`, :mod:`.paraphrase`), :mod:`.knobs`
(every knob drawn and applied) and :mod:`.tokens`. One reader for all text; no module knows a corpus."""

from rag_lab.llm.sim.profile import KNOBS, PROFILES, LatencyModel, SimulatorProfile, get_profile

__all__ = ["KNOBS", "PROFILES", "LatencyModel", "SimulatorProfile", "get_profile"]
