"""A real local model (llama-cpp-python's server with the packaged GGUFs) through the
OpenAI-compatible backend: a few short calls, so a few seconds to a minute on two cores. Whatever the
tiny model says, the call must end in a visible outcome — valid, repaired, or the caller's fallback
with its reason — never in a silent None. Against the real server: structured-output negotiation
steps down from ``json_schema`` (llama-cpp-python answers it with HTTP 500) without retrying it, a
backend with no model name takes the server's only model, and Gemma 3 270M runs by name with its
own turn format. Model resolution and GGUF metadata need no server."""

from __future__ import annotations

import os
import time

import pytest
from local_model_marks import needs_gemma, needs_server, needs_smollm2

from rag_lab.errors import BackendProcessDied, ConfigError
from rag_lab.llm.base import LLMRequest, Message, SamplingParams
from rag_lab.llm.ledger import Ledger
from rag_lab.llm.local.backend import LocalModelServer, chat_settings, packaged_model_path, resolve_model
from rag_lab.llm.local.gguf import read_metadata
from rag_lab.llm.openai_backend import NO_KEY, OpenAIBackend
from rag_lab.llm.prompts import EvidenceItem, answer_prompt, controller_prompt
from rag_lab.llm.schemas import ControllerDecision

FALLBACK = ControllerDecision(action="insufficient", reason="fallback: the model's decision was unusable")
EVIDENCE = [
    EvidenceItem(1, "Ada Lovelace", "Ada Lovelace was born in London in 1815 and worked with Charles Babbage."),
    EvidenceItem(2, "Analytical Engine", "The Analytical Engine was a mechanical computer designed by Babbage."),
]
QUESTION = "In which city was Ada Lovelace born?"


@pytest.fixture(scope="module")
def server():
    with LocalModelServer() as running:
        yield running
    assert running.port is None  # stopped cleanly


def controller(max_tokens: int) -> LLMRequest:
    messages = controller_prompt(QUESTION, EVIDENCE, [QUESTION], max_rounds=3, disclose_budget=False)
    return LLMRequest(role="controller", messages=messages, response_schema=ControllerDecision,
                      params=SamplingParams(max_tokens=max_tokens))


@pytest.mark.local_model
@needs_server
@needs_smollm2
def test_local_model_decisions_and_answers(server: LocalModelServer) -> None:
    llm = server.backend()
    requests = [
        controller(max_tokens=96),
        controller(max_tokens=4),  # cut off mid-object: a real invalid output
        LLMRequest(role="answer", messages=answer_prompt(QUESTION, EVIDENCE, "correct"), params=SamplingParams(max_tokens=24)),
        LLMRequest(role="answer", messages=answer_prompt("Who designed the Analytical Engine?", EVIDENCE, "correct"),
                   params=SamplingParams(max_tokens=24)),
    ]
    timed = []
    for request in requests:
        start = time.perf_counter()
        timed.append((llm.complete(request, fallback=FALLBACK if request.response_schema else None),
                      time.perf_counter() - start))
    ledger = Ledger.of_responses(r for r, _ in timed)
    for response, seconds in timed:
        print(f"{response.role}: {seconds:.2f} s, outcome={response.outcome}, reason={response.reason!r}, "
              f"usage={response.usage.prompt_tokens}+{response.usage.completion_tokens}, text={response.text[:80]!r}")
        assert response.backend == "openai" and response.model == server.alias
        assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    decisions = [r for r, _ in timed if r.role == "controller"]
    for d in decisions:
        assert d.outcome in {"valid", "repaired", "fallback"}
        assert isinstance(d.parsed, ControllerDecision)
        if d.outcome == "fallback":
            assert d.parsed == FALLBACK and d.reason
    truncated = decisions[1]
    assert (truncated.outcome, truncated.parsed) == ("fallback", FALLBACK)
    assert truncated.reason.startswith("invalid JSON"), truncated.reason
    assert all(r.outcome == "text" for r, _ in timed if r.role == "answer")
    assert [(rec.role, rec.outcome) for rec in ledger.records] == [(r.role, r.outcome) for r, _ in timed]
    assert llm.stats_dict()["errors"] == 0


@pytest.mark.local_model
@needs_server
@needs_smollm2
def test_negotiation_steps_down_from_llama_cpps_http_500_without_retrying(server: LocalModelServer) -> None:
    """llama-cpp-python's server answers ``json_schema`` with HTTP 500 (a pydantic error: "Input should
    be 'text' or 'json_object'"): one attempt, then ``json_object``+schema at once, remembered."""
    OpenAIBackend.forget_negotiated()
    try:
        llm = server.backend(structured_mode="auto", max_retries=3)
        first = llm.complete(controller(max_tokens=8), fallback=FALLBACK)
        assert llm.negotiated_mode() == "json_object_schema"
        assert llm.stats_dict() == {"calls": 1, "attempts": 2, "retries": 0, "errors": 0, "mode_fallbacks": 1}
        assert first.outcome in {"valid", "repaired", "fallback"} and isinstance(first.parsed, ControllerDecision)
        again = server.backend(structured_mode="auto")  # the memory is per (server, model), shared by instances
        again.complete(controller(max_tokens=4), fallback=FALLBACK)
        assert again.stats_dict()["attempts"] == 1 and again.stats_dict()["mode_fallbacks"] == 0
    finally:
        OpenAIBackend.forget_negotiated()


@pytest.mark.local_model
@needs_server
@needs_smollm2
def test_model_may_be_omitted_when_the_server_serves_one(server: LocalModelServer,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAG_LAB_MODEL", raising=False)
    llm = OpenAIBackend(base_url=server.base_url, api_key=NO_KEY)
    assert llm.model == server.alias


@pytest.mark.local_model
@needs_server
@needs_gemma
def test_gemma_by_name_is_served_in_its_own_turn_format() -> None:
    """Gemma 3 270M's GGUF carries no chat template: llama-cpp-python's fallback (llama-2) made it
    continue the ``[INST] <<SYS>>`` prompt. By name it gets Gemma's turns, the instructions folded
    into the user turn (the ``gemma`` format would drop a system message)."""
    with LocalModelServer("gemma3-270m") as gemma:
        assert gemma.chat.chat_format == "gemma" and gemma.chat.merge_system
        assert gemma.command(1)[-2:] == ["--chat_format", "gemma"]
        llm = gemma.backend()
        assert llm.merge_system and "chat_format=gemma" in llm.cache_label
        response = llm.complete(LLMRequest(role="answer", messages=answer_prompt(QUESTION, EVIDENCE, "correct"),
                                           params=SamplingParams(max_tokens=12)))
    print(f"gemma3-270m: {response.text!r}")
    assert response.usage.completion_tokens > 0
    assert "<<SYS>>" not in response.text and "[INST]" not in response.text


@needs_smollm2
def test_models_resolve_by_name_or_path(tmp_path) -> None:
    smol = packaged_model_path()
    assert resolve_model(None) == smol and resolve_model("smollm2-135m") == smol and resolve_model(str(smol)) == smol
    assert chat_settings(smol) == (None, False, "the chat template in the GGUF")
    assert chat_settings(smol, "chatml").chat_format == "chatml"
    meta = read_metadata(smol)
    assert meta["general.architecture"] == "llama" and meta["tokenizer.ggml.tokens"] == "<array of 49152>"
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ConfigError, match="not a GGUF model file"):
        resolve_model(not_gguf)
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_model(tmp_path / "missing.gguf")
    with pytest.raises(ConfigError, match="unknown local model 'gpt-5'.*smollm2-135m.*gemma3-270m"):
        resolve_model("gpt-5")
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(smol.read_bytes()[:4096])
    with pytest.raises(ConfigError, match="cut short"):
        read_metadata(cut)


def test_backend_options_are_checked_before_anything_starts(capsys: pytest.CaptureFixture[str]) -> None:
    from rag_lab.cli import main as cli_main
    from rag_lab.llm.factory import open_backend

    with pytest.raises(ConfigError, match="chat_format is a setting of the local backend"):
        with open_backend("sim", chat_format="chatml"):
            pass
    with pytest.raises(ConfigError, match="base_url is for --backend openai"):
        with open_backend("local", base_url="http://127.0.0.1:9/v1"):
            pass
    assert cli_main(["run", "--dataset", "world", "--question", "single-000", "--backend", "local",
                     "--model", "gpt-5"]) == 2
    assert "unknown local model 'gpt-5'" in capsys.readouterr().err


@pytest.mark.local_model
@needs_server
@needs_smollm2
def test_the_server_dies_with_a_killed_parent(tmp_path) -> None:
    """A sweep killed with SIGKILL must not leave its model server running (it holds a core and ~700 MB)."""
    import signal
    import subprocess
    import sys

    parent = subprocess.Popen(
        [sys.executable, "-c", "from rag_lab.llm.local.backend import LocalModelServer\n"
         "import time\nserver = LocalModelServer(); server.start()\nprint(server.process.pid, flush=True)\ntime.sleep(600)"],
        stdout=subprocess.PIPE, text=True)
    try:
        pid = int(parent.stdout.readline())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            with open(f"/proc/{pid}/stat") as stat:  # a zombie (reaped by init later) counts as gone
                if stat.read().split(") ")[1].startswith("Z"):
                    return
            time.sleep(0.2)
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"the model server {pid} outlived its SIGKILLed parent by 30 s")
    finally:
        if parent.poll() is None:
            parent.kill()


@pytest.mark.local_model
@needs_server
@needs_smollm2
def test_a_long_prompt_runs_and_a_killed_server_is_named(tmp_path) -> None:
    """The prompt that killed a native AMX build with SIGILL ("Hello " * 60) runs on the portable one; then the
    server is killed from outside, and the next call says so at once — signal, log tail — instead of
    retrying a connection to nothing."""
    import signal

    hello = LLMRequest(role="answer", messages=(Message(role="user", content="Hello " * 60),),
                       params=SamplingParams(max_tokens=4))
    with LocalModelServer(log_path=tmp_path / "server.log") as server:
        llm = server.backend(max_retries=3)
        assert llm.complete(hello).outcome in ("valid", "text")
        os.kill(server.process.pid, signal.SIGKILL)
        with pytest.raises(BackendProcessDied, match=r"killed by SIGKILL \(killed\)") as info:
            llm.complete(hello)
    assert info.value.attempts == 1 and llm.stats.retries == 0
    assert str(tmp_path / "server.log") in str(info.value) and info.value.death.log_tail.strip()


@pytest.mark.local_model
@needs_server
@needs_smollm2
def test_a_prompt_beyond_the_context_is_refused_naming_the_call(tmp_path) -> None:
    """llama.cpp refuses a prompt that does not fit its context (HTTP 400); the error names the role and the
    question of the call, the server's words, and what to change — not just "refused the request"."""
    from rag_lab.errors import LLMBackendError

    with LocalModelServer(n_ctx=256, log_path=tmp_path / "server.log") as server:
        with pytest.raises(LLMBackendError) as info:
            server.backend().complete(controller(64), fallback=FALLBACK)
    message = str(info.value)
    assert info.value.status == 400 and "maximum context length is 256 tokens" in message
    assert f"refused the controller call for question {QUESTION!r}" in message and "larger n_ctx" in message
