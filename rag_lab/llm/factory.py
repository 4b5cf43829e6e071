"""Open an LLM backend by kind: ``sim`` (the embedded default), ``openai`` or ``local``.

:func:`open_backend` is a context manager because the local model is a server process that must
be stopped; every backend is wrapped in the response cache unless ``cache=False``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from rag_lab.errors import ConfigError
from rag_lab.llm.base import LLMBackend
from rag_lab.llm.cache import CachedBackend, ResponseCache

if TYPE_CHECKING:
    from rag_lab.llm.sim.profile import SimulatorProfile

BACKEND_KINDS = ("sim", "openai", "local")


@contextmanager
def open_backend(
    kind: str = "sim",
    *,
    profile: str | SimulatorProfile = "typical",
    seed: int = 0,
    model: str | None = None,
    base_url: str | None = None,
    cache: bool | str | Path = True,
    max_concurrency: int | None = None,
    chat_format: str | None = None,
    max_tokens: int | None = None,
) -> Iterator[LLMBackend]:
    """Yield a ready backend. ``cache``: True for the default response cache, a path for another
    file, False for none. API keys come from the environment and never enter cache keys.

    ``model``: for ``openai`` the model name (None: ``RAG_LAB_MODEL``, else the server's only
    model); for ``local`` a GGUF path or a packaged model name (:func:`rag_lab.llm.local.resolve_model`).
    ``max_concurrency``: calls in flight at once to a network backend (``openai``; its own default
    when None). ``chat_format`` (``local`` only) overrides the chat format picked from the GGUF.
    ``max_tokens`` caps every call's completion tokens (:class:`~rag_lab.llm.token_cap.TokenCapBackend`,
    outside the cache: capped answers are cached apart from uncapped ones)."""
    if kind not in BACKEND_KINDS:
        raise ConfigError(f"unknown backend {kind!r}; choose one of {', '.join(BACKEND_KINDS)}")
    if chat_format is not None and kind != "local":
        raise ConfigError(f"chat_format is a setting of the local backend, not of {kind!r}")
    if kind == "local":
        from rag_lab.llm.local import LocalModelServer

        if base_url is not None:
            raise ConfigError("the local backend starts its own server: base_url is for --backend openai")
        with LocalModelServer(model, chat_format=chat_format) as server:
            yield _capped(_cached(server.backend(), cache), max_tokens)
        return
    yield _capped(make_backend(kind, profile=profile, seed=seed, model=model, base_url=base_url, cache=cache,
                               max_concurrency=max_concurrency), max_tokens)


def make_backend(
    kind: str = "sim",
    *,
    profile: str | SimulatorProfile = "typical",
    seed: int = 0,
    model: str | None = None,
    base_url: str | None = None,
    cache: bool | str | Path = True,
    max_concurrency: int | None = None,
) -> LLMBackend:
    """A backend that needs no process of its own (``sim`` or ``openai``), to keep as long as wanted;
    the local model needs :func:`open_backend`, which stops its server."""
    if kind == "openai":
        from rag_lab.llm.openai_backend import OpenAIBackend

        limit = {} if max_concurrency is None else {"max_concurrency": max_concurrency}
        return _cached(OpenAIBackend(model, base_url=base_url, **limit), cache)
    if kind == "sim":
        from rag_lab.llm.simulator import SimulatedBackend

        return _cached(SimulatedBackend(profile=profile, seed=seed), cache)
    raise ConfigError(f"make_backend builds sim or openai backends; {kind!r} needs open_backend(...)")


def simulator_profile(name: str | Path, overrides: Mapping[str, float | str] | None = None) -> SimulatorProfile:
    """The simulator profile ``name`` (a profile name, or a profile file such as one written by
    ``rag-lab calibrate``) with some knobs changed (``{"synonym_spinning": 0.4}``)."""
    from rag_lab.llm.sim.profile import SimulatorProfile, get_profile

    base = get_profile(name)
    if not overrides:
        return base
    try:
        return SimulatorProfile.model_validate({**base.model_dump(), **overrides, "name": f"{base.name[:33]}-custom"})
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"bad simulator knob {'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def _capped(backend: LLMBackend, max_tokens: int | None) -> LLMBackend:
    if max_tokens is None:
        return backend
    from rag_lab.llm.token_cap import TokenCapBackend

    return TokenCapBackend(backend, max_tokens)


def _cached(backend: LLMBackend, cache: bool | str | Path) -> LLMBackend:
    if cache is False:
        return backend
    return CachedBackend(backend, ResponseCache(None if cache is True else cache))
