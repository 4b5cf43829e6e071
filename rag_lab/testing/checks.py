"""The contract of each plug-in kind, as checks anyone can run on their own plug-in (as scikit-learn's
``check_estimator``): :func:`check_index`, :func:`check_backend`, :func:`check_loader` and :func:`check_policy`
exercise it on a tiny input and raise a :class:`ContractViolation` naming the contract, the rule and what was
wrong. None needs a model, a network or pytest; the project's contract tests run them over every plug-in."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import ValidationError

from rag_lab.embedding import Embedder
from rag_lab.errors import DataFormatError
from rag_lab.index import INDEX_KINDS, DenseIndex, SearchIndex, load_index, make_index
from rag_lab.index.base import META_FILE
from rag_lab.llm.base import LLMBackend, LLMRequest, Message
from rag_lab.llm.schemas import RouteDecision
from rag_lab.pipeline.config import POLICIES, PipelineConfig
from rag_lab.pipeline.policies import Policy
from rag_lab.records import Chunk, Dataset
from rag_lab.testing.fakes import HashEmbedder

__all__ = ["CHAT_REQUEST", "INDEX_TEXTS", "ROUTE_FALLBACK", "ROUTE_REQUEST", "ContractViolation", "check_backend",
           "check_index", "check_loader", "check_policy", "index_chunks", "policy_bounds"]


class ContractViolation(AssertionError):
    """A plug-in broke its contract: ``contract`` (``"index"``, ``"backend"``, ``"loader"``, ``"policy"``),
    the ``rule`` it broke (a short name, e.g. ``"hits best first"``) and ``detail`` (what was seen)."""

    def __init__(self, contract: str, rule: str, detail: str) -> None:
        self.contract = contract
        self.rule = rule
        self.detail = detail
        super().__init__(f"{contract} contract, rule '{rule}': {detail}")


class _Contract:
    """The rules of one check on one subject (the subject is named in every violation)."""

    def __init__(self, contract: str, subject: str) -> None:
        self.contract = contract
        self.subject = subject

    def fail(self, rule: str, detail: str) -> ContractViolation:
        return ContractViolation(self.contract, rule, f"{self.subject}: {detail}")

    def require(self, ok: object, rule: str, detail: str) -> None:
        if not ok:
            raise self.fail(rule, detail)

    @contextmanager
    def raises(self, rule: str, expected: type[BaseException] | tuple[type[BaseException], ...], what: str,
               match: str | None = None) -> Iterator[list[BaseException]]:
        """The block must raise ``expected`` (with a message matching ``match``); the error is put in the
        yielded list for further checks."""
        names = " or ".join(e.__name__ for e in (expected if isinstance(expected, tuple) else (expected,)))
        caught: list[BaseException] = []
        try:
            yield caught
        except expected as exc:
            if match is not None and not re.search(match, str(exc)):
                raise self.fail(rule, f"{what} raised {type(exc).__name__} {str(exc)!r}, whose message does not "
                                      f"match {match!r}") from exc
            caught.append(exc)
            return
        except ContractViolation:
            raise
        except Exception as exc:
            raise self.fail(rule, f"{what} must raise {names}, raised {type(exc).__name__}: {exc}") from exc
        raise self.fail(rule, f"{what} must raise {names}, raised nothing")


@contextmanager
def _folder(tmp_dir: str | Path | None) -> Iterator[Path]:
    if tmp_dir is not None:
        Path(tmp_dir).mkdir(parents=True, exist_ok=True)
        yield Path(tmp_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="rag_lab_check_") as name:
            yield Path(name)


# --------------------------------------------------------------------------------------------- indexes

#: The chunks :func:`check_index` builds on: d3 alone holds "zyxqorp" and "satellite", d4 alone "tomatoes",
#: d0 and d5 share "password", "reset" and "login"; d0 alone holds "account".
INDEX_TEXTS = ("password reset instructions for the account login page",
               "the quarterly revenue report for the finance team", "new smartphone battery lasts two full days",
               "the zyxqorp protocol handles encrypted satellite uplinks",
               "gardening tips for growing tomatoes in summer", "how to reset a forgotten password on the login screen")


def index_chunks(texts: Iterable[str] = INDEX_TEXTS) -> list[Chunk]:
    """One chunk per text, ids ``d0#0``, ``d1#0``, ... (the chunks :func:`check_index` builds on)."""
    return [Chunk(chunk_id=f"d{i}#0", doc_id=f"d{i}", position=0, title="", text=t, start=0, end=len(t))
            for i, t in enumerate(texts)]


def check_index(index: str | type[SearchIndex], tmp_dir: str | Path | None = None,
                embedder: Embedder | None = None) -> None:
    """Check an index kind: a registered name (``"bm25"``, made with :func:`~rag_lab.index.make_index` and read
    back with :func:`~rag_lab.index.load_index`) or a :class:`~rag_lab.index.base.SearchIndex` subclass (made
    with ``cls()``, or ``cls(embedder)`` for a :class:`~rag_lab.index.base.DenseIndex`; read back with
    ``cls.load``). Dense kinds embed with ``embedder``, by default a :class:`~rag_lab.testing.HashEmbedder`.

    The rules: misuse is refused clearly (search before build, zero chunks, duplicate chunk ids, ``k < 1``);
    a search returns one list per query of at most ``k`` hits among the built chunks, best first; the chunk
    that shares the query's rare words comes first; a second build replaces the first; save + load gives an
    equal index that returns the same hits; a registered kind refuses an unknown parameter.
    ``tmp_dir`` is where the index is saved (default: a temporary folder, removed afterwards)."""
    embedder = embedder if embedder is not None else HashEmbedder()
    registered = isinstance(index, str)
    if registered:
        kind = INDEX_KINDS.check(index)
        cls = INDEX_KINDS[kind]
    else:
        cls = index
        kind = getattr(cls, "name", None)
    c = _Contract("index", f"index kind {kind!r} ({getattr(cls, '__qualname__', cls)!r})")
    c.require(isinstance(cls, type) and issubclass(cls, SearchIndex), "a SearchIndex subclass",
              f"{cls!r} is not a subclass of rag_lab.index.base.SearchIndex")
    c.require(isinstance(kind, str) and kind, "a name", "the class has no non-empty `name` (a ClassVar[str])")

    def make() -> SearchIndex:
        if registered:
            return make_index(kind, embedder)
        return cls(embedder) if issubclass(cls, DenseIndex) else cls()

    def load(folder: Path) -> SearchIndex:
        return load_index(folder, embedder) if registered else cls.load(folder, embedder)

    built = make()
    c.require(type(built) is cls and built.name == kind, "made as registered",
              f"made a {type(built).__name__} named {built.name!r}")
    with c.raises("search before build", RuntimeError, "search() on an index never built", "build or load"):
        built.search(["x"], 1)
    with c.raises("zero chunks", ValueError, "build([])", "zero chunks"):
        built.build([])
    chunks = index_chunks()
    with c.raises("duplicate chunk ids", ValueError, "build() with a chunk id twice", "duplicate"):
        built.build(chunks + chunks[:1])
    built.build(chunks)
    c.require(len(built) == len(chunks), "length", f"len() is {len(built)} after building {len(chunks)} chunks")
    with c.raises("k at least 1", ValueError, "search(queries, k=0)", "k must be"):
        built.search(["x"], 0)
    c.require(built.search([], 3) == [], "no queries, no hits", f"search([], 3) gave {built.search([], 3)!r}")
    # the last query matches chunks unequally (d0 most), so the order of its hits is seen
    queries = ["zyxqorp satellite uplinks", "password reset login", "tomatoes", "reset the password for the account"]
    hits = built.search(queries, k=2)
    c.require(isinstance(hits, list) and len(hits) == len(queries), "one list per query",
              f"{len(queries)} queries gave {hits!r}")
    ids = set(built.chunk_ids)
    for query, one in zip(queries, hits, strict=True):
        c.require(len(one) <= 2, "at most k hits", f"k=2 gave {len(one)} hits for {query!r}")
        c.require(all(isinstance(s, float) for _, s in one), "float scores", f"hits for {query!r}: {one!r}")
        c.require({cid for cid, _ in one} <= ids, "hits among the built chunks", f"hits for {query!r}: {one!r}")
        scores = [s for _, s in one]
        c.require(scores == sorted(scores, reverse=True), "hits best first", f"hits for {query!r}: {one!r}")
    c.require(hits[0][:1] and hits[0][0][0] == "d3#0" and hits[2][:1] and hits[2][0][0] == "d4#0",
              "the rare word's chunk first", f"'zyxqorp satellite uplinks' gave {hits[0]!r} (expected d3#0 first), "
                                             f"'tomatoes' gave {hits[2]!r} (expected d4#0 first)")
    c.require({cid for cid, _ in hits[1]} == {"d0#0", "d5#0"}, "the rare word's chunk first",
              f"'password reset login' gave {hits[1]!r} (expected d0#0 and d5#0)")
    with _folder(tmp_dir) as folder:
        saved = built.save(folder / kind)
        c.require(isinstance(saved, Path) and (saved / META_FILE).is_file(), "save writes the folder",
                  f"save() returned {saved!r}, which holds no {META_FILE}")
        c.require(json.loads((saved / META_FILE).read_text(encoding="utf-8")).get("kind") == kind,
                  "save writes the folder", f"{saved / META_FILE} does not record kind {kind!r}")
        loaded = load(saved)
        c.require(type(loaded) is type(built) and loaded.chunk_ids == built.chunk_ids, "load gives it back",
                  f"load() gave a {type(loaded).__name__} of {len(loaded.chunk_ids)} chunks")
        again = loaded.search(queries, k=2)
        c.require(again == hits, "load gives it back", f"the loaded index answers {again!r}, the saved one {hits!r}")
    rebuilt = make()
    rebuilt.build(chunks[3:5])
    c.require(rebuilt.chunk_ids == ["d3#0", "d4#0"], "build replaces", f"chunk_ids {rebuilt.chunk_ids!r}")
    rebuilt.build(chunks[:2])
    later = rebuilt.search(queries, k=6)
    c.require(len(rebuilt) == 2 and {cid for one in later for cid, _ in one} <= {"d0#0", "d1#0"}, "build replaces",
              f"after building d0, d1 over d3, d4 the index has {len(rebuilt)} chunks and answers {later!r}")
    if registered:
        with c.raises("unknown parameters refused", ValueError, "make_index(kind, no_such_parameter=1)",
                      "unknown parameter"):
            make_index(kind, embedder, no_such_parameter=1)


# --------------------------------------------------------------------------------------------- backends

#: The chat request :func:`check_backend` sends (role ``answer``, no schema).
CHAT_REQUEST = LLMRequest(role="answer", messages=(
    Message(role="system", content="Answer from the context only, citing chunks as [n]."),
    Message(role="user", content="Context:\n[1] Ada Lovelace wrote the first program in 1843.\n\n"
                                 "Question: Who wrote the first program?"),
))
#: The structured request :func:`check_backend` sends (role ``route``, schema :class:`RouteDecision`).
ROUTE_REQUEST = LLMRequest(role="route", response_schema=RouteDecision, messages=(
    Message(role="system", content='Classify the question as SIMPLE or COMPLEX. Reply with JSON {"route": ...}.'),
    Message(role="user", content="Question: Who wrote the first program?")))
#: The fallback of the structured request.
ROUTE_FALLBACK = RouteDecision(route="COMPLEX")


def check_backend(backend: LLMBackend) -> None:
    """Check a ready LLM backend (opened, if it needs opening) on one chat and one structured request.

    The rules: it is an :class:`~rag_lab.llm.base.LLMBackend` with a ``name`` and a ``model``; a chat
    request comes back as non-empty text labelled with the role, the backend and the model; with a response
    schema the answer is a parsed instance of it (valid, repaired, or the fallback with its reason), never an
    exception for bad output; token counts and latency are recorded on the response."""
    c = _Contract("backend", f"{type(backend).__name__} {getattr(backend, 'name', '?')!r}")
    c.require(isinstance(backend, LLMBackend), "an LLMBackend", f"{backend!r} is not a rag_lab.llm.base.LLMBackend")
    c.require(isinstance(backend.name, str) and backend.name and isinstance(backend.model, str) and backend.model,
              "a name and a model", f"name {backend.name!r}, model {backend.model!r}")
    chat = backend.complete(CHAT_REQUEST)
    route = backend.complete(ROUTE_REQUEST, fallback=ROUTE_FALLBACK)
    c.require(isinstance(chat.text, str) and chat.text.strip(), "chat answers text", f"text {chat.text!r}")
    c.require(chat.role == "answer" and chat.outcome == "text" and chat.parsed is None, "chat answers text",
              f"role {chat.role!r}, outcome {chat.outcome!r}, parsed {chat.parsed!r} (expected 'answer', 'text', None)")
    c.require(chat.backend == backend.name and chat.model == backend.model, "labelled with backend and model",
              f"the response says {chat.backend!r}/{chat.model!r}, the backend is {backend.name!r}/{backend.model!r}")
    c.require(isinstance(route.parsed, RouteDecision), "schema answers parse",
              f"a RouteDecision request gave parsed={route.parsed!r}")
    c.require(route.outcome in ("valid", "repaired", "fallback"), "schema answers parse", f"outcome {route.outcome!r}")
    c.require(route.outcome != "fallback" or (route.reason and route.parsed == ROUTE_FALLBACK),
              "a fallback says why", f"fallback with reason {route.reason!r} and parsed {route.parsed!r}")
    for response in (chat, route):
        c.require(response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0, "usage recorded",
                  f"the {response.role} call reports {response.usage!r}")
        c.require(response.latency_s >= 0.0, "usage recorded", f"latency {response.latency_s!r}")


# --------------------------------------------------------------------------------------------- loaders


def _names(error: DataFormatError, path: Path) -> bool:
    return error.path.startswith(str(path)) and str(path) in str(error)


def check_loader(load: Callable[[Path], Dataset], path: str | Path, malformed: Iterable[str | Path] = (),
                 tmp_dir: str | Path | None = None) -> Dataset:
    """Check a dataset loader: ``load`` reads a file or folder into a :class:`~rag_lab.records.Dataset`
    (wrap a loader that takes more arguments: ``lambda p: load_beir(p, split="test")``), ``path`` is one it
    reads, ``malformed`` are inputs it must refuse. Returns the dataset read from ``path``.

    The rules: the dataset has documents and questions, and every question's gold documents are in the
    corpus or counted as missing by its ``coverage``; loading twice gives the same documents and questions
    in the same order; a path that does not exist, a garbled input (an unreadable file of the same name, or
    an empty folder) and each of ``malformed`` fail with a :class:`~rag_lab.errors.DataFormatError` that
    names the path (nothing else: no ``KeyError``, no ``json.JSONDecodeError``). ``tmp_dir`` is where the
    garbled input is written (default: a temporary folder, removed afterwards)."""
    path = Path(path)
    c = _Contract("loader", f"{getattr(load, '__qualname__', load)!r} on {str(path)!r}")
    dataset = load(path)
    c.require(isinstance(dataset, Dataset), "returns a Dataset", f"returned {type(dataset).__name__}")
    c.require(len(dataset.corpus) > 0 and len(dataset.evalset) > 0, "documents and questions",
              f"{len(dataset.corpus)} documents, {len(dataset.evalset)} questions")
    missing = sum(1 for q in dataset.evalset if any(d not in dataset.corpus for d in q.gold_doc_ids))
    counted = dataset.coverage.some_in_corpus + dataset.coverage.none_in_corpus
    c.require(missing == counted, "gold documents in the corpus",
              f"{missing} question(s) have gold documents outside the corpus, the coverage counts {counted}")
    again = load(path)
    c.require(list(again.corpus) == list(dataset.corpus) and list(again.evalset) == list(dataset.evalset),
              "the same every time", "two loads of the same input gave different documents or questions")
    with _folder(tmp_dir) as folder:
        absent = folder / f"no-such-{path.name}"
        with c.raises("a missing input names its path", DataFormatError, f"load({str(absent)!r})") as caught:
            load(absent)
        c.require(_names(caught[0], absent), "a missing input names its path", f"the error says {caught[0]}")
        garbled = folder / path.name
        if path.is_dir():
            garbled.mkdir()
        else:
            garbled.write_bytes(b"\x00\xff this is not a dataset {[\n")
        for bad in (garbled, *(Path(p) for p in malformed)):
            with c.raises("a malformed input names its path", DataFormatError, f"load({str(bad)!r})") as caught:
                load(bad)
            c.require(_names(caught[0], bad), "a malformed input names its path", f"the error says {caught[0]}")
    return dataset


# --------------------------------------------------------------------------------------------- policies

_NUMERIC = ("int", "float", "int | None", "float | None", "typing.Optional[int]", "typing.Optional[float]")


def policy_bounds(cls: type[Policy]) -> Iterator[tuple[str, Any, Any]]:
    """``(field, lower, upper)`` of every field of ``cls`` with a lower or upper bound (None: unbounded)."""
    for name, info in cls.model_fields.items():
        lo = hi = None
        for meta in info.metadata:
            if isinstance(meta, annotated_types.Ge):
                lo = meta.ge
            if isinstance(meta, annotated_types.Le):
                hi = meta.le
        if lo is not None or hi is not None:
            yield name, lo, hi


def check_policy(cls: type[Policy]) -> None:
    """Check a policy class: a :class:`~rag_lab.pipeline.policies.Policy` subclass that constructs with its defaults, is
    frozen, comes back equal through a dump (dict and JSON), refuses an unknown field, bounds every numeric field from
    both sides (and refuses a value outside), and says in its docstring what it does. A policy that is a section of
    :class:`~rag_lab.pipeline.config.PipelineConfig` is also reachable by its dotted keys."""
    c = _Contract("policy", getattr(cls, "__qualname__", repr(cls)))
    c.require(isinstance(cls, type) and issubclass(cls, Policy), "a Policy subclass",
              f"{cls!r} is not a subclass of rag_lab.pipeline.policies.Policy")
    try:
        policy = cls()
    except ValidationError as exc:
        raise c.fail("defaults construct", f"cls() fails: {exc}") from exc
    if cls.model_fields:
        field = next(iter(cls.model_fields))
        with c.raises("frozen", ValidationError, f"setting {field!r} on an instance"):
            setattr(policy, field, getattr(policy, field))
    c.require(cls.model_validate(policy.model_dump()) == policy, "round trip", "model_validate(model_dump()) differs")
    c.require(cls.model_validate_json(policy.model_dump_json()) == policy, "round trip",
              "model_validate_json(model_dump_json()) differs")
    with c.raises("unknown fields refused", ValidationError, "cls(not_a_field=1)", "Extra inputs are not permitted"):
        cls(not_a_field=1)
    bounds = {name: (lo, hi) for name, lo, hi in policy_bounds(cls)}
    for name, info in cls.model_fields.items():
        annotation = info.annotation.__name__ if isinstance(info.annotation, type) else str(info.annotation)
        if annotation in _NUMERIC:
            lo, hi = bounds.get(name, (None, None))
            c.require(lo is not None and hi is not None, "numeric fields bounded",
                      f"{name}: {annotation} has bounds [{lo}, {hi}]; give it Field(ge=..., le=...)")
    for name, (lo, hi) in bounds.items():
        for outside in ([lo - 1] if lo is not None else []) + ([hi + 1] if hi is not None else []):
            with c.raises("bounds enforced", ValidationError, f"cls({name}={outside!r})"):
                cls(**{name: outside})
    c.require(cls.__doc__ and len(cls.__doc__.strip()) > 40, "documented",
              "the class docstring must say what the policy does (more than 40 characters)")
    for section, registered in POLICIES.items():
        if registered is cls:
            config = PipelineConfig()
            for name, value in policy.model_dump().items():
                key = f"{section}.{name}"
                c.require(config.with_params({key: value}).get(key) == value, "dotted keys", f"{key} does not round trip")
