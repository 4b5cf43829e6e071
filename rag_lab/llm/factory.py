"""Open an LLM backend by kind: ``sim`` (the embedded default), ``openai``, ``local`` or ``recorded`` (a cassette).
Each opener imports its backend when it runs; :func:`open_backend` is a context manager (the local model is a
server process) and wraps every backend in the response cache unless ``cache=False``."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from rag_lab.errors import ConfigError
from rag_lab.llm.base import LLMBackend
from rag_lab.llm.cache import CachedBackend, ResponseCache
from rag_lab.llm.measured import MeasuredLatency
from rag_lab.llm.sim.profile import SimulatorProfile, get_profile
from rag_lab.llm.token_cap import TokenCapBackend
from rag_lab.registry import Registry

if TYPE_CHECKING:
    from rag_lab.llm.cassette import ModelIdentity


@dataclass(frozen=True)
class BackendOptions:
    """Every backend setting, declared once: the keywords of :func:`open_backend` and :func:`make_backend`
    (their signatures are made from these fields) and what a backend's opener reads (each opener refuses the
    settings it has no use for).

    ``profile`` and ``seed``: the simulator's (``sim``). ``model``: for ``openai`` the model name (None:
    ``RAG_LAB_MODEL``, else the server's only model); for ``local`` a GGUF path or a packaged model name
    (:func:`rag_lab.llm.local.backend.resolve_model`); for ``recorded`` the cassette to replay. ``base_url``: the
    ``openai`` server. ``cache``: True for the default response cache, a path for another file, False for
    none. ``max_concurrency``: calls in flight at once to a network backend (``openai``; its own default
    when None). ``chat_format`` (``local`` only) overrides the chat format picked from the GGUF.
    ``max_tokens`` caps every call's completion tokens (:class:`~rag_lab.llm.token_cap.TokenCapBackend`,
    outside the cache: capped answers are cached apart from uncapped ones). ``record``: a cassette path
    (:mod:`rag_lab.llm.cassette`) that records every distinct request and response, outside the cache, and
    answers what it already holds (a killed recording resumes). ``timeout_s`` and ``max_retries``: how long one
    HTTP attempt to a model server (``openai``, ``local``) may take and how many times a failed one is retried
    (None: the backend's own defaults; they change when an answer arrives, never what it is)."""

    profile: str | SimulatorProfile = "typical"
    seed: int = 0
    model: str | None = None
    base_url: str | None = None
    cache: bool | str | Path = True
    max_concurrency: int | None = None
    chat_format: str | None = None
    max_tokens: int | None = None
    record: str | Path | None = None
    timeout_s: float | None = None
    max_retries: int | None = None

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> BackendOptions:
        """The options of keyword ``settings``; an unknown one is a :class:`ConfigError` naming the settings."""
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(settings) - set(names))
        if unknown:
            raise ConfigError(f"unknown backend setting(s) {unknown}; the settings are {', '.join(names)}")
        return cls(**settings)

    def server_settings(self) -> dict[str, Any]:
        """The :class:`~rag_lab.llm.openai_backend.OpenAIBackend` keywords of ``timeout_s`` and ``max_retries``
        that are set."""
        return {k: v for k, v in (("timeout_s", self.timeout_s), ("max_retries", self.max_retries)) if v is not None}


def _settings_signature(function: Callable[..., Any], returns: Any) -> Callable[..., Any]:
    """``function(kind="sim", **settings)`` shown (``help``, the API docs) with one keyword per setting."""
    kind = inspect.Parameter("kind", inspect.Parameter.POSITIONAL_OR_KEYWORD, default="sim", annotation=str)
    keywords = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=f.type)
                for f in fields(BackendOptions)]
    function.__signature__ = inspect.Signature([kind, *keywords], return_annotation=returns)  # type: ignore[attr-defined]
    return function


#: An opener: the options → a context manager that yields the backend, uncached (the factory adds the cache).
BackendOpener = Callable[[BackendOptions], AbstractContextManager[LLMBackend]]


@dataclass(frozen=True)
class BackendEntry:
    """One backend kind: its opener and what it is, which callers ask instead of listing kinds. ``simulated``: the
    simulator (profiles, knobs, many seeds); ``replays``: answers read from a cassette (never cached, never recorded
    again); ``own_process``: starts a process of its own (:func:`open_backend` only); ``endpoint``: a server that
    admits the executor's calls in flight; ``chat_format``: takes a llama-cpp chat format. A kind that neither
    simulates nor replays is a real model, which a cassette can record; its ``model_identity`` says which model a
    ``model`` setting names, as a cassette records it (a replay is refused unless the two are the same)."""

    open: BackendOpener
    simulated: bool = False
    replays: bool = False
    own_process: bool = False
    endpoint: bool = False
    chat_format: bool = False
    model_identity: Callable[[str | None], ModelIdentity] | None = None

    @property
    def real(self) -> bool:
        """A real model: what a cassette records."""
        return not (self.simulated or self.replays)


#: The LLM backends by kind: the one list of backend kinds (``--backend`` choices, a sweep's
#: ``backend.kind``, the backend contract test) with their properties. A new backend is one :class:`LLMBackend`
#: subclass, its opener, and one line here.
BACKENDS: Registry[BackendEntry] = Registry("backend")


@contextmanager
def _open_sim(options: BackendOptions) -> Iterator[LLMBackend]:
    from rag_lab.llm.simulator import SimulatedBackend

    yield SimulatedBackend(profile=options.profile, seed=options.seed)


@contextmanager
def _open_openai(options: BackendOptions) -> Iterator[LLMBackend]:
    from rag_lab.llm.openai_backend import OpenAIBackend

    limit = {} if options.max_concurrency is None else {"max_concurrency": options.max_concurrency}
    yield OpenAIBackend(options.model, base_url=options.base_url, **limit, **options.server_settings())


@contextmanager
def _open_local(options: BackendOptions) -> Iterator[LLMBackend]:
    if options.base_url is not None:
        raise ConfigError("the local backend starts its own server: base_url is for --backend openai")
    from rag_lab.llm.local.backend import LocalModelServer

    with LocalModelServer(options.model, chat_format=options.chat_format) as server:
        yield MeasuredLatency(server.backend(**options.server_settings()), server.provenance())


@contextmanager
def _open_recorded(options: BackendOptions) -> Iterator[LLMBackend]:
    if options.model is None:
        raise ConfigError("the recorded backend replays a cassette: give its path "
                          "(--backend recorded --model PATH, or model=PATH)")
    from rag_lab.llm.cassette import Cassette, ReplayBackend

    yield ReplayBackend(Cassette.for_replay(options.model))


def _endpoint_identity(model: str | None) -> ModelIdentity:
    """An ``openai`` server's model by its name (``model``, else ``RAG_LAB_MODEL``): what the server is asked for."""
    from rag_lab.llm.cassette import ModelIdentity

    name = model or os.environ.get("RAG_LAB_MODEL")
    if not name:
        raise ConfigError("the openai backend's model is not named (backend.model, or RAG_LAB_MODEL), so it cannot "
                          "be checked against what a cassette recorded")
    return ModelIdentity(name=name)


def _gguf_identity(model: str | None) -> ModelIdentity:
    """A local model by its GGUF file's sha256 (a packaged model's pinned digest, or the named file's)."""
    from rag_lab.llm.cassette import ModelIdentity
    from rag_lab.llm.local.backend import model_sha256

    return ModelIdentity(sha256=model_sha256(model))


BACKENDS.add("sim", BackendEntry(_open_sim, simulated=True))
BACKENDS.add("openai", BackendEntry(_open_openai, endpoint=True, model_identity=_endpoint_identity))
BACKENDS.add("local", BackendEntry(_open_local, own_process=True, chat_format=True, model_identity=_gguf_identity))
BACKENDS.add("recorded", BackendEntry(_open_recorded, replays=True))
#: The type of a field that names a backend kind (checked against :data:`BACKENDS` when validated).
BackendKind = BACKENDS.field()


@contextmanager
def open_backend(kind: str = "sim", **settings: Any) -> Iterator[LLMBackend]:
    """Yield a ready backend of ``kind`` (a name in :data:`BACKENDS`) with the keyword ``settings`` of
    :class:`BackendOptions`. API keys come from the environment and never enter cache keys;
    ``kind="recorded"`` with ``model=PATH`` replays a cassette."""
    row = BACKENDS[kind]  # UnknownName (a ConfigError) lists the kinds
    options = BackendOptions.of(settings)
    if options.chat_format is not None and not row.chat_format:
        raise ConfigError(f"chat_format is a setting of the local backend, not of {kind!r}")
    if options.record is not None and row.replays:
        raise ConfigError("a replayed cassette cannot be recorded again; record from a live backend")
    if options.server_settings() and not row.real:
        raise ConfigError(f"timeout_s and max_retries are settings of a model server (openai, local), not of {kind!r}")
    with row.open(options) as backend:
        served = backend
        if options.cache is not False and not row.replays:
            served = CachedBackend(backend, ResponseCache(None if options.cache is True else options.cache))
        if options.record is not None:
            from rag_lab.llm.cassette import Cassette, RecordingBackend, recording_header

            provenance = getattr(backend, "provenance", None)
            header = recording_header(backend, provenance)
            served = RecordingBackend(served, Cassette.for_recording(options.record, header), provenance)
        yield served if options.max_tokens is None else TokenCapBackend(served, options.max_tokens)


_settings_signature(open_backend, AbstractContextManager[LLMBackend])


def make_backend(kind: str = "sim", **settings: Any) -> LLMBackend:
    """A backend that needs no process of its own (``sim``, ``openai`` or ``recorded``), to keep as long as wanted,
    with the keyword ``settings`` of :class:`BackendOptions`; the local model needs :func:`open_backend`, which
    stops its server."""
    if BACKENDS[kind].own_process:
        kinds = ", ".join(k for k in BACKENDS.names() if not BACKENDS[k].own_process)
        raise ConfigError(f"make_backend builds {kinds} backends; {kind!r} needs open_backend(...)")
    with open_backend(kind, **settings) as backend:  # these openers hold nothing open after they yield
        return backend


_settings_signature(make_backend, LLMBackend)


def simulator_profile(name: str | Path, overrides: Mapping[str, float | str] | None = None) -> SimulatorProfile:
    """The simulator profile ``name`` (a profile name, or a profile file such as one written by
    ``rag-lab calibrate``) with some knobs changed (``{"synonym_spinning": 0.4}``)."""
    base = get_profile(name)
    if not overrides:
        return base
    try:
        return SimulatorProfile.model_validate({**base.model_dump(), **overrides, "name": f"{base.name[:33]}-custom"})
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"bad simulator knob {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
