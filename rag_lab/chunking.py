"""Split documents into overlapping word windows (chunks) that keep their character offsets."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rag_lab.errors import ConfigError
from rag_lab.records import Chunk, Document

_WORD = re.compile(r"\S+")


class ChunkingConfig(BaseModel):
    """How documents are cut into chunks: windows of ``max_words`` whitespace-separated
    words, consecutive windows sharing ``overlap_words`` words."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_words: int = Field(default=150, ge=16, le=2048)
    overlap_words: int = Field(default=30, ge=0)

    @model_validator(mode="after")
    def _overlap_below_window(self) -> ChunkingConfig:
        if self.overlap_words >= self.max_words:
            raise ConfigError(f"overlap_words ({self.overlap_words}) must be smaller than max_words ({self.max_words})")
        return self


def chunk_document(doc: Document, config: ChunkingConfig | None = None) -> list[Chunk]:
    """The chunks of one document, in order.

    Chunks start and end on word boundaries; ``doc.text[chunk.start:chunk.end] == chunk.text``. A document with no words
    (empty or blank text) gives one empty chunk, so every document is represented by at least one chunk."""
    config = config or ChunkingConfig()
    spans = [m.span() for m in _WORD.finditer(doc.text)]
    if not spans:
        return [_chunk(doc, 0, 0, 0)]
    stride = config.max_words - config.overlap_words
    chunks: list[Chunk] = []
    first = 0
    while True:
        last = min(first + config.max_words, len(spans)) - 1
        chunks.append(_chunk(doc, len(chunks), spans[first][0], spans[last][1]))
        if last == len(spans) - 1:
            return chunks
        first += stride


def chunk_corpus(documents: Iterable[Document], config: ChunkingConfig | None = None) -> list[Chunk]:
    """The chunks of every document of a corpus (or any iterable of documents), in corpus order."""
    config = config or ChunkingConfig()
    return [chunk for doc in documents for chunk in chunk_document(doc, config)]


def chunk_text_for_embedding(chunk: Chunk) -> str:
    """The text an index sees for a chunk: ``"{title}. {text}"`` when the chunk has a title,
    else the bare text. Dense and BM25 indexes both use it, so both can match on titles."""
    return f"{chunk.title}. {chunk.text}" if chunk.title else chunk.text


def doc_of(chunk_id: str) -> str:
    """The document a chunk id belongs to (``doc#3`` → ``doc``): the inverse of the ids :func:`chunk_document` gives."""
    return chunk_id.rsplit("#", 1)[0]


def _chunk(doc: Document, position: int, start: int, end: int) -> Chunk:
    return Chunk(chunk_id=f"{doc.doc_id}#{position}", doc_id=doc.doc_id, position=position, title=doc.title,
                 text=doc.text[start:end], start=start, end=end)
