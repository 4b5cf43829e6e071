"""A reply body that is not UTF-8 (a byte 0xff) from an OpenAI-compatible server is retried, and the error after
the last attempt names the server: through a real socket on 127.0.0.1, with the real ``openai`` client."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from rag_lab.errors import LLMBackendError
from rag_lab.llm.base import LLMRequest, Message
from rag_lab.llm.openai_backend import OpenAIBackend

#: A chat completion whose bytes are cut by a 0xff: valid JSON around it, not UTF-8 inside.
BODY = (b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{"index": 0, '
        b'"finish_reason": "stop", "message": {"role": "assistant", "content": "Paris \xff"}}]}')


class _Undecodable(http.server.BaseHTTPRequestHandler):
    posts = 0

    def do_POST(self) -> None:  # noqa: N802 (the http.server hook's name)
        type(self).posts += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Undecodable.posts = 0
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Undecodable)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_an_undecodable_reply_is_retried_and_its_error_names_the_server(server: str) -> None:
    llm = OpenAIBackend("m", base_url=server, api_key="none", timeout_s=2.0, max_retries=2)
    request = LLMRequest(role="answer", messages=(Message(role="user", content="Where?"),))
    with pytest.raises(LLMBackendError) as info:
        llm.complete(request)
    assert _Undecodable.posts == 3 and info.value.attempts == 3          # retried: 1 + max_retries attempts
    assert server.removesuffix("/v1") in str(info.value) and "not UTF-8" in str(info.value), str(info.value)
