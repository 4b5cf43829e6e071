"""Shared test set-up: offline model loading and a repo-local cache that persists between runs."""

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAG_LAB_CACHE", str(Path(__file__).resolve().parent.parent / ".cache" / "rag_lab"))
