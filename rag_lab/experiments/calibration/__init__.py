"""The simulator against a real model: simulator profiles fitted to a real run's traces (:mod:`.calibrate`,
with :mod:`.runs`, :mod:`.fits` and :mod:`.result`), a simulated sweep's winners re-run on a real backend
(:mod:`.verify`), and the simulated and real runs side by side (:mod:`.sim_vs_real`)."""
