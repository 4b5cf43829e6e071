"""Token counts from the WordPiece tokenizer shipped with the packaged all-MiniLM-L6-v2. A prompt costs its
messages' tokens plus :data:`PER_MESSAGE_OVERHEAD` per message and :data:`REPLY_PRIMING`; a completion costs
the tokens of its text."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from rag_lab.embedding import packaged_model_path
from rag_lab.llm.base import Message

PER_MESSAGE_OVERHEAD = 4
REPLY_PRIMING = 3


class TokenCounter:
    """Counts tokens with the packaged MiniLM tokenizer (loaded once, on first use)."""

    def __init__(self, tokenizer_file: str | Path | None = None) -> None:
        self._file = Path(tokenizer_file) if tokenizer_file else None
        self._tokenizer = None
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()
        self._lines: dict[str, int] = {}
        self.capacity = 500_000

    @property
    def tokenizer(self):  # noqa: ANN201 - tokenizers.Tokenizer
        with self._load_lock:
            if self._tokenizer is None:
                from tokenizers import Tokenizer

                path = self._file or packaged_model_path() / "tokenizer.json"
                tok = Tokenizer.from_file(str(path))
                tok.no_truncation()
                tok.no_padding()
                self._tokenizer = tok
            return self._tokenizer

    def count(self, text: str) -> int:
        """Tokens of ``text`` (no special tokens). WordPiece splits on whitespace first, so a text's count is the sum of
        its lines' counts; lines (an evidence item is one line) are counted once and remembered."""
        if not text:
            return 0
        lines = text.split("\n")
        with self._lock:
            missing = [line for line in dict.fromkeys(lines) if line not in self._lines]
        if missing:
            encoded = self.tokenizer.encode_batch(missing, add_special_tokens=False)
            with self._lock:
                for line, enc in zip(missing, encoded, strict=True):
                    self._lines[line] = len(enc.ids)
                if len(self._lines) > self.capacity:
                    self._lines.clear()
                    self._lines.update({line: len(enc.ids) for line, enc in zip(missing, encoded, strict=True)})
        with self._lock:
            return sum(self._lines[line] for line in lines)

    def prompt_tokens(self, messages: Sequence[Message]) -> int:
        """Tokens of a chat prompt under the accounting stated in the module doc."""
        return sum(self.count(m.content) for m in messages) + PER_MESSAGE_OVERHEAD * len(messages) + REPLY_PRIMING

    def truncate(self, text: str, max_tokens: int) -> str:
        """``text`` cut after ``max_tokens`` tokens (as a model stops at its token limit)."""
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        if len(enc.ids) <= max_tokens:
            return text
        return text[: enc.offsets[max_tokens - 1][1]]
