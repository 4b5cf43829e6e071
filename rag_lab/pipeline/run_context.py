"""What every step of one question's run shares (:class:`RunContext`, docs/design.md §1): the config, the corpus
resources, the backend, the question's state and trace, and :meth:`RunContext.ask` (one LLM call of a role,
charged to the budgets), :meth:`RunContext.relevance_queries` and :meth:`RunContext.candidates`."""

from __future__ import annotations

from typing import Any

from rag_lab.llm.base import LLMBackend, LLMRequest, LLMResponse, SamplingParams
from rag_lab.llm.role_table import LLM_ROLES
from rag_lab.llm.structured import Fallback
from rag_lab.pipeline.config import PipelineConfig
from rag_lab.pipeline.finalize import ContextItem
from rag_lab.pipeline.resources import CorpusResources
from rag_lab.pipeline.state import QuestionState
from rag_lab.pipeline.trace import LLMCall, Trace


class RunContext:
    """One question's run: the state object, the trace, and the calls the steps make on them."""

    def __init__(self, config: PipelineConfig, resources: CorpusResources, backend: LLMBackend, qid: str,
                 question: str) -> None:
        self.cfg = config
        self.res = resources
        self.backend = backend
        self.question = question
        self.state = QuestionState(question=question)
        self.trace = Trace(qid=qid, question=question)
        self.qid = qid

    def ask(self, role: str, *prompt_args: Any, fallback: Fallback = None, max_tokens: int = 512,
            **prompt_kwargs: Any) -> tuple[LLMResponse, LLMCall]:
        """One call of ``role``: its row of :data:`~rag_lab.llm.role_table.LLM_ROLES` builds the messages from
        ``prompt_args``/``prompt_kwargs`` and names the response schema, both in the config's prompt set
        (``prompts.version``); the response is charged to the question's budgets and kept for the trace."""
        row, prompt_set = LLM_ROLES[role], self.cfg.prompts.version
        messages = row.prompt(*prompt_args, prompt_set=prompt_set, **prompt_kwargs)
        request = LLMRequest(role=role, messages=messages, response_schema=row.schema(prompt_set),
                             params=SamplingParams(max_tokens=max_tokens))
        response = self.backend.complete(request, fallback=fallback)
        call = LLMCall.of(response, messages)
        self.state.charge(call)
        return response, call

    def relevance_queries(self) -> list[str]:
        """What relevance is measured against: the question and every query searched so far."""
        return [self.question, *self.state.searches]

    def candidates(self, chunk_ids: list[str]) -> list[ContextItem]:
        scores = self.res.chunk_relevance(self.relevance_queries(), chunk_ids)
        return [
            ContextItem(chunk_id=c, doc_id=self.res.doc_of(c), title=self.res.chunk[c].title,
                      text=self.res.chunk[c].text, score=s, round=self.state.seen[c].round,
                      rank=self.state.seen[c].rank)
            for c, s in zip(chunk_ids, scores, strict=True)
        ]
