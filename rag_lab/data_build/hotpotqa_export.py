"""Export world questions in the HotpotQA distractor format: each bridge or comparison question with its gold
documents plus BM25-retrieved distractors, split into sentences, with ``supporting_facts``; the file loads with
:func:`rag_lab.loaders.load_hotpotqa` like the real one."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rag_lab.chunking import ChunkingConfig, chunk_corpus
from rag_lab.errors import ConfigError
from rag_lab.index import BM25Index, doc_run
from rag_lab.records import Dataset, Document

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9#`@\[])")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``; all but the first keep a leading space, as in HotpotQA."""
    parts = [p for p in _SENTENCE_END.split(text.strip()) if p]
    return [p if i == 0 else " " + p for i, p in enumerate(parts)]


def _titles(docs: Sequence[Document]) -> dict[str, str]:
    """A unique paragraph title per document: its title, plus its id where titles repeat."""
    counts = Counter(d.title for d in docs)
    return {d.doc_id: d.title if counts[d.title] == 1 else f"{d.title} ({d.doc_id})" for d in docs}


def export_hotpotqa(dataset: Dataset, types: Sequence[str] = ("bridge", "comparison"),
                    n_distractors: int = 8) -> list[dict[str, Any]]:
    """HotpotQA-shaped examples for the questions of ``types`` that have gold documents."""
    if n_distractors < 0:
        raise ConfigError(f"n_distractors must be >= 0, got {n_distractors}")
    questions = [q for q in dataset.evalset if q.type in types and q.gold_doc_ids]
    if not questions:
        raise ConfigError(f"dataset {dataset.name!r} has no questions of types {list(types)} with gold documents")
    chunks = chunk_corpus(dataset.corpus, ChunkingConfig(max_words=2048, overlap_words=0))
    index = BM25Index()
    index.build(chunks)
    depth = n_distractors + max(len(q.gold_doc_ids) for q in questions) + 1
    hits = index.search([q.text for q in questions], depth)
    run = doc_run({q.qid: h for q, h in zip(questions, hits, strict=True)},
                  {c.chunk_id: c.doc_id for c in chunks}, depth)
    titles = _titles(list(dataset.corpus))

    examples = []
    for q in questions:
        distractors = [d for d in run[q.qid] if d not in q.gold_doc_ids][:n_distractors]
        context, facts = [], []
        for doc_id in [*q.gold_doc_ids, *distractors]:
            sentences = split_sentences(dataset.corpus[doc_id].text)
            context.append([titles[doc_id], sentences])
            if doc_id in q.gold_doc_ids:
                holding = [i for i, s in enumerate(sentences) if any(a.lower() in s.lower() for a in q.gold_answers)]
                facts += [[titles[doc_id], i] for i in holding or [0]]
        examples.append({"_id": q.qid, "question": q.text, "answer": q.answer, "type": q.type, "level": "medium",
                         "supporting_facts": facts, "context": context})
    return examples
