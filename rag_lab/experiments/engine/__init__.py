"""The sweep engine: a sweep's spec (:mod:`.sweep`, with the search section's space, objectives and constraints
in :mod:`.search_space`) and grid (:mod:`.grid`), resolved into its runs and questions (:mod:`.resolved_sweep`),
the worker that runs a candidate's questions (:mod:`.worker`) on an executor (:mod:`.executors`), the store that
persists and resumes runs (:mod:`.store`, with :mod:`.provenance`), progress lines (:mod:`.progress`), the result tables
(:mod:`.results`) and the claims read off them (:mod:`.findings`, :mod:`.comparisons`).
:func:`rag_lab.experiments.sweep_runner.run_sweep` runs a spec, its grid here or its search in
:mod:`rag_lab.experiments.tuning`."""
