"""The lab server (``rag-lab serve``): an OpenAI-compatible endpoint on loopback in front of any lab backend
(:mod:`.lab_server`), the requests it accepts (:mod:`.chat_requests`) and the faults it can inject for tests
(:mod:`.faults`). The method: docs/backends.md, "The lab server"."""
