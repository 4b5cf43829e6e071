"""The OpenAI-compatible backend against the lab server: the real ``openai`` client, a real socket
on 127.0.0.1, no mocks. Faults come from the server's FaultPlan; the backoffs are the openai client's own (0.5 s, 1 s, ...)."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
import traceback
from collections.abc import Iterator

import pytest

from rag_lab.cli import main as cli_main
from rag_lab.errors import ConfigError, LLMBackendError
from rag_lab.llm.base import LLMRequest, Message
from rag_lab.llm.ledger import Ledger
from rag_lab.llm.openai_backend import OpenAIBackend, rejects_format
from rag_lab.llm.schemas import ControllerDecision
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.llm.server.lab_server import MAX_BODY_BYTES, FaultPlan, LabServer, serve_in_thread

SECRET = "-".join(["sk", "test", "DO", "NOT", "LEAK", "4f9a2c"])  # built at run time so no key-shaped literal is tracked
DECISION = '{"action": "retrieve_again", "queries": ["Ada Lovelace birthplace"], "reason": "need the city"}'
FALLBACK = ControllerDecision(action="insufficient", reason="fallback")


@pytest.fixture(autouse=True)
def _fresh_negotiation() -> Iterator[None]:
    OpenAIBackend.forget_negotiated()
    yield
    OpenAIBackend.forget_negotiated()


def scripted() -> ScriptedBackend:
    return ScriptedBackend({"controller": lambda _: DECISION}, default="Paris [1]", model="lab-model")


def controller_request(question: str = "Where was Ada Lovelace born?") -> LLMRequest:
    return LLMRequest(
        role="controller",
        messages=(Message(role="system", content="Decide. Reply with JSON only."), Message(role="user", content=question)),
        response_schema=ControllerDecision,
    )


def client(url: str, **kwargs: object) -> OpenAIBackend:
    options: dict[str, object] = {
        "base_url": url, "api_key": SECRET, "timeout_s": 2.0, "max_retries": 2,
    }
    options.update(kwargs)
    return OpenAIBackend("lab-model", **options)  # type: ignore[arg-type]


def raw_post(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict, dict[str, str]]:
    """POST ``body`` with http.client (Content-Length set unless headers say otherwise)."""
    host, port = url.removeprefix("http://").removesuffix("/v1").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        conn.putrequest("POST", "/v1/chat/completions")
        for key, value in (headers if headers is not None else {"Content-Length": str(len(body))}).items():
            conn.putheader(key, value)
        conn.endheaders()
        if body:
            conn.send(body)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read()), dict(resp.getheaders())
    finally:
        conn.close()


def chat_body(**overrides: object) -> bytes:
    body = {"model": "lab-model", "messages": [{"role": "user", "content": "hi"}], **overrides}
    return json.dumps(body).encode()


def test_structured_decision_round_trip() -> None:
    backend = scripted()
    with serve_in_thread(backend) as url:
        llm = client(url)
        resp = llm.complete(controller_request(), fallback=FALLBACK)
    assert resp.outcome == "valid", resp.reason
    assert resp.parsed == ControllerDecision.model_validate_json(DECISION)
    assert resp.backend == "openai" and resp.model == "lab-model"
    assert resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens > 0
    assert resp.modelled_latency_s is None and resp.latency_s > 0
    assert backend.requests[0].role == "controller"  # the role travelled in X-Rag-Lab-Role
    assert backend.requests[0].messages == controller_request().messages
    assert llm.negotiated_mode() == "json_schema"
    assert [r.outcome for r in Ledger.of_responses([resp]).records] == ["valid"]


def test_text_call_and_models_endpoint() -> None:
    with LabServer(scripted(), models=["lab-model", "other"]) as server:
        resp = client(server.url).complete(LLMRequest(role="answer", messages=(Message(role="user", content="q"),)))
        host, port = server.address
        conn = http.client.HTTPConnection(host, port, timeout=5)
        conn.request("GET", "/v1/models")
        models = json.loads(conn.getresponse().read())
        conn.close()
    assert (resp.text, resp.outcome, resp.parsed) == ("Paris [1]", "text", None)
    assert [m["id"] for m in models["data"]] == ["lab-model", "other"]


def test_rate_limited_then_success_counts_the_retry() -> None:
    with LabServer(scripted(), faults=FaultPlan(rate_limit=1)) as server:
        llm = client(server.url)
        resp = llm.complete(controller_request(), fallback=FALLBACK)
    assert resp.outcome == "valid"
    assert llm.stats_dict() == {"calls": 1, "attempts": 2, "retries": 1, "errors": 0, "mode_fallbacks": 0}
    assert server.status_counts == {429: 1, 200: 1}


def test_a_short_retry_after_replaces_the_clients_backoff() -> None:
    """The openai client's own first backoff is 0.375-0.5 s; a server's Retry-After of 0.05 s is what it waits."""
    with LabServer(scripted(), faults=FaultPlan(rate_limit=1, retry_after_s=0.05)) as server:
        llm = client(server.url)
        start = time.perf_counter()
        llm.complete(controller_request(), fallback=FALLBACK)
    assert 0.05 <= time.perf_counter() - start < 0.3
    assert server.status_counts == {429: 1, 200: 1}


def test_persistent_server_error_is_a_clear_error_without_the_key() -> None:
    with LabServer(scripted(), faults=FaultPlan(server_error="always")) as server:
        llm = client(server.url, max_retries=2)
        with pytest.raises(LLMBackendError) as info:
            llm.complete(controller_request(), fallback=FALLBACK)
    err = info.value
    assert (err.status, err.attempts, err.server) == (500, 3, server.url)
    assert server.url in str(err) and "HTTP 500" in str(err) and "3 attempts" in str(err)
    assert llm.stats_dict()["retries"] == 2 and llm.stats_dict()["errors"] == 1
    rendered = "".join(traceback.format_exception(err)) + repr(err) + repr(llm)
    assert SECRET not in rendered


def test_timeout_gives_up_after_bounded_retries() -> None:
    faults = FaultPlan(delay="always", delay_s=5.0)
    with LabServer(scripted(), faults=faults, max_concurrency=4) as server:
        llm = client(server.url, timeout_s=0.25, max_retries=1)
        start = time.perf_counter()
        with pytest.raises(LLMBackendError, match=r"no answer within 0.25 s") as info:
            llm.complete(controller_request(), fallback=FALLBACK)
        elapsed = time.perf_counter() - start
    assert info.value.attempts == 2 and info.value.status is None
    assert elapsed < 2.0


@pytest.mark.parametrize(
    ("fault", "reason_starts"),
    [("invalid_json", "invalid JSON"), ("truncated_json", "invalid JSON"), ("schema_violation", "schema violation at action")],
)
def test_bad_content_falls_back_with_the_reason_recorded(fault: str, reason_starts: str) -> None:
    with LabServer(scripted(), faults=FaultPlan(content_fault=fault)) as server:  # type: ignore[arg-type]
        resp = client(server.url).complete(controller_request(), fallback=FALLBACK)
    assert resp.outcome == "fallback" and resp.parsed == FALLBACK
    assert resp.reason.startswith(reason_starts), resp.reason
    [record] = Ledger.of_responses([resp]).records
    assert (record.outcome, record.reason) == ("fallback", resp.reason)


def test_malformed_response_body_is_retried_then_reported() -> None:
    with LabServer(scripted(), faults=FaultPlan(malformed_body=1)) as server:
        llm = client(server.url)
        assert llm.complete(controller_request(), fallback=FALLBACK).outcome == "valid"
        assert llm.stats_dict()["retries"] == 1
        server.set_faults(FaultPlan(malformed_body="always"))
        with pytest.raises(LLMBackendError, match="unreadable response body") as info:
            llm.complete(controller_request(), fallback=FALLBACK)
    assert info.value.attempts == 3


def test_non_loopback_bind_is_refused() -> None:
    for host in ("0.0.0.0", "192.168.1.10", "10.0.0.1", "example.com", "", "::"):
        with pytest.raises(ConfigError, match="loopback"):
            LabServer(scripted(), host=host)
    assert cli_main(["serve", "--host", "0.0.0.0"]) == 2
    with serve_in_thread(scripted(), host="127.0.0.2") as url:
        assert url.startswith("http://127.0.0.2:")


def test_body_limits() -> None:
    with serve_in_thread(scripted()) as url:
        status, body, _ = raw_post(url, b"x" * (MAX_BODY_BYTES + 1))
        assert status == 413 and body["error"]["code"] == "request_too_large"
        status, body, _ = raw_post(url, b"", headers={})
        assert status == 411
        status, body, _ = raw_post(url, b"", headers={"Content-Length": "lots"})
        assert status == 400 and "Content-Length" in body["error"]["message"]
        status, body, _ = raw_post(url, chat_body())
        assert status == 200 and body["choices"][0]["message"]["content"] == "Paris [1]"


def test_malformed_requests_get_openai_style_errors() -> None:
    with serve_in_thread(scripted()) as url:
        status, body, _ = raw_post(url, b'{"model": "lab-model", "messages": [')
        assert status == 400 and body["error"]["type"] == "invalid_request_error"
        status, body, _ = raw_post(url, chat_body(messages=[{"role": "tool", "content": "x"}]))
        assert status == 400 and "role 'tool'" in body["error"]["message"]
        status, body, _ = raw_post(url, chat_body(model="gpt-x"))
        assert status == 404 and body["error"]["code"] == "model_not_found"
        status, body, _ = raw_post(url, chat_body(response_format={"type": "grammar"}))
        assert status == 400 and body["error"]["param"] == "response_format"
        with pytest.raises(LLMBackendError, match="does not exist") as info:
            OpenAIBackend("gpt-x", base_url=url, api_key=SECRET).complete(controller_request())
    assert (info.value.status, info.value.attempts) == (404, 1)


def test_busy_server_answers_429_with_retry_after() -> None:
    entered, release = threading.Event(), threading.Event()

    def slow(_: LLMRequest) -> str:
        entered.set()
        release.wait(5)
        return DECISION

    backend = ScriptedBackend({"controller": slow}, model="lab-model")
    with LabServer(backend, max_concurrency=1) as server:
        first = threading.Thread(target=lambda: client(server.url).complete(controller_request()))
        first.start()
        assert entered.wait(5)
        status, body, headers = raw_post(server.url, chat_body())
        with pytest.raises(LLMBackendError) as info:
            client(server.url, max_retries=0).complete(controller_request())
        release.set()
        first.join(5)
    assert status == 429 and headers["Retry-After"] == "1" and body["error"]["code"] == "busy"
    assert info.value.status == 429


def test_structured_mode_negotiation_falls_back_and_remembers() -> None:
    with LabServer(scripted(), response_formats=("json_object", "text")) as server:
        llm = client(server.url)
        assert llm.complete(controller_request(), fallback=FALLBACK).outcome == "valid"
        assert llm.negotiated_mode() == "json_object_schema"
        assert llm.stats_dict()["mode_fallbacks"] == 1
        again = client(server.url)  # the memory is per (base URL, model), shared by instances
        again.complete(controller_request(), fallback=FALLBACK)
        assert again.stats_dict()["mode_fallbacks"] == 0
        with pytest.raises(LLMBackendError, match="not supported") as info:
            client(server.url, structured_mode="json_schema").complete(controller_request())
        assert info.value.status == 400
    with LabServer(scripted(), response_formats=("text",)) as server:
        llm = client(server.url)
        assert llm.complete(controller_request(), fallback=FALLBACK).outcome == "valid"
        assert (llm.negotiated_mode(), llm.stats_dict()["mode_fallbacks"]) == ("text", 2)


def test_a_500_that_refuses_the_format_is_not_retried() -> None:
    """llama-cpp-python refuses a ``json_schema`` format with a 500, a status the client retries: the next mode is tried
    at once, without a retry or its backoff."""
    with LabServer(scripted(), response_formats=("json_object", "text"), format_status=500) as server:
        llm = client(server.url, max_retries=2)
        assert llm.complete(controller_request(), fallback=FALLBACK).outcome == "valid"
    assert llm.negotiated_mode() == "json_object_schema"
    assert llm.stats_dict() == {"calls": 1, "attempts": 2, "retries": 0, "errors": 0, "mode_fallbacks": 1}
    assert server.status_counts == {500: 1, 200: 1}


def test_complete_many_keeps_order_and_stays_within_the_servers_limit() -> None:
    echo = ScriptedBackend({}, default=lambda r: r.messages[-1].content, model="lab-model")
    requests = [LLMRequest(role="answer", messages=(Message(role="user", content=f"q{i}"),)) for i in range(6)]
    with LabServer(echo, max_concurrency=2) as server:
        llm = client(server.url, max_concurrency=2)
        responses = llm.complete_many(requests, max_workers=3)
    assert [r.text for r in responses] == [f"q{i}" for i in range(6)]
    assert Ledger.of_responses(responses).outcomes() == {"text": 6}
    assert server.status_counts[429] == 0  # the backend's semaphore kept within the server's limit


def test_configuration_from_environment_and_secrets_stay_out(monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    with LabServer(scripted(), faults=FaultPlan(rate_limit=1)) as server:
        monkeypatch.setenv("RAG_LAB_MODEL", "lab-model")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        llm = OpenAIBackend()
        with caplog.at_level(logging.DEBUG):
            assert llm.complete(controller_request(), fallback=FALLBACK).outcome == "valid"
    assert (llm.model, llm.base_url) == ("lab-model", server.url)
    assert "retrying" in caplog.text
    for text in (repr(llm), caplog.text, str(llm.cache_identity()), controller_request().cache_key(*llm.cache_identity())):
        assert SECRET not in text
    assert llm._scrub(f"Incorrect API key provided: {SECRET} / sk-tes***2c") == (
        "Incorrect API key provided: [redacted] / sk-[redacted]"
    )
    monkeypatch.delenv("RAG_LAB_MODEL")
    with pytest.raises(ConfigError, match="RAG_LAB_MODEL"):
        OpenAIBackend()


def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    llm = client(f"http://127.0.0.1:{port}/v1", max_retries=1)
    with pytest.raises(LLMBackendError, match="connection failed") as info:
        llm.complete(controller_request())
    assert info.value.attempts == 2 and SECRET not in str(info.value)


@pytest.mark.slow
def test_lab_server_fronts_the_simulator() -> None:
    """The default lab backend behind the server: the role header makes it play the controller."""
    from rag_lab.llm.prompts import EvidenceItem, controller_prompt
    from rag_lab.llm.simulator import SimulatedBackend

    question = "In which city was Ada Lovelace born?"
    evidence = [EvidenceItem(1, "Ada Lovelace", "Ada Lovelace was born in London in 1815.")]
    sim = SimulatedBackend(profile="ideal")
    request = LLMRequest(role="controller", messages=controller_prompt(question, evidence, [question], 3, False),
                         response_schema=ControllerDecision)
    with serve_in_thread(sim) as url:
        resp = OpenAIBackend(sim.model, base_url=url).complete(request, fallback=FALLBACK)
    assert resp.outcome == "valid", resp.reason
    assert resp.parsed == sim.complete(request).parsed


#: The body llama-cpp-python's server (0.3) sends for a ``json_schema`` response format, as captured.
LLAMA_CPP_500 = {"error": {
    "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
               "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
               "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"llama_cpp/server/app.py\", line 376",
    "type": "internal_server_error", "param": None, "code": None}}


def test_format_rejection_is_read_from_the_error_body_whatever_the_status() -> None:
    assert rejects_format(500, LLAMA_CPP_500)
    assert rejects_format(400, {"error": {"message": "Invalid parameter: 'response_format' of type 'json_schema' is not "
                                                     "supported with this model.", "param": "response_format"}})
    assert rejects_format(422, {"detail": [{"loc": ["body", "response_format"], "msg": "extra fields not permitted"}]})
    assert rejects_format(400, None, "Unsupported JSON schema: grammar could not be built")
    assert not rejects_format(500, {"error": {"message": "llama_decode returned -3"}})  # a server fault: retried
    assert not rejects_format(400, {"error": {"message": "Requested tokens (3000) exceed context window of 2048"}})
    assert not rejects_format(429, LLAMA_CPP_500) and not rejects_format(503, LLAMA_CPP_500)


def test_model_may_be_omitted_when_the_server_serves_exactly_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAG_LAB_MODEL", raising=False)
    with LabServer(scripted(), models=["lab-model"]) as server:
        llm = OpenAIBackend(base_url=server.url, api_key=SECRET)
        assert llm.model == "lab-model"
        assert llm.complete(controller_request(), fallback=FALLBACK).outcome == "valid"
    with LabServer(scripted(), models=["lab-model", "other"]) as server:
        with pytest.raises(ConfigError, match=r"serves 2 models, not exactly one: lab-model, other"):
            OpenAIBackend(base_url=server.url, api_key=SECRET)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ConfigError, match="could not be asked for its models") as info:
        OpenAIBackend(base_url=f"http://127.0.0.1:{port}/v1", api_key=SECRET, timeout_s=2.0)
    assert SECRET not in str(info.value)


def test_merge_system_folds_the_instructions_into_the_user_turn() -> None:
    echo = ScriptedBackend({}, default=lambda r: " | ".join(f"{m.role}: {m.content}" for m in r.messages), model="lab-model")
    with serve_in_thread(echo) as url:
        merged = client(url, merge_system=True).complete(controller_request()).text
        plain = client(url).complete(controller_request()).text
    assert merged == "user: Decide. Reply with JSON only.\n\nWhere was Ada Lovelace born?"
    assert plain == "system: Decide. Reply with JSON only. | user: Where was Ada Lovelace born?"
    assert client(url, merge_system=True).cache_identity() != client(url).cache_identity()


def test_the_lab_server_takes_the_message_roles_a_request_may_have() -> None:
    """One list of message roles: the lab server refuses a role a :class:`Message` cannot have, naming those it can."""
    from typing import get_args

    from rag_lab.llm.server.chat_requests import HTTPError

    allowed = get_args(Message.model_fields["role"].annotation)
    with LabServer(scripted()) as server:
        body = {"model": "lab-model", "messages": [{"role": "tool", "content": "x"}]}
        with pytest.raises(HTTPError, match=f"unsupported message role 'tool'; allowed: {', '.join(allowed)}$"):
            server.parse_chat(json.dumps(body).encode(), None)
        for role in allowed:
            body = {"model": "lab-model", "messages": [{"role": role, "content": "x"}]}
            assert server.parse_chat(json.dumps(body).encode(), None)[0].messages[0].role == role


def test_the_structured_modes_taken_are_auto_and_the_ones_it_negotiates() -> None:
    """One list of structured modes (StructuredMode): each is taken, ``auto`` tries every other in order, and an
    unknown one is refused naming them all."""
    from typing import get_args

    from rag_lab.llm.openai_backend import StructuredMode

    modes = get_args(StructuredMode)
    for mode in modes:
        assert OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", structured_mode=mode).structured_mode == mode
    llm = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1")
    assert llm._modes_for(controller_request()) == [m for m in modes if m != "auto"]
    with pytest.raises(ConfigError, match=f"must be one of {', '.join(modes)}; got 'xml'"):
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", structured_mode="xml")  # type: ignore[arg-type]
