"""Load HotpotQA and 2WikiMultihopQA files as a :class:`Dataset`, in the original or the Hugging Face layout, as a
JSON array, JSON Lines or Parquet (:mod:`rag_lab.loaders.rows`): one document per context title, the supporting
titles as gold documents (kept when no context holds them: :attr:`~rag_lab.records.Dataset.coverage`). The
layouts, the mapping and the errors: docs/real-data.md."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from rag_lab.errors import ConfigError, DataFormatError
from rag_lab.loaders.fields import QuestionIds, example_object, examples, is_int, listing, record_id, string
from rag_lab.loaders.jsonl import json_type
from rag_lab.loaders.rows import Where
from rag_lab.records import UNLABELED, Corpus, Dataset, Document, EvalSet, Question

HOTPOTQA = "hotpotqa"
TWOWIKI = "2wikimultihopqa"
#: The keys a first example has in each variant (what :data:`rag_lab.loaders.layouts.LAYOUTS` detects).
HOTPOTQA_KEYS = ("context",)
TWOWIKI_KEYS = ("context", "evidences")
#: 2WikiMultihopQA question types whose evidence chain is a sequence of hops.
CHAIN_TYPES = frozenset({"compositional", "inference"})


class HotpotQAConflictWarning(UserWarning):
    """Paragraphs with the same title but different text; the first one was kept."""


def load_hotpotqa(path: str | Path, name: str | None = None, split: str = "dev",
                  records: list[tuple[Where, Any]] | None = None, variant: str | None = None) -> Dataset:
    """Read a HotpotQA or 2WikiMultihopQA file into a :class:`Dataset` named ``name`` (default: the file stem), every
    question in ``split``. ``variant`` is ``"hotpotqa"`` or ``"2wikimultihopqa"`` (every example must then have
    ``evidences``); None tells it from the first example (2WikiMultihopQA when it has ``evidences``).

    Paragraphs that repeat a title with different text keep the first text; a single
    :class:`HotpotQAConflictWarning` reports how many there were. ``records`` are the file's
    already-read records (the dispatcher in :mod:`rag_lab.loaders` passes them)."""
    path = Path(path)
    records = examples(path, records)
    if variant is None:
        first = records[0][1]
        variant = TWOWIKI if isinstance(first, dict) and all(key in first for key in TWOWIKI_KEYS) else HOTPOTQA
    if variant not in (HOTPOTQA, TWOWIKI):
        raise ConfigError(f"variant is {HOTPOTQA!r} or {TWOWIKI!r}, got {variant!r}")
    documents: dict[str, Document] = {}
    questions: list[Question] = []
    ids = QuestionIds()
    conflicts: list[str] = []
    for where, example in records:
        qid, question, paragraphs = _parse_example(example, where, split, variant)
        qid = ids.take(qid, question.text, where, "_id" if "_id" in example else "id")
        questions.append(question.model_copy(update={"qid": qid}))
        for doc in paragraphs:
            if documents.setdefault(doc.doc_id, doc).text != doc.text:
                conflicts.append(doc.doc_id)
    if conflicts:
        _warn_conflicts(path, conflicts)
    notes = ids.notes(path, len(questions))
    name = name or path.stem
    corpus = Corpus(documents.values(), name=name)
    evalset = EvalSet(questions, name=name)
    return Dataset(corpus, evalset, name=name, source=str(path), allow_missing_gold=True, notes=notes)


def _warn_conflicts(path: Path, titles: list[str]) -> None:
    """One warning counting the paragraphs whose text differs from the kept one of that title."""
    distinct = list(dict.fromkeys(titles))
    shown = ", ".join(repr(t) for t in distinct[:3]) + (", ..." if len(distinct) > 3 else "")
    warnings.warn(
        f"{path}: {len(titles)} paragraph(s) repeat a title with different text; "
        f"kept the first text of each of {len(distinct)} title(s): {shown}",
        HotpotQAConflictWarning,
        stacklevel=3,
    )


def _parse_example(example: Any, where: Where, split: str, source: str) -> tuple[str | None, Question, list[Document]]:
    """The id (``None`` if absent), question and context paragraphs of one example."""
    example = example_object(example, where)
    qid = record_id(example, where)
    text = string(example, "question", where, non_empty=True)
    answer = string(example, "answer", where)
    qtype = string(example, "type", where, non_empty=True) if example.get("type") is not None else UNLABELED
    hf_layout = isinstance(example.get("context"), dict)
    paragraphs = _context(example, where)
    gold = _supporting_titles(example, where)
    hops: tuple[str, ...] = ()
    if source == TWOWIKI:
        chain = _evidence_chain(example, where, gold)
        hops = chain if qtype in CHAIN_TYPES else ()
    level = {"level": example["level"]} if example.get("level") is not None else {}
    metadata = level | {"source_format": source, "layout": "huggingface" if hf_layout else "original"}
    question = Question(qid=qid or "pending", text=text, type=qtype, answer=answer, gold_doc_ids=gold, hop_doc_ids=hops,
                        min_hops=len(gold), split=split, metadata=metadata)
    return qid, question, paragraphs


def _context(example: dict[str, Any], where: Where) -> list[Document]:
    """The example's ``context`` paragraphs as documents (sentences joined, then stripped)."""
    documents = []
    for i, (title, sentences) in enumerate(_context_pairs(example, where)):
        if not (isinstance(title, str) and title and isinstance(sentences, list) and all(isinstance(s, str) for s in sentences)):
            raise _bad_context(where, i, [title, sentences])
        text = "".join(sentences).strip()
        documents.append(Document(doc_id=title, title=title, text=text, metadata={"source": "wikipedia"}))
    return documents


def _context_pairs(example: dict[str, Any], where: Where) -> list[tuple[Any, Any]]:
    """``(title, sentences)`` pairs from either layout of ``context``."""
    context = example.get("context")
    if isinstance(context, dict):
        sentences_key = "sentences" if "sentences" in context else "content"
        titles, sentences = _columns(context, "context", ("title", sentences_key), where)
        return list(zip(titles, sentences, strict=True))
    pairs = []
    for i, entry in enumerate(listing(example, "context", where)):
        if not (isinstance(entry, list) and len(entry) == 2):
            raise _bad_context(where, i, entry)
        pairs.append((entry[0], entry[1]))
    return pairs


def _bad_context(where: Where, i: int, entry: Any) -> DataFormatError:
    """The error for context entry ``i``, which is no ``[title, [sentence, ...]]`` pair with a non-empty title."""
    return where.error(f"must be [title, [sentence, ...]] with a non-empty title, got {entry!r:.100}", f"context[{i}]")


def _columns(value: dict[str, Any], field: str, keys: tuple[str, str], where: Where) -> tuple[list[Any], list[Any]]:
    """Two equally long lists from a Hugging Face dict-of-lists field."""
    for key in keys:
        if key not in value:
            raise where.error("missing", f"{field}.{key}")
        if not isinstance(value[key], list):
            raise where.error(f"must be a list, got {json_type(value[key])}", f"{field}.{key}")
    first, second = value[keys[0]], value[keys[1]]
    if len(first) != len(second):
        message = f"{keys[0]} has {len(first)} entries but {keys[1]} has {len(second)}"
        raise where.error(message, field)
    return first, second


def _supporting_titles(example: dict[str, Any], where: Where) -> tuple[str, ...]:
    """The distinct titles of the example's ``supporting_facts`` (either layout), in order."""
    facts = example.get("supporting_facts")
    if isinstance(facts, dict):
        pairs = list(zip(*_columns(facts, "supporting_facts", ("title", "sent_id"), where), strict=True))
    else:
        pairs = [tuple(f) if isinstance(f, list) and len(f) == 2 else (f,) for f in listing(example, "supporting_facts", where)]
    titles: dict[str, None] = {}
    for i, fact in enumerate(pairs):
        if not (len(fact) == 2 and isinstance(fact[0], str) and fact[0] and is_int(fact[1])):
            message = f"must be [title, sentence index], got {list(fact)!r:.100}"
            raise where.error(message, f"supporting_facts[{i}]")
        titles[fact[0]] = None
    return tuple(titles)


def _evidence_chain(example: dict[str, Any], where: Where, gold: tuple[str, ...]) -> tuple[str, ...]:
    """The supporting titles in the order 2WikiMultihopQA's ``evidences`` visit them (each title
    placed at the first triple whose subject it is); ``()`` when a title is no triple's subject."""
    evidences = example.get("evidences")
    if isinstance(evidences, dict):  # some Hugging Face exports: {"fact": [...], "relation": [...], "entity": [...]}
        subjects, _ = _columns(evidences, "evidences", ("fact", "relation"), where)
    else:
        subjects = []
        for i, triple in enumerate(listing(example, "evidences", where)):
            if not (isinstance(triple, list) and len(triple) == 3 and all(isinstance(t, str) for t in triple)):
                raise where.error(f"must be [subject, relation, object], got {triple!r:.100}", f"evidences[{i}]")
            subjects.append(triple[0])
    first_at: dict[str, int] = {}
    for i, subject in enumerate(subjects):
        first_at.setdefault(_fold(subject), i)
    if not gold or any(_fold(t) not in first_at for t in gold):
        return ()
    return tuple(sorted(gold, key=lambda t: first_at[_fold(t)]))


def _fold(text: Any) -> str:
    return " ".join(str(text).split()).casefold()
