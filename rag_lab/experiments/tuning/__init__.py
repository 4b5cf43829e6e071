"""Search and racing over the policy space (the space itself is part of a sweep's spec:
:mod:`rag_lab.experiments.engine.search_space`): the multi-objective search (:mod:`.search`), racing that
drops dominated candidates on a growing question sample (:mod:`.racing`), and the recommendation read off a
front (:mod:`.recommend`)."""
