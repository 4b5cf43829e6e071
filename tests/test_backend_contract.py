"""The contract every LLM backend keeps (:func:`rag_lab.testing.check_backend`), run over the backend registry
(``rag_lab.llm.factory.BACKENDS``) and over every :class:`~rag_lab.llm.base.LLMBackend` subclass in the package:

- chat: a request's messages come back as text, labelled with the role, the backend and the model;
- schema: with a response schema the answer is a parsed instance of it (valid, repaired, or the fallback
  with its reason) — never an exception for bad output;
- usage: token counts and latency are recorded on the response (what a trace and a cost ledger read);
- errors: a backend that cannot be opened or reached fails with an error that names the problem.

A backend kind or subclass added without an entry here fails :func:`test_every_backend_class_is_covered`;
broken toy backends show the check refuses each broken rule.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from rag_lab.errors import CassetteMiss, ConfigError, LLMBackendError, RagLabError
from rag_lab.llm.base import LLMBackend, LLMRequest, Message
from rag_lab.llm.cache import CachedBackend, ResponseCache
from rag_lab.llm.cassette import Cassette, RecordingBackend, ReplayBackend, recording_header
from rag_lab.llm.factory import BACKENDS, open_backend
from rag_lab.llm.measured import MeasuredLatency
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.llm.server.lab_server import serve_in_thread
from rag_lab.llm.simulator import SimulatedBackend
from rag_lab.llm.token_cap import TokenCapBackend
from rag_lab.llm.types import Completion, LLMResponse, Usage
from rag_lab.testing import CHAT_REQUEST, ROUTE_FALLBACK, ROUTE_REQUEST, ContractViolation, check_backend

CHAT = CHAT_REQUEST
ROUTE = ROUTE_REQUEST
FALLBACK = ROUTE_FALLBACK


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


@pytest.mark.parametrize("kind", [kind_param(k) for k in BACKENDS.names()])
def test_every_registered_backend_keeps_the_contract(kind: str, tmp_path) -> None:
    with opened(kind, tmp_path) as backend:
        check_backend(backend)


@pytest.mark.parametrize("cls", list(SUBCLASS_MAKERS), ids=lambda c: c.__name__)
def test_every_backend_class_keeps_the_contract(cls: type[LLMBackend], tmp_path) -> None:
    backend = SUBCLASS_MAKERS[cls](tmp_path)
    assert type(backend) is cls
    check_backend(backend)


def test_every_backend_class_is_covered() -> None:
    """Each LLMBackend subclass in rag_lab that can be made (not abstract, as WrappedBackend is) is in the contract
    (directly, or as the registered openai kind)."""
    import rag_lab.llm.openai_backend as openai_backend

    def subclasses(cls: type) -> set[type]:
        return {s for c in cls.__subclasses__() for s in {c, *subclasses(c)}}

    ours = {c for c in subclasses(LLMBackend) if c.__module__.startswith("rag_lab.") and not inspect.isabstract(c)}
    assert ours - set(SUBCLASS_MAKERS) == {openai_backend.OpenAIBackend}


@pytest.mark.parametrize("kind", [kind_param(k) for k in BACKENDS.names()])
def test_a_backend_that_cannot_work_says_why(kind: str, tmp_path) -> None:
    if kind == "sim":
        with pytest.raises(ConfigError, match="no-such-profile"), open_backend("sim", profile="no-such-profile"):
            pass
    elif kind == "openai":
        with open_backend("openai", base_url="http://127.0.0.1:9/v1", model="m", cache=False, max_retries=0) as backend:
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


class SilentBackend(ScriptedBackend):
    """Answers, but reports no token usage."""

    def _generate(self, request: LLMRequest) -> Completion:
        return Completion(text=super()._generate(request).text, usage=Usage(prompt_tokens=0, completion_tokens=0))


class RaisesOnProse(ScriptedBackend):
    """Raises on output that does not parse instead of falling back."""

    def complete(self, request: LLMRequest, fallback=None) -> LLMResponse:
        response = super().complete(request, fallback)
        if response.outcome == "fallback":
            raise ValueError(f"could not parse {response.text!r}")
        return response


class NoModel(ScriptedBackend):
    """Names no model."""

    def __init__(self, scripts) -> None:
        super().__init__(scripts)
        self.model = ""


SCRIPTS = {"answer": ["Ada Lovelace [1]"], "route": ['{"route": "SIMPLE"}']}


@pytest.mark.parametrize(("broken", "rule"), [
    (lambda: SilentBackend(SCRIPTS), "usage recorded"),
    (lambda: ScriptedBackend({"answer": ["  "], "route": ['{"route": "SIMPLE"}']}), "chat answers text"),
    (lambda: NoModel(SCRIPTS), "a name and a model"),
], ids=["no-usage", "empty-text", "no-model"])
def test_check_backend_refuses_a_broken_backend_naming_the_rule(broken, rule: str) -> None:
    with pytest.raises(ContractViolation, match=f"^backend contract, rule '{rule}'") as caught:
        check_backend(broken())
    assert caught.value.rule == rule


def test_check_backend_lets_an_exception_for_bad_output_through() -> None:
    """A backend that raises on unparseable output instead of falling back fails the check with its own error."""
    with pytest.raises(ValueError, match="could not parse"):
        check_backend(RaisesOnProse({"answer": ["Ada [1]"], "route": ["SIMPLE, I think"]}))
