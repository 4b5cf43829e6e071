"""Load MuSiQue files (JSON Lines as published, or a JSON array / Parquet) as a :class:`Dataset`. The supporting
paragraphs are the gold documents and the question decomposition gives the hops and their order; answer aliases
count for every answer metric; an unanswerable example becomes a question with no answer (type
``unanswerable``), which refusing is right for. The layout and its mapping: docs/real-data.md."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, NamedTuple

from rag_lab.loaders.fields import QuestionIds, example_object, examples, is_int, listing, record_id, string
from rag_lab.loaders.jsonl import json_type
from rag_lab.loaders.rows import Where
from rag_lab.records import Corpus, Dataset, Document, EvalSet, Question

MUSIQUE = "musique"
#: The keys a first example has (what :data:`rag_lab.loaders.layouts.LAYOUTS` detects).
MUSIQUE_KEYS = ("paragraphs",)
_COMPOSITION = re.compile(r"^(\dhop\d*)__")


class _Paragraph(NamedTuple):
    title: str
    text: str
    supporting: bool


class _Example(NamedTuple):
    qid: str | None
    where: Where
    fields: dict[str, Any]
    paragraphs: dict[int, _Paragraph]
    support_order: list[int]


def load_musique(path: str | Path, name: str | None = None, split: str = "dev",
                 records: list[tuple[Where, Any]] | None = None) -> Dataset:
    """Read a MuSiQue file into a :class:`Dataset` named ``name`` (default: the file stem)."""
    path = Path(path)
    parsed = [_parse(example, where) for where, example in examples(path, records)]
    texts: dict[str, set[str]] = defaultdict(set)
    for ex in parsed:
        for p in ex.paragraphs.values():
            texts[p.title].add(p.text)

    def doc_id(p: _Paragraph) -> str:
        if len(texts[p.title]) == 1:
            return p.title
        return f"{p.title} [{hashlib.sha1(p.text.encode('utf-8')).hexdigest()[:8]}]"

    documents: dict[str, Document] = {}
    questions: list[Question] = []
    ids = QuestionIds()
    for ex in parsed:
        qid = ids.take(ex.qid, ex.fields["text"], ex.where, "id")
        for p in ex.paragraphs.values():
            documents.setdefault(doc_id(p), Document(doc_id=doc_id(p), title=p.title, text=p.text,
                                                     metadata={"source": "wikipedia"}))
        hops = tuple(dict.fromkeys(doc_id(ex.paragraphs[i]) for i in ex.support_order))
        supporting = [doc_id(p) for _, p in sorted(ex.paragraphs.items()) if p.supporting]
        gold = tuple(dict.fromkeys([*hops, *supporting]))
        questions.append(Question(qid=qid, gold_doc_ids=gold, hop_doc_ids=hops, split=split, **ex.fields))
    notes = ids.notes(path, len(questions))
    name = name or path.stem
    return Dataset(Corpus(documents.values(), name=name), EvalSet(questions, name=name), name=name,
                   source=str(path), notes=notes)


def _parse(example: Any, where: Where) -> _Example:
    """One example's fields, paragraphs by ``idx`` and the paragraph of each decomposition step."""
    example = example_object(example, where)
    qid = record_id(example, where)
    text = string(example, "question", where, non_empty=True)
    answer = string(example, "answer", where)
    aliases = listing(example, "answer_aliases", where) if example.get("answer_aliases") is not None else []
    for i, alias in enumerate(aliases):
        if not isinstance(alias, str):
            raise where.error(f"must be a string, got {json_type(alias)}", f"answer_aliases[{i}]")
    answerable = example.get("answerable", True)
    if not isinstance(answerable, bool):
        raise where.error(f"must be true or false, got {json_type(answerable)}", "answerable")
    paragraphs = _paragraphs(example, where)
    steps = listing(example, "question_decomposition", where)
    if not steps:
        raise where.error("must list at least one step", "question_decomposition")
    order = [_support_idx(step, i, paragraphs, where) for i, step in enumerate(steps)]
    support_order = [i for i in order if i is not None] if None not in order else []
    match = _COMPOSITION.match(qid or "")
    fields: dict[str, Any] = {
        "text": text, "type": "unanswerable" if not answerable else (match.group(1) if match else "unlabeled"),
        "answer": answer if answerable else None, "answer_aliases": tuple(aliases) if answerable else (),
        "min_hops": len(steps),
        "metadata": {"source_format": MUSIQUE} | ({} if answerable else {"unanswerable_answer": answer})}
    return _Example(qid, where, fields, paragraphs, support_order)


def _paragraphs(example: dict[str, Any], where: Where) -> dict[int, _Paragraph]:
    """The example's paragraphs by their ``idx``."""
    out: dict[int, _Paragraph] = {}
    for i, p in enumerate(listing(example, "paragraphs", where)):
        field = f"paragraphs[{i}]"
        if not isinstance(p, dict):
            raise where.error(f"must be an object, got {json_type(p)}", field)
        for key, ok, kind in (("idx", is_int, "an integer"), ("title", lambda v: isinstance(v, str) and v, "a non-empty string"),
                              ("paragraph_text", lambda v: isinstance(v, str), "a string"),
                              ("is_supporting", lambda v: isinstance(v, bool), "true or false")):
            if key not in p:
                raise where.error("missing", f"{field}.{key}")
            if not ok(p[key]):
                raise where.error(f"must be {kind}, got {json_type(p[key])} {p[key]!r:.60}", f"{field}.{key}")
        if p["idx"] in out:
            raise where.error(f"duplicate idx {p['idx']}", f"{field}.idx")
        out[p["idx"]] = _Paragraph(p["title"], p["paragraph_text"].strip(), p["is_supporting"])
    return out


def _support_idx(step: Any, i: int, paragraphs: dict[int, _Paragraph], where: Where) -> int | None:
    """The ``paragraph_support_idx`` of decomposition step ``i`` (``None`` when the data gives none)."""
    field = f"question_decomposition[{i}]"
    if not isinstance(step, dict):
        raise where.error(f"must be an object, got {json_type(step)}", field)
    idx = step.get("paragraph_support_idx")
    if idx is None:
        return None
    if not is_int(idx):
        raise where.error(f"must be an integer or null, got {json_type(idx)}", f"{field}.paragraph_support_idx")
    if idx not in paragraphs:
        raise where.error(f"no paragraph has idx {idx}", f"{field}.paragraph_support_idx")
    return idx
