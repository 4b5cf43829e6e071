"""The contract every LLM backend keeps, run over the backend registry (``rag_lab.llm.factory.BACKENDS``)
and over every :class:`~rag_lab.llm.base.LLMBackend` subclass in the package:

- chat: a request's messages come back as text, labelled with the role, the backend and the model;
- schema: with a response schema the answer is a parsed instance of it (valid, repaired, or the fallback
  with its reason) — never an exception for bad output;
- usage: token counts and latency are recorded on the response, and the active cost ledger holds one
  record of the call with the same numbers (one record per call: ``rag_lab.llm.types.CallRecord``);
- errors: a backend that cannot be opened or reached fails with an error that names the problem.

A backend kind or subclass added without an entry here fails :func:`test_every_backend_class_is_covered`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from rag_lab.errors import CassetteMiss, ConfigError, LLMBackendError, RagLabError
from rag_lab.llm.base import LLMBackend, LLMRequest, Message
from rag_lab.llm.cache import CachedBackend, ResponseCache
from rag_lab.llm.cassette import Cassette, RecordingBackend, ReplayBackend, recording_header
from rag_lab.llm.factory import BACKENDS, open_backend
from rag_lab.llm.ledger import usage
from rag_lab.llm.measured import MeasuredLatency
from rag_lab.llm.schemas import RouteDecision
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.llm.server import serve_in_thread
from rag_lab.llm.simulator import SimulatedBackend
from rag_lab.llm.token_cap import TokenCapBackend
from rag_lab.llm.types import CallRecord

CHAT = LLMRequest(role="answer", messages=(
    Message(role="system", content="Answer from the context only, citing chunks as [n]."),
    Message(role="user", content="Context:\n[1] Ada Lovelace wrote the first program in 1843.\n\n"
                                 "Question: Who wrote the first program?"),
))
ROUTE = LLMRequest(role="route", response_schema=RouteDecision, messages=(
    Message(role="system", content='Classify the question as SIMPLE or COMPLEX. Reply with JSON {"route": ...}.'),
    Message(role="user", content="Question: Who wrote the first program?"),
))
FALLBACK = RouteDecision(route="COMPLEX")


@contextmanager
def opened(kind: str, tmp_path) -> Iterator[LLMBackend]:
    """A ready backend of a registered kind (no response cache: every call reaches the backend)."""
    if kind == "sim":
        with open_backend("sim", profile="typical", cache=False) as backend:
            yield backend
    elif kind == "openai":
        with serve_in_thread(SimulatedBackend(profile="ideal")) as url, \
                open_backend("openai", base_url=url, cache=False) as backend:
            yield backend
    elif kind == "local":
        pytest.importorskip("llama_cpp")
        with open_backend("local", cache=False, max_tokens=32) as backend:
            yield backend
    elif kind == "recorded":
        with open_backend("recorded", model=str(recorded_cassette(tmp_path))) as backend:
            yield backend
    else:
        raise AssertionError(f"backend kind {kind!r} has no entry in the contract test")


def recorded_cassette(tmp_path):
    """A cassette of the simulator answering CHAT and ROUTE (what the replay contract is run on)."""
    path = tmp_path / "contract.jsonl"
    live = SimulatedBackend(profile="typical")
    recorder = RecordingBackend(live, Cassette.for_recording(path, recording_header(live)))
    recorder.complete(CHAT)
    recorder.complete(ROUTE, fallback=FALLBACK)
    return path


def kind_param(kind: str):
    return pytest.param(kind, marks=[pytest.mark.local_model] if kind == "local" else [], id=kind)


#: How to make each LLMBackend subclass of the package for the contract (wrappers around the simulator).
SUBCLASS_MAKERS = {
    SimulatedBackend: lambda tmp: SimulatedBackend(profile="typical"),
    ScriptedBackend: lambda tmp: ScriptedBackend({"answer": ["Ada Lovelace [1]"], "route": ['{"route": "SIMPLE"}']}),
    CachedBackend: lambda tmp: CachedBackend(SimulatedBackend(profile="typical"), ResponseCache(tmp / "llm.sqlite")),
    TokenCapBackend: lambda tmp: TokenCapBackend(SimulatedBackend(profile="typical"), 64),
    MeasuredLatency: lambda tmp: MeasuredLatency(SimulatedBackend(profile="typical"), {"model_sha256": "x"}),
    RecordingBackend: lambda tmp: RecordingBackend(SimulatedBackend(profile="typical"), Cassette.for_recording(
        tmp / "rec.jsonl", recording_header(SimulatedBackend(profile="typical")))),
    ReplayBackend: lambda tmp: ReplayBackend(Cassette.for_replay(recorded_cassette(tmp))),
}


def check_contract(backend: LLMBackend) -> None:
    with usage() as ledger:
        chat = backend.complete(CHAT)
        route = backend.complete(ROUTE, fallback=FALLBACK)
    # chat
    assert isinstance(chat.text, str) and chat.text.strip()
    assert chat.role == "answer" and chat.outcome == "text" and chat.parsed is None
    assert chat.backend == backend.name and chat.model == backend.model
    # schema
    assert isinstance(route.parsed, RouteDecision)
    assert route.outcome in ("valid", "repaired", "fallback")
    assert route.outcome != "fallback" or (route.reason and route.parsed == FALLBACK)
    # usage: on the response, and one ledger record per call with the same numbers
    for response in (chat, route):
        assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
        assert response.latency_s >= 0.0
    records = ledger.records
    assert [r.role for r in records] == ["answer", "route"]
    for record, response in zip(records, (chat, route), strict=True):
        assert isinstance(record, CallRecord)
        assert CallRecord.fields_of(response).items() <= record.model_dump().items()
        assert record.total_tokens == response.usage.total_tokens and record.cost_usd > 0


@pytest.mark.parametrize("kind", [kind_param(k) for k in BACKENDS.names()])
def test_every_registered_backend_keeps_the_contract(kind: str, tmp_path) -> None:
    with opened(kind, tmp_path) as backend:
        check_contract(backend)


@pytest.mark.parametrize("cls", list(SUBCLASS_MAKERS), ids=lambda c: c.__name__)
def test_every_backend_class_keeps_the_contract(cls: type[LLMBackend], tmp_path) -> None:
    backend = SUBCLASS_MAKERS[cls](tmp_path)
    assert type(backend) is cls
    check_contract(backend)


def test_every_backend_class_is_covered() -> None:
    """Each LLMBackend subclass in rag_lab is in the contract (directly, or as the registered openai kind)."""
    import rag_lab.llm.openai_backend as openai_backend

    def subclasses(cls: type) -> set[type]:
        return {s for c in cls.__subclasses__() for s in {c, *subclasses(c)}}

    ours = {c for c in subclasses(LLMBackend) if c.__module__.startswith("rag_lab.")}
    assert ours - set(SUBCLASS_MAKERS) == {openai_backend.OpenAIBackend}


@pytest.mark.parametrize("kind", [kind_param(k) for k in BACKENDS.names()])
def test_a_backend_that_cannot_work_says_why(kind: str, tmp_path) -> None:
    if kind == "sim":
        with pytest.raises(ConfigError, match="no-such-profile"), open_backend("sim", profile="no-such-profile"):
            pass
    elif kind == "openai":
        with open_backend("openai", base_url="http://127.0.0.1:9/v1", model="m", cache=False) as backend:
            backend.max_retries = 0
            with pytest.raises(LLMBackendError, match="127.0.0.1:9"):
                backend.complete(CHAT)
    elif kind == "local":
        pytest.importorskip("llama_cpp")
        with pytest.raises(RagLabError, match="no-such.gguf"), open_backend("local", model=str(tmp_path / "no-such.gguf")):
            pass
    elif kind == "recorded":
        with pytest.raises(ConfigError, match="no-such.jsonl does not exist"), \
                open_backend("recorded", model=str(tmp_path / "no-such.jsonl")):
            pass
        with open_backend("recorded", model=str(recorded_cassette(tmp_path))) as backend, pytest.raises(CassetteMiss):
            backend.complete(LLMRequest(role="answer", messages=(Message(role="user", content="not recorded"),)))
    else:
        raise AssertionError(f"backend kind {kind!r} has no entry in the contract test")
    with pytest.raises(ConfigError, match="unknown backend 'nope'; choose one of sim, openai, local, recorded"), \
            open_backend("nope"):
        pass
