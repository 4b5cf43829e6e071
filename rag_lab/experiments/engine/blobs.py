"""The run store's blob format: a trace's or a result's JSON, zlib-compressed. Workers write it (so only bytes
cross a process boundary), the store keeps it, the results read it back."""

from __future__ import annotations

import zlib

#: zlib's level for the stored JSON (the world's trace JSON shrinks about 3.4×, 6.5 kB to 1.9 kB).
COMPRESSION_LEVEL = 6


def compress(text: str) -> bytes:
    """``text`` as a stored blob."""
    return zlib.compress(text.encode("utf-8"), COMPRESSION_LEVEL)


def decompress(blob: bytes) -> str:
    """A stored blob's text."""
    return zlib.decompress(blob).decode("utf-8")
