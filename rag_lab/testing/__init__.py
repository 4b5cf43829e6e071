"""Checks and fakes for plug-ins: what the project's contract tests run, importable by anyone who writes an index,
an LLM backend, a loader, a policy or an LLM role (as scikit-learn's ``check_estimator``, and DSPy's ``DummyLM``
shipped in the package): :func:`check_index`, :func:`check_backend`, :func:`check_loader`, :func:`check_policy`,
:func:`check_role`. Each raises a :class:`ContractViolation` (an ``AssertionError``) naming the contract, the rule
and what it saw; they need no model, no network and no pytest. The fakes: :class:`HashEmbedder`,
:class:`ScriptedResources`, :func:`corpus_of` and :class:`~rag_lab.llm.scripted.ScriptedBackend`. This package
sits on top of the layers it checks; nothing in ``rag_lab`` imports it. How to use them: docs/api/testing.md."""

from __future__ import annotations

from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.testing.checks import (
                                    CHAT_REQUEST,
                                    INDEX_TEXTS,
                                    ROUTE_FALLBACK,
                                    ROUTE_REQUEST,
                                    ContractViolation,
                                    check_backend,
                                    check_index,
                                    check_loader,
                                    check_policy,
                                    index_chunks,
                                    policy_bounds,
)
from rag_lab.testing.fakes import HashEmbedder, ScriptedResources, corpus_of
from rag_lab.testing.role_check import check_role

__all__ = [
    "CHAT_REQUEST", "INDEX_TEXTS", "ROUTE_FALLBACK", "ROUTE_REQUEST", "ContractViolation", "HashEmbedder", "ScriptedBackend",
    "ScriptedResources", "check_backend", "check_index", "check_loader", "check_policy", "check_role", "corpus_of",
    "index_chunks", "policy_bounds",
]
