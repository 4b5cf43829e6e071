"""Where a sweep's results come from, as one record (:class:`Provenance`), built in one place
(:func:`build_provenance`) when a run directory is created, stored with the run and read back by every exporter:
the report's header, the CSV and Parquet tables, ``rag-lab sweep --json``, ``--rows`` and MLflow.

It names the sweep, the dataset (name, split, a digest of its documents and questions), the backend (kind, model,
the model's sha256 where there is one, prompt set, simulator profile, seeds), rag_lab's version, the git commit
when the package sits in a git checkout, a digest of the package's source files (which also catches uncommitted
edits) and the date. It never holds a secret: a server is kept as its scheme, host, port and path only, and no
API key is read."""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

import rag_lab
from rag_lab.errors import ConfigError

PACKAGE_DIR = Path(rag_lab.__file__).resolve().parent
#: The files of the package that make its behaviour: the sources and the package data they read (templates of
#: prompts, report and course text, the run store's schema; pyproject.toml's package-data).
SOURCE_SUFFIXES = (".py", ".sql", ".txt", ".html", ".md", ".css")
#: What a record says where a run directory was created before provenance was stored with it.
NOT_RECORDED = "not recorded"
#: How a record writes when its run was created (in UTC).
CREATED_FORMAT = "%Y-%m-%d %H:%M:%S UTC"


@functools.cache
def source_digest() -> str:
    """SHA-256 over the relative path and bytes of every source and template file of the installed package
    (``SOURCE_SUFFIXES``)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in PACKAGE_DIR.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file()):
        digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def git_commit() -> str | None:
    """``git rev-parse HEAD`` of the checkout holding the package, or None (no git, not a checkout)."""
    try:
        done = subprocess.run(["git", "-C", str(PACKAGE_DIR), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def code_version() -> dict[str, str | None]:
    """``{"rag_lab_version", "git_commit", "source_sha256"}`` of the running code."""
    return {"rag_lab_version": rag_lab.__version__, "git_commit": git_commit(), "source_sha256": source_digest()}


class DatasetProvenance(BaseModel):
    """The questions' source: the name or path the sweep gave, the split, and ``sha256``, a digest of every
    document and question as loaded (the same data in any layout gives the same digest)."""

    model_config = ConfigDict(frozen=True)

    name: str
    split: str | None = None
    sha256: str = NOT_RECORDED
    documents: int | None = None
    questions: int | None = None


class BackendProvenance(BaseModel):
    """The model that answered: ``kind``, ``model`` (a name, a GGUF file's name or a cassette's recorded model),
    ``model_sha256`` where there is one (a packaged model's pinned digest, a GGUF file's, a cassette's header), the
    ``server`` without credentials, ``prompt_set``, the simulator ``profile`` and the ``seeds``."""

    model_config = ConfigDict(frozen=True)

    kind: str
    model: str | None = None
    model_sha256: str | None = None
    server: str | None = None
    prompt_set: str | None = None
    profile: str | None = None
    seeds: tuple[int, ...] = ()
    replay: bool = False


class Provenance(BaseModel):
    """One sweep's provenance (see the module doc). :meth:`flat` is the one flat view every table export
    writes; :meth:`lines` the one text view the report and the command line show."""

    model_config = ConfigDict(frozen=True)

    sweep: str
    dataset: DatasetProvenance
    backend: BackendProvenance
    rag_lab_version: str
    git_commit: str | None = None
    source_sha256: str | None = None
    created_at: str = NOT_RECORDED

    def flat(self) -> dict[str, Any]:
        """Dotted keys to plain values (``dataset.sha256``, ``backend.model``; seeds as ``0 1 2``)."""
        out: dict[str, Any] = {"sweep": self.sweep}
        for part in ("dataset", "backend"):
            for key, value in getattr(self, part).model_dump().items():
                out[f"{part}.{key}"] = " ".join(map(str, value)) if isinstance(value, (list, tuple)) else value
        out.update(rag_lab_version=self.rag_lab_version, git_commit=self.git_commit,
                   source_sha256=self.source_sha256, created_at=self.created_at)
        return out

    def lines(self) -> list[tuple[str, str]]:
        """``(what, text)`` pairs a reader reads: dataset, backend, code and date."""
        d, b = self.dataset, self.backend
        counts = ", ".join(f"{n} {w}" for n, w in ((d.documents, "documents"), (d.questions, "questions"))
                           if n is not None)
        dataset = f"{d.name}" + (f", split {d.split}" if d.split else "") + (f" ({counts})" if counts else "")
        dataset += f"; sha256 {d.sha256}"
        if b.profile is not None:
            backend = f"{b.kind}, simulator profile {b.profile}"
        else:
            backend = f"{b.kind}, model {b.model or 'the server’s only model'}"
            backend += f" (sha256 {b.model_sha256})" if b.model_sha256 else " (no sha256: a served model)"
            backend += f" at {b.server}" if b.server else ""
        backend += f"; prompt set {b.prompt_set or NOT_RECORDED}; seed{'s' if len(b.seeds) != 1 else ''} "
        backend += " ".join(map(str, b.seeds)) or NOT_RECORDED
        backend += "; replayed from its cassette" if b.replay else ""
        code = f"rag_lab {self.rag_lab_version}, git commit {self.git_commit or 'none (not a git checkout)'}"
        return [("dataset", dataset), ("backend", backend), ("code", code), ("run created", self.created_at)]

    def comment_lines(self) -> str:
        """:meth:`flat` as ``# provenance.<key>: <value>`` lines, the header of a CSV export (read it back with
        :func:`read_csv_provenance`; pandas skips them with ``comment="#"``)."""
        return "".join(f"# provenance.{k}: {'' if v is None else v}\n" for k, v in self.flat().items())


def read_csv_provenance(path: str | Path) -> dict[str, str]:
    """The ``# provenance.<key>: <value>`` header lines of a CSV export, as a dict."""
    out: dict[str, str] = {}
    with Path(path).open(encoding="utf-8") as lines:
        for line in lines:
            if not line.startswith("# provenance."):
                break
            key, _, value = line[len("# provenance."):].rstrip("\n").partition(": ")
            out[key] = value
    return out


#: The key of the provenance (JSON) in a Parquet export's schema metadata.
PARQUET_KEY = b"rag_lab.provenance"


def write_parquet(table: Any, path: Path, provenance: Provenance) -> None:
    """``table`` (a DataFrame) as Parquet with ``provenance`` in its schema metadata (:data:`PARQUET_KEY`); a
    column holding values of several types (a parameter set to a number in one candidate, a word in another) is
    written as text. Needs pyarrow (the ``parquet`` extra)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(f"{path}: writing Parquet needs pyarrow (pip install 'rag_lab[parquet]')") from None
    frame = table.copy()
    for col in frame.columns:
        kinds = {type(v) for v in frame[col] if v is not None and v == v}
        if frame[col].dtype == object and len(kinds) > 1:
            frame[col] = [None if v is None or v != v else str(v) for v in frame[col]]
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}), PARQUET_KEY: provenance.model_dump_json()})
    pq.write_table(arrow, path)


def read_parquet_provenance(path: str | Path) -> Provenance:
    """The provenance a Parquet export carries (:func:`write_parquet`)."""
    import pyarrow.parquet as pq

    return Provenance.model_validate_json(pq.read_schema(path).metadata[PARQUET_KEY])


def dataset_digest(dataset: Any) -> str:
    """SHA-256 of every document (id, title, text, metadata) and every question of a loaded dataset, in order."""
    digest = hashlib.sha256()
    for doc in dataset.corpus:
        digest.update(doc.model_dump_json().encode("utf-8") + b"\n")
    digest.update(b"\0questions\n")
    for question in dataset.evalset:
        digest.update(question.model_dump_json().encode("utf-8") + b"\n")
    return digest.hexdigest()


def model_sha256(backend: Any) -> str | None:
    """The model's sha256 where there is one: a cassette's recorded digest, a packaged local model's pinned one,
    or a GGUF file's own; None for a served model (openai) or the simulator."""
    if backend.cassette is not None and Path(backend.cassette).is_file():
        from rag_lab.llm.cassette import Cassette

        return Cassette.read_header(backend.cassette).provenance.get("model_sha256")
    if backend.kind != "local":
        return None
    from rag_lab.llm.local.backend import PACKAGED_MODELS
    from rag_lab.llm.local.model_pack import CHUNKED_MODELS, sha256_of

    name = str(backend.model or "").strip().lower()
    if name in CHUNKED_MODELS:
        return CHUNKED_MODELS[name].sha256
    packaged = PACKAGED_MODELS.get(name or "smollm2-135m")
    try:
        path = packaged.locate() if packaged is not None else Path(str(backend.model)).expanduser()
    except (ConfigError, OSError):   # a packaged model whose package is not installed: no file to read
        return None
    return sha256_of(path) if path.is_file() else None


def _server(base_url: str | None) -> str | None:
    if not base_url:
        return None
    from rag_lab.llm.openai_wire import SK_TOKEN, display_url

    return SK_TOKEN.sub("sk-[redacted]", display_url(base_url))


def build_provenance(spec: Any, dataset: Any, base_config: Mapping[str, Any], when: datetime | None = None) -> Provenance:
    """The provenance of sweep ``spec`` (a :class:`~rag_lab.experiments.engine.sweep.SweepSpec`) over the loaded
    ``dataset``, its resolved flat ``base_config`` (for the prompt set), made now (or ``when``)."""
    backend = spec.backend
    profile = None
    if backend.sim_profile is not None:
        profile = backend.profile if not backend.knobs else (
            f"{backend.profile} with {', '.join(f'{k}={v}' for k, v in backend.knobs.items())}")
    model = backend.model
    if backend.kind == "local" and model:
        model = Path(model).name
    record = BackendProvenance(
        kind=backend.kind, model=model, model_sha256=model_sha256(backend), server=_server(backend.base_url),
        prompt_set=str(base_config.get("prompts.version")) if base_config.get("prompts.version") else None,
        profile=profile, seeds=tuple(spec.seeds), replay=bool(backend.replay))
    data = DatasetProvenance(name=str(spec.dataset), split=spec.split, sha256=dataset_digest(dataset),
                             documents=len(dataset.corpus), questions=len(dataset.evalset))
    return Provenance(sweep=spec.name, dataset=data, backend=record, **code_version(),
                      created_at=(when or datetime.now(UTC)).strftime(CREATED_FORMAT))


def stored_provenance(meta: Mapping[str, str], description: Mapping[str, Any]) -> Provenance:
    """The provenance stored in a run's ``meta`` table; for a run directory made before it was stored, what its
    sweep's ``description`` and code version still say (the dataset's digest then reads :data:`NOT_RECORDED`)."""
    if meta.get("provenance"):
        return Provenance.model_validate_json(meta["provenance"])
    spec = description.get("spec", {})
    backend = spec.get("backend", {})
    code = json.loads(meta.get("code", "{}"))
    created = meta.get("created_at")
    when = datetime.fromtimestamp(float(created), UTC).strftime(CREATED_FORMAT) if created else NOT_RECORDED
    simulated = backend.get("kind", "sim") == "sim"
    return Provenance(
        sweep=str(spec.get("name", "")),
        dataset=DatasetProvenance(name=str(spec.get("dataset", "")), split=spec.get("split")),
        backend=BackendProvenance(kind=backend.get("kind", "sim"), model=backend.get("model"),
                                  server=_server(backend.get("base_url")),
                                  prompt_set=description.get("base_config", {}).get("prompts.version"),
                                  profile=backend.get("profile", "typical") if simulated else None,
                                  seeds=tuple(spec.get("seeds", ())), replay=bool(backend.get("replay"))),
        rag_lab_version=str(code.get("rag_lab_version") or NOT_RECORDED), git_commit=code.get("git_commit"),
        source_sha256=code.get("source_sha256"), created_at=when)
