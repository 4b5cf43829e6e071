"""The rough edges a new user hit on the command line (issue 38), each fixed: findings checked against the grid
before any question runs, a damaged run store named with what to do, a report of a run with no finished
question, and secrets never echoed in validation errors."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from rag_lab.cli import main
from rag_lab.config_files import explain_validation

#: A sweep of two candidates on two world questions: seconds with the simulator.
TINY = {"name": "tiny", "dataset": "world", "split": "test", "limit": 2, "grid": {"round_cap.max_rounds": [1, 2]}}
SECRET = "sk-" + "test-" + "0" * 16   # key-shaped, made up (built here so no key-like literal is tracked)


def _sweep_file(folder: Path, **changes) -> Path:
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump({**TINY, **changes}, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished run directory of :data:`TINY` (copied by each test that changes it)."""
    folder = tmp_path_factory.mktemp("finished")
    assert main(["sweep", str(_sweep_file(folder)), "--out", str(folder / "run"), "--quiet"]) == 0
    conn = sqlite3.connect(folder / "run" / "run.sqlite")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in run.sqlite, as a closed store leaves it
    conn.close()
    return folder / "run"


def _copy(run_dir: Path, tmp_path: Path) -> Path:
    """A copy of the run directory's store alone (no WAL file: the pages a damage test damages are all in it)."""
    (tmp_path / "run").mkdir()
    shutil.copyfile(run_dir / "run.sqlite", tmp_path / "run" / "run.sqlite")
    return tmp_path / "run"


# --- 1. findings that name a config the grid does not have ----------------------------------------------------


@pytest.mark.parametrize(("field", "claim"), [
    ("candidate", {"metric": "cost_llm_calls", "candidate": {"round_cap.max_rounds": 7}, "direction": "below"}),
    ("reference", {"metric": "cost_llm_calls", "candidate": {"round_cap.max_rounds": 1},
                   "reference": {"round_cap.max_rounds": 7}, "direction": "below"}),
])
def test_a_finding_outside_the_grid_fails_before_any_question_runs(tmp_path, capsys, field, claim):
    run_dir = tmp_path / "run"
    assert main(["sweep", str(_sweep_file(tmp_path, findings=[claim])), "--out", str(run_dir), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rag-lab: error: ") and len(err.strip().splitlines()) == 1
    assert f"finding 1: {field} {{round_cap.max_rounds: 7}} matches no candidate" in err
    assert "round_cap.max_rounds is 1 or 2" in err and "Traceback" not in err
    assert not run_dir.exists()  # nothing ran, nothing was stored


def test_a_finding_comparing_a_config_with_itself_fails_before_any_question_runs(tmp_path, capsys):
    claim = {"metric": "cost_llm_calls", "candidate": {"round_cap.max_rounds": 1},
             "reference": {"round_cap.max_rounds": 1}, "direction": "below"}
    assert main(["sweep", str(_sweep_file(tmp_path, findings=[claim])), "--out", str(tmp_path / "run")]) == 2
    assert "pick the same config" in capsys.readouterr().err and not (tmp_path / "run").exists()


def test_report_of_a_stored_run_whose_finding_is_outside_the_grid_is_a_clear_error(finished, tmp_path, capsys):
    run_dir = _copy(finished, tmp_path)
    with sqlite3.connect(run_dir / "run.sqlite") as conn:  # a run stored before findings were checked
        plan = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'plan'").fetchone()[0])
        plan["spec"]["findings"] = [{"metric": "cost_llm_calls", "candidate": {"round_cap.max_rounds": 1},
                                     "reference": {"round_cap.max_rounds": 7}, "direction": "below", "claim": "x"}]
        conn.execute("UPDATE meta SET value = ? WHERE key = 'plan'", (json.dumps(plan),))
    conn.close()
    assert main(["report", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert f"rag-lab: error: {run_dir}: finding 1 (x): reference {{round_cap.max_rounds: 7}} matches no candidate" in err
    assert not (run_dir / "report.html").exists()


# --- 2. a damaged run store -----------------------------------------------------------------------------------


def _truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 3)


def _overwrite_header(path: Path) -> None:
    with path.open("r+b") as fh:
        fh.write(b"not a database at all, just garbage" * 3)


def _garbage_in_the_middle(path: Path) -> None:
    size = path.stat().st_size
    with path.open("r+b") as fh:
        fh.seek(size // 2)
        fh.write(bytes(range(256)) * 16)


DAMAGE = {"truncated": _truncate, "header": _overwrite_header, "middle": _garbage_in_the_middle}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_run_store_is_named_with_what_to_do(finished, tmp_path, capsys, damage):
    run_dir = _copy(finished, tmp_path)
    DAMAGE[damage](run_dir / "run.sqlite")
    for argv in (["report", str(run_dir)], ["sweep", str(_sweep_file(tmp_path)), "--out", str(run_dir), "--quiet"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"rag-lab: error: {run_dir / 'run.sqlite'}: the run store is damaged (")
        assert "--force" in err and "Traceback" not in err and "not a sweep run directory" not in err


def test_force_replaces_a_damaged_run_store_and_starts_over(finished, tmp_path, capsys):
    run_dir = _copy(finished, tmp_path)
    _overwrite_header(run_dir / "run.sqlite")
    assert main(["sweep", str(_sweep_file(tmp_path)), "--out", str(run_dir), "--quiet", "--force", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["complete"] and out["computed"] == 4 and out["reused"] == 0


# --- 3. a report of a run with no finished question ------------------------------------------------------------


def test_report_of_a_run_with_no_finished_question_says_so(tmp_path, capsys, world):
    from rag_lab.experiments.engine.resolved_sweep import ResolvedSweep
    from rag_lab.experiments.engine.store import RunStore
    from rag_lab.experiments.engine.sweep_file import load_sweep_spec

    resolved = ResolvedSweep.build(load_sweep_spec(TINY), world.evalset)
    RunStore.create(tmp_path / "run", resolved).close()   # as a sweep interrupted before its first question leaves it
    assert main(["report", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rag-lab: error: {tmp_path / 'run'}: no question has finished yet")
    assert "cost_llm_calls" not in err


# --- report's default output and the per-question rows -----------------------------------------------------


def test_report_writes_run_dir_report_html_by_default(finished, tmp_path, capsys):
    run_dir = _copy(finished, tmp_path)
    assert main(["report", str(run_dir)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {run_dir / 'report.html'}"
    assert (run_dir / "report.html").stat().st_size > 10_000


def test_sweep_rows_writes_every_candidates_questions_as_csv(finished, tmp_path, capsys):
    import pandas as pd

    run_dir, rows = _copy(finished, tmp_path), tmp_path / "out" / "rows.csv"
    assert main(["sweep", str(_sweep_file(tmp_path)), "--out", str(run_dir), "--quiet", "--rows", str(rows),
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["computed"] == 0  # the rows of a finished sweep, nothing rerun
    frame = pd.read_csv(rows, comment="#")   # under the run's provenance lines
    assert list(frame.columns[:4]) == ["candidate_id", "seed", "param_round_cap.max_rounds", "qid"]
    assert len(frame) == 4 and sorted(set(frame["param_round_cap.max_rounds"])) == [1, 2]
    assert frame.groupby("candidate_id")["qid"].nunique().tolist() == [2, 2]
    assert {"quality_answer_containment_strict", "cost_llm_calls"} <= set(frame.columns)


# --- 4. secrets are never echoed -------------------------------------------------------------------------------


def test_an_api_key_in_a_sweep_file_is_rejected_without_echoing_it(tmp_path, capsys):
    sweep = _sweep_file(tmp_path, backend={"kind": "openai", "api_key": SECRET})
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "backend.api_key" in err and "set OPENAI_API_KEY instead" in err
    assert SECRET not in err and SECRET[:8] not in err


def test_an_api_key_in_a_pipeline_config_is_rejected_without_echoing_it(tmp_path, capsys):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"generation": {"token": SECRET}}), encoding="utf-8")
    assert main(["run", "--dataset", "world", "--question", "bridge-025", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "generation.token" in err and "set OPENAI_API_KEY instead" in err and SECRET not in err


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rounds: int = 1
    password: int = 0


@pytest.mark.parametrize(("data", "field"), [
    ({"password": "hunter2-hunter2"}, "password"),   # a secret's field, whatever its value
    ({"rounds": SECRET}, "rounds"),                  # a key-shaped value, whatever its field
    ({"api_key": SECRET}, "api_key"),                # an extra field
    ({"auth_token": ["x", SECRET]}, "auth_token"),
])
def test_validation_errors_never_show_a_secret(data, field):
    with pytest.raises(ValidationError) as caught:
        _Settings.model_validate(data)
    text = explain_validation(caught.value, "settings")
    assert field in text and "set OPENAI_API_KEY instead" in text
    assert SECRET not in text and "hunter2" not in text


def test_validation_errors_still_show_an_ordinary_value():
    with pytest.raises(ValidationError) as caught:
        _Settings.model_validate({"rounds": "many"})
    assert "(got 'many')" in explain_validation(caught.value, "settings")
