"""Every result says where it comes from, an unfinished sweep says so, and replies that fail validation warn
(issue 49, items 4, 5 and 6): one provenance record, stored with the run, read by the report's header, the CSV and
Parquet tables, ``--rows``, ``rag-lab sweep --json`` and MLflow; the report's title is the sweep's name; a report
of a store with rows missing says "k of n question runs finished" and marks its front and claims provisional; a
server that answers garbage inside valid replies gets a warning naming the role and the count."""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
import shutil
import sqlite3

import pandas as pd
import pytest
import yaml

from rag_lab.cli import main
from rag_lab.experiments import load_sweep
from rag_lab.experiments.engine import provenance as prov
from rag_lab.experiments.engine.summary import reply_warnings
from rag_lab.experiments.engine.sweep import SweepSpec
from rag_lab.llm.server.lab_server import FaultPlan, LabServer
from rag_lab.llm.simulator import SimulatedBackend
from rag_lab.loaders import load_dataset

SPEC = {
    "name": "provenance_sweep", "dataset": "world", "split": "test", "types": ["single", "bridge"], "per_type": 3,
    "base": {"round_cap.max_rounds": 3}, "backend": {"kind": "sim", "profile": "typical"}, "seeds": [0],
    "grid": [{"round_cap.max_rounds": [1, 3]}, {"hyde.enabled": [True]}],
    "findings": [{"metric": "cost_llm_calls", "candidate": {"hyde.enabled": True}, "direction": "above",
                  "kind": "definitional", "claim": "HyDE costs a call"}],
}
#: What every export must name (dotted keys of Provenance.flat).
NAMED = ("sweep", "dataset.name", "dataset.split", "dataset.sha256", "backend.kind", "backend.profile",
         "backend.seeds", "rag_lab_version", "created_at")


def _run(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    folder = tmp_path_factory.mktemp("provenance")
    sweep_file = folder / "sweep.yaml"
    sweep_file.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    run_dir = folder / "a_folder_not_named_like_the_sweep"
    printed = json.loads(_run("sweep", str(sweep_file), "--out", str(run_dir), "--quiet", "--json",
                              "--table", str(folder / "table.csv"), "--rows", str(folder / "rows.csv")))
    _run("sweep", str(sweep_file), "--out", str(run_dir), "--quiet", "--table", str(folder / "table.parquet"))
    return folder, sweep_file, run_dir, printed


def test_one_record_is_stored_with_the_run_and_names_data_backend_and_code(finished):
    _, _, run_dir, _ = finished
    record = load_sweep(run_dir).provenance
    assert record.sweep == "provenance_sweep" and record.dataset.name == "world" and record.dataset.split == "test"
    dataset = load_dataset("world")
    assert record.dataset.sha256 == prov.dataset_digest(dataset) and len(record.dataset.sha256) == 64
    assert (record.backend.kind, record.backend.profile, record.backend.seeds) == ("sim", "typical", (0,))
    assert record.backend.prompt_set == "v1" and record.rag_lab_version == prov.code_version()["rag_lab_version"]
    assert record.git_commit == prov.git_commit()      # the checkout's commit where there is one


def test_every_export_carries_the_same_record(finished):
    folder, _, run_dir, printed = finished
    flat = {k: "" if v is None else str(v) for k, v in load_sweep(run_dir).provenance.flat().items()}
    assert {k: str(v) if v is not None else "" for k, v in
            prov.Provenance.model_validate(printed["provenance"]).flat().items()} == flat       # --json
    for csv in ("table.csv", "rows.csv"):                                                    # --table, --rows
        assert prov.read_csv_provenance(folder / csv) == flat, csv
    assert len(pd.read_csv(folder / "table.csv", comment="#")) == 3                          # the rows read as before
    assert prov.read_parquet_provenance(folder / "table.parquet").flat() == load_sweep(run_dir).provenance.flat()
    body = (folder / "table.csv").read_text(encoding="utf-8").split("\n", len(flat))[-1]
    plain = load_sweep(run_dir).write_reproducible_table(folder / "plain.csv").read_text(encoding="utf-8")
    assert body == plain        # under the '#' lines: the reproducible table, byte for byte
    for key in NAMED:
        assert flat[key], key


def test_the_report_is_titled_by_the_sweep_and_shows_where_it_comes_from(finished, tmp_path):
    _, _, run_dir, _ = finished
    page = html.unescape(_report(run_dir, tmp_path))
    assert "<h1>rag_lab sweep report: provenance_sweep</h1>" in page and "a_folder_not_named" not in page.split(
        "</h1>")[0]
    record = load_sweep(run_dir).provenance
    for what, text in record.lines():
        assert f'<td class="text">{what}</td><td class="text">{text}</td>' in page, what
    assert record.dataset.sha256 in page and "simulator profile typical" in page and "seed 0" in page


@pytest.mark.slow   # out of the quick loop: importing MLflow and writing its store (about 3 s)
def test_mlflow_runs_carry_the_record(finished, tmp_path):
    pytest.importorskip("mlflow")
    from rag_lab.report.mlflow_log import _client, log_sweep

    _, _, run_dir, _ = finished
    logged = log_sweep(run_dir, tmp_path / "mlruns")
    client = _client(tmp_path / "mlruns")
    flat = load_sweep(run_dir).provenance.flat()
    for run_id in [logged.parent_run_id, *logged.run_ids.values()]:
        tags = client.get_run(run_id).data.tags
        assert tags["rag_lab.provenance.dataset.sha256"] == flat["dataset.sha256"]
        assert tags["rag_lab.provenance.backend.profile"] == "typical"


def test_secrets_stay_out_and_no_git_is_no_error(monkeypatch, tmp_path):
    key = "-".join(["sk", "prov", "DO", "NOT", "LEAK", "77aa"])
    spec = SweepSpec.from_dict({**SPEC, "backend": {"kind": "openai", "model": "gpt-4o",
                                                    "base_url": f"http://user:{key}@127.0.0.1:9/v1?api_key={key}"}})
    record = prov.build_provenance(spec, load_dataset("world"), {"prompts.version": "v1"})
    assert key not in record.model_dump_json() and record.backend.server == "http://127.0.0.1:9/v1"
    assert record.backend.model == "gpt-4o" and record.backend.model_sha256 is None
    monkeypatch.setenv("PATH", str(tmp_path))          # no git on the PATH
    assert prov.git_commit.__wrapped__() is None


def test_a_run_stored_before_its_provenance_was_is_dated_as_a_new_one():
    from datetime import UTC, datetime

    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    built = prov.build_provenance(SweepSpec.from_dict(SPEC), load_dataset("world"), {}, when=moment)
    legacy = prov.stored_provenance({"created_at": str(moment.timestamp())}, {"spec": {"name": SPEC["name"]}})
    assert legacy.created_at == built.created_at == "2026-01-02 03:04:05 UTC"


def _report(run_dir, tmp_path) -> str:
    out = _run("report", str(run_dir), "--out", str(tmp_path / "report.html"))
    assert out.startswith("wrote ")
    return (tmp_path / "report.html").read_text(encoding="utf-8")


def test_an_unfinished_sweep_says_how_far_it_got_and_marks_front_and_claims_provisional(finished, tmp_path):
    _, _, run_dir, _ = finished
    partial = tmp_path / "partial"
    shutil.copytree(run_dir, partial)
    with sqlite3.connect(partial / "run.sqlite") as conn:     # a sweep stopped after some rows
        total = conn.execute("SELECT COUNT(*) FROM rows").fetchone()[0]
        conn.execute("DELETE FROM rows WHERE rowid % 4 = 0")
        left = conn.execute("SELECT COUNT(*) FROM rows").fetchone()[0]
    assert 0 < left < total
    said = f"{left} of {total} question runs finished"
    out = _run("report", str(partial), "--out", str(tmp_path / "p.html"))
    assert said in out and "provisional" in out
    page = html.unescape((tmp_path / "p.html").read_text(encoding="utf-8"))
    assert f"This sweep has not finished: {said}." in page
    assert "on the Pareto front (provisional)" in page and "Cost vs quality (provisional)" in page
    claims = re.findall(r"<li>([^<]*)</li>", page)
    assert claims and all("(provisional, definitional)" in c for c in claims), claims
    finished_page = html.unescape(_report(run_dir, tmp_path))
    assert "has not finished" not in finished_page and f"{total} of {total} question runs finished" in finished_page


def test_replies_failing_validation_warn_in_the_cli_and_the_report(tmp_path):
    with LabServer(SimulatedBackend(), faults=FaultPlan(content_fault="invalid_json", content_times="always")) as server:
        spec = {**SPEC, "name": "garbage", "findings": [], "grid": {"round_cap.max_rounds": [2]},
                "backend": {"kind": "openai", "model": server.models[0], "base_url": server.url, "cache": False}}
        sweep_file = tmp_path / "garbage.yaml"
        sweep_file.write_text(yaml.safe_dump(spec), encoding="utf-8")
        out = _run("sweep", str(sweep_file), "--out", str(tmp_path / "run"), "--quiet")
    result = load_sweep(tmp_path / "run")
    warned = reply_warnings(result)
    controller = next(w for w in warned if " controller replies " in w)
    assert re.fullmatch(r"(\d+) of \1 controller replies were not valid JSON: check the model and the server",
                        controller), controller
    assert f"warning: {controller}" in out
    page = html.unescape(_report(tmp_path / "run", tmp_path))
    assert f"<b>Warning:</b> {controller}." in page
    assert reply_warnings(load_sweep(tmp_path / "run"), rate=1.0) == []       # at or below the rate: no warning
