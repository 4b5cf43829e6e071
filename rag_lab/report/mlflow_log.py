"""A sweep's results where researchers keep them: a local MLflow tracking folder (:func:`log_sweep`, the ``mlflow``
extra, ``rag-lab report --mlflow``). The folder holds MLflow's SQLite store (``mlflow.db``) and the artifacts;
one experiment per sweep name, one parent run per run directory with the HTML report as an artifact, and under it
one run per candidate with its resolved config as params, its quality and cost means and its paired differences
against the base config as metrics, and tags that find it again: logging the same run directory again updates the
same runs. Nothing secret is logged. What is logged, name by name: docs/cli.md, "Search and racing"."""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY
from rag_lab.evaluation.families import is_metric
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.experiments.engine.summary import summarize

DB_FILE = "mlflow.db"
ARTIFACTS = "artifacts"
TAG = "rag_lab"


@dataclass(frozen=True)
class MlflowLogged:
    """Where a sweep was logged: the tracking URI, the experiment, the parent run and each candidate's run."""

    tracking_uri: str
    experiment_id: str
    parent_run_id: str
    run_ids: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {"tracking_uri": self.tracking_uri, "experiment_id": self.experiment_id,
                "parent_run_id": self.parent_run_id, "run_ids": self.run_ids}

    def text(self) -> str:
        return (f"logged {len(self.run_ids)} candidates to MLflow ({self.tracking_uri}, experiment "
                f"{self.experiment_id}, parent run {self.parent_run_id})")


def tracking_uri(folder: str | os.PathLike[str]) -> str:
    """The SQLite tracking URI of a local tracking ``folder``."""
    return f"sqlite:///{Path(folder).resolve() / DB_FILE}"


def check_folder(folder: str | os.PathLike[str]) -> Path:
    """``folder`` as a tracking folder: a directory, or a path not there yet; a file is an error in words."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"the MLflow tracking folder {folder} is a file, not a folder: give a folder (new or "
                          "existing) to hold mlflow.db and artifacts/")
    return folder


def _client(folder: Path) -> Any:
    check_folder(folder)
    try:
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise ConfigError("logging to MLflow needs the mlflow extra: pip install 'rag_lab[mlflow]'") from None
    folder.mkdir(parents=True, exist_ok=True)
    return MlflowClient(tracking_uri=tracking_uri(folder))


def _experiment(client: Any, name: str, folder: Path) -> str:
    found = client.get_experiment_by_name(name)
    if found is not None:
        return found.experiment_id
    return client.create_experiment(name, artifact_location=(folder.resolve() / ARTIFACTS / name).as_uri())


def _find_run(client: Any, experiment_id: str, tags: dict[str, str]) -> str | None:
    query = " and ".join(f"tags.`{k}` = '{v}'" for k, v in tags.items())
    runs = client.search_runs([experiment_id], filter_string=query, max_results=2)
    return runs[0].info.run_id if runs else None


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def provenance_tags(sweep: SweepResult) -> dict[str, str]:
    """The run's provenance as MLflow tags: ``rag_lab.provenance.<key>`` for every key of
    :meth:`~rag_lab.experiments.engine.provenance.Provenance.flat`, and MLflow's own ``mlflow.source.git.commit``
    where there is a commit."""
    record = sweep.provenance
    tags = {f"{TAG}.provenance.{k}": "" if v is None else str(v) for k, v in record.flat().items()}
    if record.git_commit:
        tags["mlflow.source.git.commit"] = record.git_commit
    return tags


def log_sweep(source: SweepResult | str | os.PathLike[str], tracking_dir: str | os.PathLike[str],
              experiment: str | None = None, report: str | os.PathLike[str] | None = None,
              reference: Any = None) -> MlflowLogged:
    """Log the sweep in ``source`` (a :class:`SweepResult` or a run directory) to the local MLflow tracking
    folder ``tracking_dir`` (docs/cli.md says what is logged); ``experiment`` defaults to the sweep's name,
    ``report`` is an HTML report to attach to the parent run, ``reference`` the paired differences' reference
    (default: the base config, as in the report).

    >>> logged = log_sweep("reports/quickstart", "mlruns-lab", report="reports/quickstart/report.html")  # doctest: +SKIP
    >>> logged.run_ids                     # candidate id -> MLflow run id                                # doctest: +SKIP
    """
    from mlflow.entities import Metric, Param, RunTag

    sweep = source if isinstance(source, SweepResult) else SweepResult.load(source)
    folder = Path(tracking_dir)
    client = _client(folder)
    name = experiment or sweep.spec["name"]
    experiment_id = _experiment(client, name, folder)
    fingerprint = sweep.store.meta()["fingerprint"]
    parent_tags = {f"{TAG}.fingerprint": fingerprint, f"{TAG}.kind": "sweep"}
    parent = _find_run(client, experiment_id, parent_tags)
    if parent is None:
        parent = client.create_run(experiment_id, run_name=name, tags={
            **parent_tags, f"{TAG}.run_dir": str(Path(sweep.run_dir).resolve()),
            f"{TAG}.search": "yes" if sweep.search else "no"}).info.run_id
    provenance = provenance_tags(sweep)
    client.log_batch(parent, tags=[RunTag(k, v) for k, v in provenance.items()])
    now = int(time.time() * 1000)
    client.log_batch(parent, metrics=[Metric("candidates", float(len(sweep.table)), now, 0),
                                      Metric("question_runs", float(sweep.question_runs()), now, 0),
                                      Metric("questions", float(len(sweep.qids)), now, 0)])
    summary = summarize(sweep, DEFAULT_QUALITY, DEFAULT_COST, reference)
    deltas = ({m: frame.set_index("candidate_id") for m, frame in summary.frames.items()}
              if len(sweep.table) > 1 else {})
    labels = summary.labels
    configs = {c["candidate_id"]: c for c in sweep.store.candidates()}
    run_ids: dict[str, str] = {}
    for _, row in sweep.table.iterrows():
        cid = row["candidate_id"]
        tags = {f"{TAG}.candidate_id": cid, f"{TAG}.fingerprint": fingerprint, f"{TAG}.kind": "candidate"}
        run_id = _find_run(client, experiment_id, tags)
        if run_id is None:
            run_id = client.create_run(experiment_id, run_name=labels.get(cid, cid),
                                       tags={**tags, "mlflow.parentRunId": parent}).info.run_id
        config = configs[cid]
        params = [Param(k, str(v)) for k, v in sorted(config["config"].items())] + [Param("seed", str(config["seed"]))]
        metrics = [Metric(col, value, now, 0) for col in sweep.table.columns
                   if is_metric(col) or col in ("n_questions",)
                   for value in [_number(row[col])] if value is not None]
        metrics.append(Metric("is_pareto", float(bool(row["is_pareto"])), now, 0))
        for metric, frame in deltas.items():
            if cid in frame.index:
                d = frame.loc[cid]
                metrics += [Metric(f"delta_vs_base.{metric}{suffix}", value, now, 0)
                            for suffix, key in (("", "delta"), (".lo", "lo"), (".hi", "hi"))
                            for value in [_number(d[key])] if value is not None]
        run_tags = [RunTag(f"{TAG}.config_id", row["config_id"]), RunTag(f"{TAG}.label", labels.get(cid, "")),
                    *(RunTag(k, v) for k, v in provenance.items())]
        if "status" in row.index:
            run_tags += [RunTag(f"{TAG}.status", str(row["status"])), RunTag(f"{TAG}.drop_reason", str(row["drop_reason"]))]
        for start in range(0, len(params), 100):  # MLflow takes at most 100 params per batch
            client.log_batch(run_id, params=params[start:start + 100])
        client.log_batch(run_id, metrics=metrics, tags=run_tags)
        client.set_terminated(run_id)
        run_ids[cid] = run_id
    if report is not None:
        client.log_artifact(parent, str(report))
    client.set_terminated(parent)
    return MlflowLogged(tracking_uri=tracking_uri(folder), experiment_id=experiment_id, parent_run_id=parent,
                        run_ids=run_ids)

