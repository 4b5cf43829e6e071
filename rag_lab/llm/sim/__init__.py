"""The parts of the simulated LLM (:mod:`rag_lab.llm.simulator`), one design, one job per module:

* :mod:`.profile`    behaviour knobs, named profiles, the latency model;
* :mod:`.prompt`     prompt parsing: role, question, searches, evidence, draft, template, budget;
* reading — :mod:`.text` (words, stemming, sentences, dates, numbers), :mod:`.names` (names and
  identifiers from typography), :mod:`.question` (what a question asks), :mod:`.evidence`
  (numbered evidence read against a question), :mod:`.similarity` (embedding similarity);
* :mod:`.ideal`      every role's ideal output (knobs off), with :mod:`.controller_decision` (the controller's next
  hop), :mod:`.extractive_answer` (the extractive answer), :mod:`.judging` (judge and grade) and
  :mod:`.paraphrase` (rephrasing without knowledge);
* :mod:`.knobs`      every behaviour knob drawn (common random numbers) and applied, in one place;
* :mod:`.tokens`     token counting with the packaged tokenizer.

There is one reader for all text; no module knows a corpus.
"""

from rag_lab.llm.sim.profile import KNOBS, PROFILES, LatencyModel, SimulatorProfile, get_profile

__all__ = ["KNOBS", "PROFILES", "LatencyModel", "SimulatorProfile", "get_profile"]
