"""The parts of the simulated LLM (:mod:`rag_lab.llm.simulator`), one job per module:

* :mod:`.profile`    behaviour knobs, named profiles, the latency model;
* :mod:`.text`       words, stemming, sentences, dates, numbers, archive and injection markers;
* :mod:`.entities`   identifiers and names found with general regexes;
* :mod:`.lexicon`    general English / IT synonym groups and phrase rewrites;
* :mod:`.question`   what a question asks (foci, comparison, relation chain, attribute);
* :mod:`.vectors`    embedding similarity with an in-process LRU;
* :mod:`.evidence`   reading numbered evidence against a question;
* :mod:`.paraphrase` rephrasing without knowledge;
* :mod:`.routing`    route, rewrite and HyDE roles;
* :mod:`.controller` the controller role and its knobs;
* :mod:`.answer`     the extractive answer role;
* :mod:`.judging`    judge and grade roles;
* :mod:`.knobs`      per-call seeded randomness and output-format failures;
* :mod:`.tokens`     token counting with the packaged tokenizer.
"""

from rag_lab.llm.sim.profile import KNOBS, PROFILES, LatencyModel, SimulatorProfile, get_profile

__all__ = ["KNOBS", "PROFILES", "LatencyModel", "SimulatorProfile", "get_profile"]
