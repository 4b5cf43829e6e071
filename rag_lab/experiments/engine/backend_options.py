"""What opens a sweep's backend: the registry kind and the
:class:`~rag_lab.llm.factory.BackendOptions` settings of a :class:`~rag_lab.experiments.engine.sweep.BackendSpec`
for one seed, the cassette a replay reads (checked to record the spec's model), and the prices its calls are counted
at."""

from __future__ import annotations

from typing import Any

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.sweep import BackendSpec
from rag_lab.llm.cassette import Cassette, check_recorded_model
from rag_lab.llm.factory import BACKENDS
from rag_lab.llm.ledger import PriceTable


def backend_options(spec: BackendSpec, seed: int, concurrency: int = 1) -> tuple[str, dict[str, Any]]:
    """The kind and settings that open ``spec``'s backend for ``seed``: a replay reads the cassette
    (``recorded``); the simulator gets the profile resolved once (``spec.sim_profile``); an ``openai`` server
    admits ``concurrency`` calls in flight (the executor's workers) unless ``max_concurrency`` says otherwise."""
    if spec.replay:
        return "recorded", {"model": replay_cassette(spec), "max_tokens": spec.max_tokens}
    limit = spec.max_concurrency or (concurrency if BACKENDS[spec.kind].endpoint else None)
    return spec.kind, {"profile": spec.sim_profile if spec.sim_profile is not None else spec.profile, "seed": seed,
                       "model": spec.model, "base_url": spec.base_url, "cache": spec.cache,
                       "max_concurrency": limit, "max_tokens": spec.max_tokens, "record": spec.cassette,
                       "timeout_s": spec.timeout_s, "max_retries": spec.max_retries}


def replay_cassette(spec: BackendSpec) -> str:
    """The cassette a replay of ``spec`` reads, after checking it recorded the model the spec names, whatever the
    kind (:attr:`~rag_lab.llm.factory.BackendEntry.model_identity`): a local model by its GGUF's sha256 (a packaged
    name, or a path), an ``openai`` model by its name. A cassette of another model, or a model that cannot be
    identified (a missing file, one that is not a GGUF), is refused."""
    if spec.cassette is None:
        raise ConfigError("replay needs the cassette to replay (backend.cassette)")
    header = Cassette.read_header(spec.cassette)  # the entries are read once, by the replay backend
    identify = BACKENDS[spec.kind].model_identity
    if identify is None:
        raise ConfigError(f"a {spec.kind!r} backend names no model a cassette records; replay with the kind recorded")
    try:
        wanted = identify(spec.model)
    except ConfigError as exc:
        raise ConfigError(f"cassette {spec.cassette} was recorded with {header.recorded_model()}; this sweep's "
                          f"{spec.kind} model {spec.model!r} cannot be checked against it: {exc}") from None
    check_recorded_model(spec.cassette, header, spec.model, wanted)
    return spec.cassette


def backend_prices(spec: BackendSpec) -> PriceTable | None:
    """The price table of ``spec.price`` (None: the ledger's default, the illustrative rate)."""
    return None if spec.price is None else PriceTable(default=spec.price)
