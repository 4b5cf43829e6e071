"""A scripted backend (:class:`ScriptedBackend`): a deterministic, offline test double for pipeline tests. Each
role gets a script — texts returned in order, or a function ``request -> text`` — and a role whose script is
used up (or missing) gets ``default``, or a :class:`ScriptExhaustedError` naming the role. Every request is kept
in ``requests`` for assertions. Token counts are whitespace word counts (a stand-in, not a tokenizer) and there
is no speed model (``modelled_latency_s`` is None). Where the project's checks use it: docs/design.md §7."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from rag_lab.errors import ConfigError, RagLabError
from rag_lab.llm.base import Completion, LLMBackend, LLMRequest, Usage

Responder = Callable[[LLMRequest], str]
Script = Sequence[str] | Responder


class ScriptExhaustedError(RagLabError, LookupError):
    """A role was asked for more responses than its script holds, and there is no default."""


def _check_script(role: str, script: object) -> Script:
    if callable(script):
        return script  # type: ignore[return-value]
    if isinstance(script, str | bytes) or not isinstance(script, Sequence):
        raise TypeError(
            f"script for role {role!r} must be a list of strings or a function request -> str, got {type(script).__name__}"
        )
    bad = [type(t).__name__ for t in script if not isinstance(t, str)]
    if bad:
        raise TypeError(f"script for role {role!r} must hold strings, got a {bad[0]}")
    return tuple(script)


def word_count(text: str) -> int:
    """Whitespace-separated words in ``text`` (the scripted backend's token count)."""
    return len(text.split())


class ScriptedBackend(LLMBackend):
    """Returns scripted texts per role and records every request it receives::

        backend = ScriptedBackend(
            {"controller": ['{"action": "retrieve_again", "queries": ["x"]}', '{"action": "answer"}'],
             "answer": ["42 [1]"]},
            default='{"route": "SIMPLE"}',
        )"""

    name = "scripted"

    def __init__(self, scripts: Mapping[str, Script], default: str | Responder | None = None,
                 model: str = "scripted") -> None:
        if not isinstance(scripts, Mapping):
            raise TypeError(f"scripts must map role -> script, got {type(scripts).__name__}")
        if default is not None and not (isinstance(default, str) or callable(default)):
            raise TypeError(f"default must be a string or a function request -> str, got {type(default).__name__}")
        if not model.strip():
            raise ConfigError("model must be a non-empty name")
        super().__init__(model)
        self.scripts: dict[str, Script] = {role: _check_script(role, s) for role, s in scripts.items()}
        self.default = default
        self.requests: list[LLMRequest] = []
        self._used: dict[str, int] = {role: 0 for role in self.scripts}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ScriptedBackend(roles={sorted(self.scripts)}, calls={len(self.requests)})"

    def requests_for(self, role: str) -> list[LLMRequest]:
        """The requests received for ``role``, in order."""
        return [r for r in self.requests if r.role == role]

    def remaining(self, role: str) -> int:
        """How many scripted texts ``role`` has not used yet (0 for a function or no script)."""
        script = self.scripts.get(role)
        if script is None or callable(script):
            return 0
        return len(script) - self._used[role]

    def _next_text(self, request: LLMRequest) -> str:
        role = request.role
        with self._lock:
            self.requests.append(request)
            script = self.scripts.get(role)
            if script is not None and not callable(script) and self._used[role] < len(script):
                self._used[role] += 1
                return script[self._used[role] - 1]
        responder = script if callable(script) else self.default
        if responder is None:
            if script is None:
                raise ScriptExhaustedError(f"no script for role {role!r} and no default (scripted roles: {sorted(self.scripts)})")
            raise ScriptExhaustedError(f"the script for role {role!r} is used up ({len(script)} texts) and there is no default")
        text = responder if isinstance(responder, str) else responder(request)
        if not isinstance(text, str):
            raise TypeError(f"the script function for role {role!r} returned {type(text).__name__}, not str")
        return text

    def _generate(self, request: LLMRequest) -> Completion:
        text = self._next_text(request)
        prompt_tokens = sum(word_count(m.content) for m in request.messages)
        return Completion(text=text, usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=word_count(text)))
