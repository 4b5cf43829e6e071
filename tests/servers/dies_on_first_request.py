"""An OpenAI-compatible server that dies on its first chat request, as a native build for another CPU does.

``python dies_on_first_request.py PORT [SIGNAL | exit:N | start-exit:N]``: answers ``GET /v1/models``
(so a client sees it ready), prints a line to its log for each request, and on the first
``POST /v1/chat/completions`` kills itself with SIGNAL (default ILL, the way llama.cpp's AMX kernels
died on a CPU without AMX) or exits with status N. ``start-exit:N`` exits with N before listening.
Core dumps are off, so the test leaves no core file behind."""

import json
import os
import resource
import signal
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
PORT = int(sys.argv[1])
HOW = sys.argv[2] if len(sys.argv) > 2 else "ILL"
if HOW.startswith("start-exit:"):
    print("dying server: refusing to start", flush=True)
    sys.exit(int(HOW.split(":", 1)[1]))


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the stdlib's name
        print("dying server:", format % args, flush=True)

    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "dying-model", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        print(f"dying server: got a chat request on {self.path}; ggml would now run an instruction this CPU lacks",
              flush=True)
        if HOW.startswith("exit:"):
            os._exit(int(HOW.split(":", 1)[1]))
        os.kill(os.getpid(), getattr(signal, f"SIG{HOW}"))


print(f"dying server: listening on 127.0.0.1:{PORT}", flush=True)
HTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
