"""Checks and fakes for plug-ins: what the project's contract tests run, importable by anyone who writes an
index, an LLM backend, a loader or a policy (as scikit-learn's ``check_estimator``, and DSPy's ``DummyLM``
shipped in the package)::

    from rag_lab.testing import check_index, check_backend, check_loader, check_policy

    check_index(MyIndex)                                # a SearchIndex subclass, or a registered kind name
    check_backend(MyBackend(model="m"))                 # an LLMBackend, ready to answer
    check_loader(load_my_format, "tests/data/tiny.my")  # a function path -> Dataset, and an input it reads
    check_policy(MyPolicy)                              # a Policy subclass
    check_role("my_role", "What is X?")                 # a row of LLM_ROLES, and its prompt's arguments

Each raises a :class:`ContractViolation` (an ``AssertionError``) naming the contract, the rule and what it
saw; they need no model, no network and no pytest. The fakes: :class:`HashEmbedder` (a deterministic
bag-of-words embedder), :class:`ScriptedResources` (retrieval with scripted hits), :func:`corpus_of`, and
:class:`~rag_lab.llm.scripted.ScriptedBackend` (an LLM backend that answers from per-role scripts).

This package sits on top of the layers it checks (index, llm, loaders, pipeline); nothing in ``rag_lab``
imports it (``tests/test_import_layers.py``).
"""

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
