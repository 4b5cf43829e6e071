"""The policies: small, frozen, validated configuration objects (docs/design.md §2).

Each policy holds parameters only. Run-time state (round counters, chunks seen, tokens used)
lives in :class:`rag_lab.pipeline.state.QuestionState`, never here. Every field is bounded and
unknown fields are rejected at construction, so a typo in a sweep fails loudly."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rag_lab.errors import ConfigError
from rag_lab.index import IndexKind
from rag_lab.llm.role_table import PromptSetName
from rag_lab.llm.schemas import Route
from rag_lab.pipeline.truncation import TruncationStrategyName
from rag_lab.text_overlap import SHORT_ANSWER_TOKENS

SourceType = str


class Policy(BaseModel):
    """Base of every policy: frozen, no unknown fields, validated on assignment of copies."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)


class RoundCap(Policy):
    """Hard cap on retrieval rounds, enforced in code. A request for one more round is a
    policy rejection handled by the deterministic fallback, never another round."""

    max_rounds: int = Field(default=2, ge=1, le=10)


class SearchBudget(Policy):
    """Any exhausted dimension stops retrieval; the answer is made from what was gathered.
    ``None`` means unlimited. Time counts the LLM calls' modelled latency when the backend
    models it (deterministic), else their wall time, plus retrieval wall time."""

    max_rounds: int | None = Field(default=None, ge=1, le=10)
    max_time_ms: int | None = Field(default=None, ge=1, le=600_000)
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000)


class BudgetDisclosure(Policy):
    """Whether the controller prompt states the cap in the unit it counts ("at most N rounds of
    searches") or only asks for as few rounds as possible. The cap is enforced in code either way."""

    disclosed: bool = False


class ZeroYieldStop(Policy):
    """Stop when a round brings no new chunk although chunks were seen before (``empty_round``).
    When nothing was ever found, keep going to the cap, then fall back to one-shot retrieval."""

    enabled: bool = True


class HyDE(Policy):
    """Hypothetical document embeddings: the LLM writes ``n_docs`` passages; retrieval uses the
    mean of their embeddings (and the query's, with ``include_query``)."""

    enabled: bool = False
    n_docs: int = Field(default=4, ge=1, le=8)
    include_query: bool = True


class QueryRewrite(Policy):
    """``n_rewrites`` LLM rewrites, each retrieved separately, merged by Reciprocal Rank Fusion
    (``Σ 1/(k_rrf + rank)``) together with the original query."""

    enabled: bool = False
    n_rewrites: int = Field(default=3, ge=1, le=8)
    k_rrf: int = Field(default=60, ge=1, le=1000)


class CRAG(Policy):
    """Corrective-RAG grading of the final candidates. Each chunk gets a relevance score on
    [-1, 1]; **Correct** if any ≥ ``upper``, **Incorrect** if all < ``lower``, else **Ambiguous**.
    Correct → standard template; Ambiguous → low-confidence template; Incorrect → discard and
    refuse. ``evaluator``: ``embedding`` (best cosine of the chunk with the question or a refined
    query of a later hop), ``llm`` (the grade role),
    or ``lexical`` (share of question content words found in the chunk, mapped to [-1, 1])."""

    enabled: bool = True
    upper: float = Field(default=0.5, ge=-1.0, le=1.0)
    lower: float = Field(default=0.2, ge=-1.0, le=1.0)
    evaluator: Literal["embedding", "llm", "lexical"] = "embedding"

    @model_validator(mode="after")
    def _ordered(self) -> CRAG:
        if self.lower > self.upper:
            raise ConfigError(f"crag.lower ({self.lower}) must not exceed crag.upper ({self.upper})")
        return self


class Truncation(Policy):
    """How the evidence bundle is cut to the context budget. ``append_then_truncate`` keeps the
    first snippets in arrival order (the classic bug: once round 1 fills the limit, later evidence
    never reaches the prompt); ``rank_then_truncate`` orders all evidence by relevance to the
    question first; ``refine`` splits chunks into sentence strips and keeps the best strips;
    ``round_slots`` ranks too but reserves a place for the best chunk of every retrieval round, so
    the evidence a later round was asked to find is not cut for ranking low against the question. The
    strategies are :data:`~rag_lab.pipeline.truncation.TRUNCATION_STRATEGIES` (one registration adds one)."""

    strategy: TruncationStrategyName = Field(
        default="rank_then_truncate", description="a strategy of rag_lab.pipeline.truncation.TRUNCATION_STRATEGIES")
    max_snippets: int = Field(default=5, ge=1, le=50)
    max_tokens: int = Field(default=1024, ge=32, le=32_768)


class JudgeInput(Policy):
    """An optional sufficiency judge after generation. ``draft_only``: the judge sees question +
    draft (IsUse-style usefulness); ``with_evidence``: question + evidence + draft (IsSup-style
    support). An ``unsupported`` verdict turns the answer into a refusal."""

    enabled: bool = False
    mode: Literal["draft_only", "with_evidence"] = "with_evidence"


class ControllerValidation(Policy):
    """What the controller loop does with a decision that failed validation and could not be repaired.
    ``fallback`` (default): the deterministic fallback decision — ``answer`` if any gathered chunk clears
    the refusal threshold, else ``insufficient``. ``refuse``: the run ends in a refusal, as in a pipeline
    that validates but has no fallback (kept to measure what the fallback buys)."""

    on_invalid: Literal["fallback", "refuse"] = "fallback"


class CitationGuard(Policy):
    """Deterministic guard: citations must point into the context (others are removed), at most
    ``max_citations`` remain, and the answer is refused when the best relevance score of the
    final context is below ``refusal_threshold``. ``require_citation``: whether an answer left with no valid
    citation is refused (the default) or kept, uncited — what the rule costs is a swept difference."""

    max_citations: int = Field(default=10, ge=1, le=50)
    refusal_threshold: float = Field(default=0.1, ge=-1.0, le=1.0)
    require_citation: bool = True


class Generation(Policy):
    """Who writes the answer from the final context. ``guarded`` (the default): the answer prompt (cited, with
    the CRAG grade's template and the INSUFFICIENT rule), then the guards. ``plain``: the plain reader — the
    same model asked for a short answer from the same final context, with no pipeline rules (no citations, no
    guard; only the model's own INSUFFICIENT is a refusal). Paired with ``guarded`` on the same questions, the
    difference is what the pipeline's answer path costs or buys (docs/design.md §5). ``closed_book``: no retrieval
    at all — one call, the question alone (the no-retrieval baseline; on an unanswerable twin, what the model
    answers from memory)."""

    reader: Literal["guarded", "plain", "closed_book"] = "guarded"


class EchoGuard(Policy):
    """Deterministic echo guard (:mod:`rag_lab.pipeline.echo_guard`): a draft that reproduces the
    instructions (a run of ``instruction_run`` tokens or more), copies ``evidence_share`` or more of
    the evidence in runs of ``copy_run`` tokens while being longer than ``short_answer_tokens``, or is
    ``question_share`` or more a copy of the question (runs of ``question_run`` tokens) is not an
    answer: the status is ``echo`` and the refusal text is returned. ``enabled=False`` lets every
    draft through (to show what a parrot scores)."""

    enabled: bool = True
    instruction_run: int = Field(default=8, ge=3, le=64)
    copy_run: int = Field(default=8, ge=3, le=64)
    evidence_share: float = Field(default=0.5, ge=0.05, le=1.0)
    short_answer_tokens: int = Field(default=SHORT_ANSWER_TOKENS, ge=1, le=1000)
    question_run: int = Field(default=3, ge=2, le=16)
    question_share: float = Field(default=0.8, ge=0.05, le=1.0)


COMPARISON_WORDS = ("vs", "versus", "compare", "comparison", "difference between", "respectively", "both")


class Router(Policy):
    """LLM routing (SIMPLE → one-shot retrieval, COMPLEX → controller loop), plus a deterministic
    upgrade to COMPLEX when the question uses comparison wording (``comparison_words``).
    ``enabled=False`` sends every question to the loop without an LLM call."""

    enabled: bool = True
    comparison_upgrade: bool = True
    comparison_words: tuple[str, ...] = COMPARISON_WORDS

    def has_comparison_wording(self, question: str) -> bool:
        """The upgrade's rule: any of ``comparison_words`` in ``question``, on word boundaries, ignoring
        case (the pipeline applies it to a SIMPLE route when ``comparison_upgrade`` is on)."""
        lowered = f" {question.lower()} "
        return any(re.search(rf"\b{re.escape(w)}\b", lowered) for w in self.comparison_words)


class SourceContract(Policy):
    """Allowed source types per route (a document's ``metadata["source"]``). An empty tuple means
    every source is allowed. ``fail_closed`` (default): if filtering leaves nothing, the answer has
    no sources. ``fail_open`` falls back to the unfiltered results — the bug, kept to show it."""

    simple: tuple[SourceType, ...] = ()
    complex: tuple[SourceType, ...] = ()
    mode: Literal["fail_closed", "fail_open"] = "fail_closed"

    def allowed(self, route: Route) -> tuple[SourceType, ...]:
        return self.simple if route == "SIMPLE" else self.complex


class Prompts(Policy):
    """Which prompt set the pipeline speaks (:data:`rag_lab.llm.role_table.PROMPT_SETS`). ``v1``: the original
    wording. ``v2``: written for small real models — the router and the controller state their reason before
    their decision, the controller checks each needed fact against the evidence, and the answer is a few
    cited words. The simulator reads both the same way (it reads sections, not instructions); only the
    token counts differ."""

    version: PromptSetName = "v1"


class Retrieval(Policy):
    """Which index answers queries and how many chunks each query brings back."""

    retriever: IndexKind = Field(default="hybrid", description="an index kind of rag_lab.index.INDEX_KINDS")
    top_k: int = Field(default=5, ge=1, le=100)
    controller_evidence: int = Field(default=8, ge=1, le=50, description="chunks shown to the controller")


class Finalize(Policy):
    """Finalize options that are not headline policies: MMR diversity
    (``λ·sim(d,q) − (1−λ)·max sim(d,d')``) before CRAG grading."""

    mmr: bool = False
    mmr_lambda: float = Field(default=0.7, ge=0.0, le=1.0)


#: Every policy class of this module, derived (a new policy class needs no line here).
__all__ = sorted(name for name, obj in list(globals().items())
                 if isinstance(obj, type) and issubclass(obj, Policy) and obj.__module__ == __name__)
