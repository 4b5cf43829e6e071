"""A config's identity — the parameters its ids and sweep fingerprints hash — stable by construction
(docs/design.md §2, "Identities are stable by construction"): :data:`BASELINE` (never edited) lists the parameters
every stored id was hashed over; one added since enters only when it differs from its default; one removed since
enters with its baseline value (:func:`without_removed`). :func:`stable` is the rule for any identity."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from rag_lab.errors import ConfigError

#: The parameters of every stored id, with their values when frozen (``rewrite.fusion`` is removed: reciprocal rank
#: fusion, its one value, is what the pipeline does). Frozen: a new parameter is not added here, ever.
BASELINE: dict[str, Any] = {
    "router.enabled": True,
    "router.comparison_upgrade": True,
    "router.comparison_words": ("vs", "versus", "compare", "comparison", "difference between", "respectively",
                                "both"),
    "retrieval.retriever": "hybrid",
    "retrieval.top_k": 5,
    "retrieval.controller_evidence": 8,
    "rewrite.enabled": False,
    "rewrite.n_rewrites": 3,
    "rewrite.k_rrf": 60,
    "hyde.enabled": False,
    "hyde.n_docs": 4,
    "hyde.include_query": True,
    "round_cap.max_rounds": 2,
    "budget.max_rounds": None,
    "budget.max_time_ms": None,
    "budget.max_tokens": None,
    "disclosure.disclosed": False,
    "validation.on_invalid": "fallback",
    "zero_yield.enabled": True,
    "finalize.mmr": False,
    "finalize.mmr_lambda": 0.7,
    "crag.enabled": True,
    "crag.upper": 0.5,
    "crag.lower": 0.2,
    "crag.evaluator": "embedding",
    "truncation.strategy": "rank_then_truncate",
    "truncation.max_snippets": 5,
    "truncation.max_tokens": 1024,
    "judge.enabled": False,
    "judge.mode": "with_evidence",
    "citations.max_citations": 10,
    "citations.refusal_threshold": 0.1,
    "echo.enabled": True,
    "echo.instruction_run": 8,
    "echo.copy_run": 8,
    "echo.evidence_share": 0.5,
    "echo.short_answer_tokens": 48,
    "echo.question_run": 3,
    "echo.question_share": 0.8,
    "sources.simple": (),
    "sources.complex": (),
    "sources.mode": "fail_closed",
    "prompts.version": "v1",
    "rewrite.fusion": "rrf",
}


def stable(values: Mapping[str, Any], defaults: Mapping[str, Any], frozen: Collection[str]) -> dict[str, Any]:
    """The rule, for any identity: the entries of ``values`` whose key is in the ``frozen`` baseline, and every other
    one off its default (in ``defaults``; a key with no default is always kept), in ``values``' order."""
    return {key: value for key, value in values.items()
            if key in frozen or key not in defaults or value != defaults[key]}


def identity(flat: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The identity of a config whose parameters are ``flat`` (``defaults``: the same keys at their defaults): the
    baseline's parameters and every other one off its default, in ``flat``'s order, then the removed ones."""
    return {**stable(flat, defaults, BASELINE), **removed(flat)}


def removed(flat: Mapping[str, Any]) -> dict[str, Any]:
    """The baseline's parameters that a config of parameters ``flat`` no longer has, with their one value."""
    return {key: value for key, value in BASELINE.items() if key not in flat}


def without_removed(data: Mapping[str, Any], gone: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` (nested or dotted keys) without the ``gone`` parameters (:func:`removed`), each checked to hold its
    one value."""
    out = dict(data)
    for key, only in gone.items():
        policy, field = key.split(".")
        section = out.get(policy)
        found = [out.pop(key)] if key in out else []
        if isinstance(section, Mapping) and field in section:
            found.append(section[field])
            out[policy] = {k: v for k, v in section.items() if k != field}
        if any(_plain(value) != _plain(only) for value in found):
            raise ConfigError(f"{key} was removed: {only!r}, its only value, is what the pipeline always does; "
                              f"got {found[0]!r}")
    return out


def _plain(value: Any) -> Any:
    """Lists and tuples alike (a stored identity is JSON)."""
    return list(value) if isinstance(value, tuple) else value
