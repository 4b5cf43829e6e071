"""A local model behind the OpenAI-compatible backend: the backend that starts and stops its llama.cpp server
(:mod:`.backend`), the server process and its death (:mod:`.process`), the GGUF header (:mod:`.gguf`), and the
sha256-pinned chunk packages the weights come in (:mod:`.model_pack`). The method: docs/backends.md."""
