"""Token counts from a real tokenizer available offline: the WordPiece tokenizer shipped with the
packaged all-MiniLM-L6-v2 (read from its ``tokenizer.json`` with the ``tokenizers`` library,
truncation and padding switched off).

Chat accounting, stated: a prompt costs the tokens of every message's content plus
:data:`PER_MESSAGE_OVERHEAD` tokens per message (role marker and separators, as chat templates
add) plus :data:`REPLY_PRIMING` tokens that open the assistant's reply; a completion costs the
tokens of its text.
"""

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

    @property
    def tokenizer(self):  # noqa: ANN201 - tokenizers.Tokenizer
        with self._lock:
            if self._tokenizer is None:
                from tokenizers import Tokenizer

                path = self._file or packaged_model_path() / "tokenizer.json"
                tok = Tokenizer.from_file(str(path))
                tok.no_truncation()
                tok.no_padding()
                self._tokenizer = tok
            return self._tokenizer

    def count(self, text: str) -> int:
        """Tokens of ``text`` (no special tokens)."""
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids) if text else 0

    def count_many(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def prompt_tokens(self, messages: Sequence[Message]) -> int:
        """Tokens of a chat prompt under the accounting stated in the module doc."""
        counts = self.count_many([m.content for m in messages])
        return sum(counts) + PER_MESSAGE_OVERHEAD * len(messages) + REPLY_PRIMING

    def truncate(self, text: str, max_tokens: int) -> str:
        """``text`` cut after ``max_tokens`` tokens (as a model stops at its token limit)."""
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        if len(enc.ids) <= max_tokens:
            return text
        return text[: enc.offsets[max_tokens - 1][1]]
