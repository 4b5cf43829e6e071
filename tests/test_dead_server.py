"""A backend process that dies is named as such: how it ended (exit status or signal), what to do, and
the last lines of its log — at once, not after retries that treat it as a network fault. A remote server
that answered once and now refuses connections has gone away, and is reported so, not retried.

The dying server is a real process on a real loopback socket (tests/servers/dies_on_first_request.py):
it answers ``/v1/models`` like any OpenAI-compatible server, then kills itself on the first chat request
with SIGILL, as llama.cpp built with another CPU's instructions did."""

from __future__ import annotations

import signal
import sys
import tempfile
from pathlib import Path

import pytest

from rag_lab.errors import BackendProcessDied, LLMBackendError, ServerWentAway
from rag_lab.llm.base import LLMRequest, Message
from rag_lab.llm.local.backend import free_port
from rag_lab.llm.local.process import ServerProcess, advice, describe_exit
from rag_lab.llm.openai_backend import OpenAIBackend
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.llm.server.lab_server import serve_in_thread

DYING = Path(__file__).parent / "servers" / "dies_on_first_request.py"
REQUEST = LLMRequest(role="answer", messages=(Message(role="user", content="Hello " * 60),))


def start_dying(tmp_path: Path, how: str) -> tuple[ServerProcess, str]:
    port = free_port()
    proc = ServerProcess("model server", tmp_path / "server.log")
    proc.start([sys.executable, str(DYING), str(port), how], env={"PATH": "/usr/bin:/bin"})
    url = f"http://127.0.0.1:{port}/v1"
    proc.wait_ready(f"{url}/models", timeout_s=30, server_label=url)
    return proc, url


@pytest.mark.parametrize(("how", "says"), [
    ("ILL", "killed by SIGILL (illegal instruction)"),
    ("SEGV", "killed by SIGSEGV (segmentation fault)"),
    ("exit:3", "exited with status 3"),
])
def test_a_server_that_dies_on_its_first_request_is_named_at_once(tmp_path: Path, how: str, says: str) -> None:
    proc, url = start_dying(tmp_path, how)
    try:
        llm = OpenAIBackend("dying-model", base_url=url, max_retries=3, liveness=proc.death)
        with pytest.raises(BackendProcessDied) as info:
            llm.complete(REQUEST)
    finally:
        proc.stop()
    message = str(info.value)
    assert says in message
    assert f"pid {info.value.death.pid}" in message
    assert "got a chat request on /v1/chat/completions" in message  # the log's tail
    assert info.value.attempts == 1 and llm.stats.retries == 0  # not retried as a network fault
    if how == "ILL":
        assert "compiled for another CPU" in message and "scripts/install.sh" in message


def test_without_the_liveness_hook_the_same_death_is_only_a_connection_failure(tmp_path: Path) -> None:
    """The control: what a client that does not know the process sees (and what the lab reported before)."""
    proc, url = start_dying(tmp_path, "ILL")
    try:
        llm = OpenAIBackend("dying-model", base_url=url, max_retries=1)
        with pytest.raises(LLMBackendError) as info:
            llm.complete(REQUEST)
    finally:
        proc.stop()
    assert not isinstance(info.value, BackendProcessDied) and "SIGILL" not in str(info.value)


def test_a_server_that_dies_while_starting_says_how(tmp_path: Path) -> None:
    proc = ServerProcess("model server", tmp_path / "server.log")
    proc.start([sys.executable, str(DYING), str(free_port()), "start-exit:7"], env={"PATH": "/usr/bin:/bin"})
    with pytest.raises(LLMBackendError, match="exited with status 7") as info:
        proc.wait_ready("http://127.0.0.1:9/v1/models", timeout_s=30, server_label="local")
    proc.stop()
    assert "refusing to start" in str(info.value) and "died while starting" in str(info.value)


def test_a_remote_server_that_answered_then_went_away_is_not_retried() -> None:
    with serve_in_thread(ScriptedBackend({}, default="Paris [1]", model="lab-model")) as url:
        llm = OpenAIBackend("lab-model", base_url=url, max_retries=3)
        assert llm.complete(REQUEST).text == "Paris [1]"
    with pytest.raises(ServerWentAway, match="went away") as info:
        llm.complete(REQUEST)
    assert info.value.attempts == 1 and llm.stats.retries == 0


def test_a_server_never_reached_is_still_retried_as_a_network_fault() -> None:
    llm = OpenAIBackend("m", base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=1)
    with pytest.raises(LLMBackendError, match="connection failed") as info:
        llm.complete(REQUEST)
    assert not isinstance(info.value, ServerWentAway) and info.value.attempts == 2


@pytest.mark.parametrize(("code", "text"), [
    (-int(signal.SIGILL), "killed by SIGILL (illegal instruction)"),
    (128 + int(signal.SIGILL), "killed by SIGILL (illegal instruction)"),  # as a shell reports it
    (-int(signal.SIGKILL), "killed by SIGKILL (killed)"),
    (0, "exited with status 0"),
    (1, "exited with status 1"),
])
def test_describe_exit(code: int, text: str) -> None:
    assert describe_exit(code) == text
    assert advice(code)


def test_the_log_tail_is_the_last_lines(tmp_path: Path) -> None:
    log = Path(tempfile.mkstemp(dir=tmp_path)[1])
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    proc = ServerProcess("x", log)
    assert proc.log_tail().splitlines() == [f"line {i}" for i in range(80, 100)]
