"""Record a real backend's calls into a cassette (:class:`RecordingBackend`), and replay them offline, bit for bit
(:class:`ReplayBackend`), as vcrpy does for HTTP. A cassette is a JSON Lines file: a :class:`CassetteHeader`, then one
:class:`CassetteEntry` per distinct request, keyed by
:meth:`LLMRequest.cache_key <rag_lab.llm.types.LLMRequest.cache_key>`. The method: docs/backends.md, "Recorded"."""

from __future__ import annotations

import difflib
import fcntl
import json
import logging
import os
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rag_lab.errors import CassetteMiss, ConfigError, DataFormatError
from rag_lab.llm.base import LLMBackend, WrappedBackend
from rag_lab.llm.prompts import question_of
from rag_lab.llm.types import Completion, LLMRequest, Message

log = logging.getLogger(__name__)

CASSETTE_FORMAT = 1


class ModelIdentity(BaseModel):
    """Which model answered, as a replay checks it: a model file by its ``sha256`` (a local GGUF, whatever name or
    path it was given) or, for a server whose file is unknown (``openai``), the endpoint's model ``name``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha256: str | None = Field(default=None, min_length=1)
    name: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one(self) -> ModelIdentity:
        if (self.sha256 is None) == (self.name is None):
            raise ValueError("a model identity is a GGUF sha256 or an endpoint model name, exactly one")
        return self

    def __str__(self) -> str:
        return f"the GGUF model with sha256 {self.sha256}" if self.sha256 else f"the endpoint model {self.name!r}"


class CassetteHeader(BaseModel):
    """What was recorded: the backend's ``name``, ``model`` and cache identity ``(backend, model)``, ``provenance``
    (``model_file``, ``model_sha256``, ``llama_cpp`` version, … as the backend reported them) and the
    ``model_identity`` a replay must match (:meth:`recorded_model`; cassettes recorded before it was written derive
    it from their provenance)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cassette: int = CASSETTE_FORMAT
    name: str = Field(min_length=1)
    model: str = Field(min_length=1)
    identity: tuple[str, str]
    provenance: dict[str, str] = Field(default_factory=dict)
    model_identity: ModelIdentity | None = None

    def recorded_model(self) -> ModelIdentity:
        """The model this cassette's calls were answered by: the header's ``model_identity``, else (an older
        cassette) the GGUF sha256 its provenance states, else the endpoint model it names."""
        if self.model_identity is not None:
            return self.model_identity
        if self.provenance.get("model_sha256"):
            return ModelIdentity(sha256=self.provenance["model_sha256"])
        return ModelIdentity(name=self.model)


class CassetteEntry(BaseModel):
    """One recorded request and what the backend answered; ``made_with``: how this call was made (the model's
    sha256, llama.cpp's version and build, n_ctx, threads, the prompt cache — :data:`ENGINE_KEYS` and the
    settings that may change from call to call), None for a call recorded before calls carried it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(min_length=64, max_length=64)
    role: str
    question: str
    messages: tuple[Message, ...]
    schema_name: str | None = None
    params: dict[str, Any]
    generation: Completion  # "generation": the key every stored cassette line holds
    made_with: dict[str, str] | None = None


#: The facts of ``made_with`` / the header's provenance that one cassette never mixes: the model and the engine
#: build. A recording whose backend differs in one of them from the cassette's last call is refused (n_ctx,
#: threads and the prompt cache may change between calls: each call states its own).
ENGINE_KEYS = ("model_sha256", "llama_cpp", "llama_build")


def _user_text(messages: tuple[Message, ...]) -> str:
    return "\n".join(m.content for m in messages)


def _parse_header(line: bytes, path: Path) -> CassetteHeader:
    try:
        header = CassetteHeader.model_validate_json(line)
    except ValidationError as exc:
        raise DataFormatError(path, f"not a cassette header: {exc.errors()[0]['msg']}", line=1) from None
    if header.cassette != CASSETTE_FORMAT:
        raise DataFormatError(path, f"cassette format {header.cassette}, this version reads {CASSETTE_FORMAT}", line=1)
    return header


class Cassette:
    """The entries of one cassette file, by key. Use :meth:`for_replay` or :meth:`for_recording`."""

    def __init__(self, path: Path, header: CassetteHeader, entries: dict[str, CassetteEntry]) -> None:
        self.path = path
        self.header = header
        self.entries = entries
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"Cassette({str(self.path)!r}, {self.header.identity[1]!r}, {len(self)} entries)"

    @staticmethod
    def _read(path: Path) -> tuple[CassetteHeader, dict[str, CassetteEntry], int]:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read cassette {path}: {exc}") from None
        lines = data.split(b"\n")
        complete, tail = lines[:-1], lines[-1]
        if tail:
            log.warning("cassette %s: its last line is cut short (a recording killed mid-write); it is ignored", path)
        if not complete:
            raise DataFormatError(path, "empty cassette: no header line")
        header = _parse_header(complete[0], path)
        entries: dict[str, CassetteEntry] = {}
        for number, line in enumerate(complete[1:], start=2):
            if not line.strip():
                continue
            try:
                entry = CassetteEntry.model_validate_json(line)
            except ValidationError as exc:
                err = exc.errors()[0]
                raise DataFormatError(path, f"bad cassette entry: {err['msg']}", line=number,
                                      field=".".join(map(str, err["loc"])) or None) from None
            entries[entry.key] = entry
        return header, entries, len(data) - len(tail)

    @staticmethod
    def read_header(path: str | Path) -> CassetteHeader:
        """The header of the cassette at ``path``, read from its first line alone."""
        path = Path(path)
        try:
            with path.open("rb") as fh:
                first = fh.readline()
        except OSError as exc:
            raise ConfigError(f"cannot read cassette {path}: {exc}") from None
        if not first.strip():
            raise DataFormatError(path, "empty cassette: no header line")
        return _parse_header(first, path)

    @classmethod
    def for_replay(cls, path: str | Path) -> Cassette:
        """The cassette at ``path``, read-only."""
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"cassette {path} does not exist (record one with a real backend and record=PATH)")
        header, entries, _ = cls._read(path)
        for entry in entries.values():
            made = entry.made_with or {}
            if made.get("model_sha256", header.provenance.get("model_sha256")) != header.provenance.get("model_sha256"):
                raise DataFormatError(path, f"the {entry.role} call for {entry.question[:80]!r} was made with model "
                                            f"sha256 {made['model_sha256']}, not the header's "
                                            f"{header.provenance.get('model_sha256')}: a cassette holds one model")
        return cls(path, header, entries)

    @classmethod
    def for_recording(cls, path: str | Path, header: CassetteHeader) -> Cassette:
        """The cassette at ``path`` to append to: created with ``header``, or an existing one whose header
        records the same backend (a recording resumes; another model's cassette is refused)."""
        path = Path(path)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8") as fh:
                fh.write(header.model_dump_json() + "\n")
            return cls(path, header, {})
        old, entries, clean_end = cls._read(path)
        if (old.name, old.model, old.identity) != (header.name, header.model, header.identity) or \
                old.provenance.get("model_sha256") != header.provenance.get("model_sha256"):
            raise ConfigError(f"cassette {path} records {old.identity[1]!r} (sha256 "
                              f"{old.provenance.get('model_sha256', '?')}); this backend is {header.identity[1]!r} "
                              f"(sha256 {header.provenance.get('model_sha256', '?')}): record into another file")
        last = next((e.made_with for e in reversed(entries.values()) if e.made_with), None) or old.provenance
        changed = [f"{k} {last[k]!r} -> {header.provenance[k]!r}" for k in ENGINE_KEYS
                   if k in last and k in header.provenance and last[k] != header.provenance[k]]
        if changed:
            raise ConfigError(f"cassette {path} was recorded with another engine than this backend's "
                              f"({'; '.join(changed)}): one cassette holds one model and one llama.cpp build; "
                              "record into another file, or install the build it was recorded with")
        if path.stat().st_size > clean_end:
            with path.open("r+b") as fh:  # drop the line a killed recording cut short
                fcntl.flock(fh, fcntl.LOCK_EX)
                fh.truncate(clean_end)
                fcntl.flock(fh, fcntl.LOCK_UN)
        return cls(path, old, entries)

    def get(self, key: str) -> Completion | None:
        """The generation recorded for ``key``, marked ``cached=True`` (as the response cache answers), or None."""
        entry = self.entries.get(key)
        return None if entry is None else entry.generation.model_copy(update={"cached": True})

    def append(self, entry: CassetteEntry) -> None:
        """Add ``entry`` as one line at the end, under an exclusive lock, on disk before this returns."""
        line = (entry.model_dump_json() + "\n").encode("utf-8")
        with self._lock, self.path.open("ab") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
        self.entries[entry.key] = entry

    def nearest(self, request: LLMRequest) -> tuple[CassetteEntry | None, float]:
        """The recorded entry most like ``request`` (same role if any), and how alike (0–1)."""
        pool = [e for e in self.entries.values() if e.role == request.role] or list(self.entries.values())
        if not pool:
            return None, 0.0
        matcher = difflib.SequenceMatcher(autojunk=False, b=_user_text(request.messages))

        def alike(entry: CassetteEntry, quick: bool = False) -> float:
            matcher.set_seq1(_user_text(entry.messages))
            return matcher.quick_ratio() if quick else matcher.ratio()

        # the exact ratio of the 8 most alike by the quick upper bound; the first of equals wins
        best = max(sorted(pool, key=lambda e: -alike(e, quick=True))[:8], key=alike)
        return best, alike(best)


def _first_difference(a: str, b: str) -> str:
    """Where two prompts first differ: the line, from a little before the first differing character."""
    for line_a, line_b in zip(a.splitlines(), b.splitlines(), strict=False):
        if line_a != line_b:
            at = next((i for i, (x, y) in enumerate(zip(line_a, line_b, strict=False)) if x != y),
                      min(len(line_a), len(line_b)))
            start = max(0, at - 40)
            return f"asked …{line_a[start:at + 100]!r}, recorded …{line_b[start:at + 100]!r}"
    return "one prompt continues where the other ends" if a != b else "the prompts are equal (schema or parameters differ)"


def _entry(key: str, request: LLMRequest, generation: Completion, made_with: dict[str, str] | None) -> CassetteEntry:
    schema = request.response_schema
    return CassetteEntry(key=key, role=request.role, question=question_of(request), messages=request.messages,
                         schema_name=None if schema is None else schema.__name__,
                         params=request.params.model_dump(), generation=generation.model_copy(update={"cached": False}),
                         made_with=made_with)


class RecordingBackend(WrappedBackend):
    """``inner`` (a live backend) with every distinct request recorded into ``cassette``; requests already
    recorded are answered from it (marked cached), so a killed recording resumes. Each new entry states how it
    was made (``made_with``: the backend's provenance at the call, e.g. the local server's model sha256, llama.cpp
    version and build, n_ctx, threads and prompt cache)."""

    def __init__(self, inner: LLMBackend, cassette: Cassette, made_with: dict[str, str] | None = None) -> None:
        super().__init__(inner)
        self.cassette = cassette
        self.made_with = dict(made_with) if made_with else None

    def __repr__(self) -> str:
        return f"RecordingBackend({self.inner!r}, {self.cassette!r})"

    def _generate(self, request: LLMRequest) -> Completion:
        key = request.cache_key(*self.inner.cache_identity())
        generation = self.cassette.get(key)
        if generation is None:
            generation = self.inner._generate(request)
            self.cassette.append(_entry(key, request, generation, self.made_with))
        return generation


class ReplayBackend(LLMBackend):
    """Answers only from a cassette, as the recorded backend (its name, model and cache identity)."""

    def __init__(self, cassette: Cassette) -> None:
        super().__init__(cassette.header.model)
        self.cassette = cassette
        self.name = cassette.header.name

    def __repr__(self) -> str:
        return f"ReplayBackend({self.cassette!r})"

    def cache_identity(self) -> tuple[str, str]:
        return self.cassette.header.identity

    def _generate(self, request: LLMRequest) -> Completion:
        key = request.cache_key(*self.cache_identity())
        recorded = self.cassette.get(key)
        if recorded is not None:
            return recorded
        question = question_of(request)
        near, ratio = self.cassette.nearest(request)
        if near is None:
            nearest = "the cassette holds no requests"
        else:
            nearest = (f"the nearest recorded request is the {near.role} call for question {near.question[:120]!r} "
                       f"({ratio:.0%} alike; {_first_difference(_user_text(request.messages), _user_text(near.messages))})")
        raise CassetteMiss(self.cassette.path, request.role, question, key, nearest)


def recording_header(backend: LLMBackend, provenance: dict[str, str] | None = None) -> CassetteHeader:
    """The header a recording of ``backend`` writes (``provenance``: model file, sha256, llama.cpp version), with
    the model's identity: the GGUF's sha256 where the provenance states one, else the model name the backend uses."""
    header = CassetteHeader(name=backend.name, model=backend.model, identity=backend.cache_identity(),
                            provenance=dict(provenance or {}))
    return header.model_copy(update={"model_identity": header.recorded_model()})


def check_recorded_model(path: str | Path, header: CassetteHeader, named: str | None, wanted: ModelIdentity) -> None:
    """A :class:`~rag_lab.errors.ConfigError` unless the cassette at ``path`` (its ``header``) was recorded with
    ``wanted``, the identity of the model a sweep names as ``named``."""
    recorded = header.recorded_model()
    if recorded != wanted:
        raise ConfigError(f"cassette {path} was recorded with {recorded}, but this sweep's model {named!r} is "
                          f"{wanted}: a replay answers only as the model it recorded; name that model, or record "
                          "this one into another cassette")


def describe(path: str | Path) -> dict[str, Any]:
    """A cassette's header and size, for reports and notes."""
    cassette = Cassette.for_replay(path)
    roles = dict(Counter(entry.role for entry in cassette.entries.values()))
    return {"path": str(cassette.path), "bytes": cassette.path.stat().st_size, "entries": len(cassette),
            "questions": len({e.question for e in cassette.entries.values()}), "by_role": roles,
            "made_with": made_with_counts(cassette),
            **json.loads(cassette.header.model_dump_json())}


#: The per-call settings :func:`made_with_counts` groups calls by.
CALL_SETTINGS = ("n_ctx", "n_threads", "prompt_cache", "llama_cpp")


def made_with_counts(cassette: Cassette) -> dict[str, int]:
    """How many calls were made under each setting (``"n_ctx=4096, n_threads=1, prompt_cache=False, llama_cpp=0.3.36"``
    → count); calls recorded before entries carried their settings are counted under ``"not recorded per call"``."""
    return dict(Counter("not recorded per call" if entry.made_with is None else
                        ", ".join(f"{k}={entry.made_with.get(k, '?')}" for k in CALL_SETTINGS)
                        for entry in cassette.entries.values()))
