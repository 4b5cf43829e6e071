"""Results where researchers keep them: figures as SVG/PDF/PNG through kaleido and Debian's Chromium, and
every candidate logged to a real local MLflow tracking folder, read back with MLflow's own client."""

from __future__ import annotations

import json
import os
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rag_lab.cli import main
from rag_lab.errors import ConfigError
from rag_lab.experiments import run_sweep
from rag_lab.figures.export import DEFAULT_CHROMIUM, export_figures, parse_formats
from rag_lab.report import report_figures

SMALL = {"name": "export-small", "dataset": "world", "split": "test", "types": ["single", "bridge", "comparison"],
         "per_type": 3, "backend": {"kind": "sim"},
         "grid": [{"round_cap.max_rounds": [1, 2, 3]}, {"truncation.strategy": ["rank_then_truncate",
                                                                               "append_then_truncate"]}]}
#: A real MLflow store and kaleido's Chromium: tens of seconds, outside the quick loop.
pytestmark = pytest.mark.slow
BROWSER = os.environ.get("RAG_LAB_CHROMIUM", DEFAULT_CHROMIUM)
needs_chromium = pytest.mark.skipif(
    not os.access(BROWSER, os.X_OK) and not os.environ.get("RAG_LAB_REQUIRE_BROWSER"),
    reason=f"no Chromium at {BROWSER} (bash scripts/ensure_chromium.sh installs Debian's)")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return run_sweep(SMALL, tmp_path_factory.mktemp("export-small"), progress="quiet")


def test_formats_are_checked():
    assert parse_formats("svg, PDF") == ("svg", "pdf") and parse_formats(["png"]) == ("png",)
    for bad in ("gif", "", "svg,eps"):
        with pytest.raises(ConfigError, match="export formats"):
            parse_formats(bad)


def test_a_missing_chromium_is_a_clear_error(tmp_path, monkeypatch, small):
    monkeypatch.setenv("RAG_LAB_CHROMIUM", str(tmp_path / "no-chromium"))
    with pytest.raises(ConfigError, match="ensure_chromium"):
        export_figures(report_figures(small), tmp_path / "figs", "svg")
    assert not (tmp_path / "figs" / "cost_quality.svg").exists()


@needs_chromium
def test_cost_quality_figure_as_svg_pdf_and_png(tmp_path, small):
    figures = report_figures(small)
    paths = export_figures({"cost_quality": figures["cost_quality"]}, tmp_path, ("svg", "pdf", "png"), scale=1)
    assert [p.name for p in paths] == ["cost_quality.svg", "cost_quality.pdf", "cost_quality.png"]
    svg = ET.parse(paths[0]).getroot()
    assert svg.tag.endswith("svg") and svg.get("width") == "900" and svg.get("height") == "560"
    texts = {t.text for t in svg.iter() if t.tag.endswith("text") and t.text}
    labels = {t for trace in figures["cost_quality"].data if trace.text is not None for t in trace.text if t}
    assert len(labels) >= 2 and labels <= texts  # every point label of the figure is drawn as text
    points = [e for e in svg.iter() if e.tag.endswith("path") and "point" in (e.get("class") or "")]
    assert len(points) >= len(small.table)  # one marker per candidate (and the front's)
    pdf = paths[1].read_bytes()
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF") and b"/Type /Page" in pdf
    png = paths[2].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (900, 560)


@needs_chromium
def test_report_command_exports_every_figure(tmp_path, small, capsys):
    out = tmp_path / "report" / "report.html"
    assert main(["report", str(small.run_dir), "--out", str(out), "--export", "svg,pdf", "--json"]) == 0
    written = json.loads(capsys.readouterr().out)["figures"]
    names = set(report_figures(small))
    assert {"cost_quality", "forest_quality_answer_containment_strict", "forest_cost_llm_calls"} <= names
    assert sorted(written) == sorted(str(out.parent / "figures" / f"{n}.{f}") for n in names for f in ("svg", "pdf"))
    assert all(Path(p).stat().st_size > 1000 for p in written)


def test_mlflow_logs_every_candidate_and_reads_back(tmp_path, small):
    from mlflow.tracking import MlflowClient

    from rag_lab.report.mlflow_log import log_sweep, tracking_uri

    report = tmp_path / "report.html"
    assert main(["report", str(small.run_dir), "--out", str(report)]) == 0
    logged = log_sweep(small.run_dir, tmp_path / "mlruns", report=report)
    client = MlflowClient(tracking_uri=tracking_uri(tmp_path / "mlruns"))  # a new client: read from the store
    experiment = client.get_experiment_by_name("export-small")
    runs = client.search_runs([experiment.experiment_id], filter_string="tags.`rag_lab.kind` = 'candidate'")
    assert len(runs) == len(small.table) == len(logged.run_ids)
    deltas = small.compare("quality_answer_containment_strict").set_index("candidate_id")
    cost_deltas = small.compare("cost_llm_calls").set_index("candidate_id")
    configs = {c["candidate_id"]: c["config"] for c in small.store.candidates()}
    for run in runs:
        cid = run.data.tags["rag_lab.candidate_id"]
        row = small.table.set_index("candidate_id").loc[cid]
        assert run.data.tags["mlflow.parentRunId"] == logged.parent_run_id
        assert run.data.params == {**{k: str(v) for k, v in configs[cid].items()}, "seed": "0"}
        for col in ("quality_answer_containment_strict", "quality_answer_containment_strict_lo", "cost_llm_calls",
                    "cost_tokens", "n_questions"):
            assert run.data.metrics[col] == pytest.approx(float(row[col]))
        assert run.data.metrics["is_pareto"] == float(bool(row["is_pareto"]))
        assert run.data.metrics["delta_vs_base.quality_answer_containment_strict"] == pytest.approx(deltas.loc[cid, "delta"])
        assert run.data.metrics["delta_vs_base.cost_llm_calls.hi"] == pytest.approx(cost_deltas.loc[cid, "hi"])
        assert run.data.tags["rag_lab.label"] == small.labels()[cid]
    artifacts = [a.path for a in client.list_artifacts(logged.parent_run_id)]
    assert artifacts == ["report.html"]
    downloaded = client.download_artifacts(logged.parent_run_id, "report.html", str(tmp_path / "dl"))
    assert Path(downloaded).read_text(encoding="utf-8") == report.read_text(encoding="utf-8")

    again = log_sweep(small.run_dir, tmp_path / "mlruns")  # logging again updates, never duplicates
    assert again.run_ids == logged.run_ids and again.parent_run_id == logged.parent_run_id
    assert len(client.search_runs([experiment.experiment_id])) == len(small.table) + 1
