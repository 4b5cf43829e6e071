"""A model server's timeout and retries are settable (issue 49, item 6): ``timeout_s`` and ``max_retries`` in a sweep
file's ``backend:`` and as ``rag-lab sweep --timeout-s/--max-retries`` reach the OpenAI-compatible backend, so a
hanging server costs what the user allows, not 60 s times 4 attempts. They are not part of a run's identity: setting
them leaves the fingerprint and candidate ids of a stored run as they were. The hanging server is the lab server
(a real socket on 127.0.0.1) with a delay on every request."""

from __future__ import annotations

import time

import pytest
import yaml

from rag_lab.cli import main
from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.resolved_sweep import ResolvedSweep
from rag_lab.experiments.engine.sweep import SweepSpec
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.llm.server.lab_server import FaultPlan, LabServer
from rag_lab.loaders import load_dataset

SWEEP = {"name": "hanging", "dataset": "world", "split": "test", "types": ["single"], "per_type": 1,
         "grid": {"round_cap.max_rounds": [1, 2]}}


@pytest.fixture(scope="module")
def hanging_server():
    """A server that answers every request after 20 s."""
    with LabServer(ScriptedBackend({}, default="Paris [1]", model="lab-model"),
                   faults=FaultPlan(delay="always", delay_s=20.0), max_concurrency=8) as server:
        yield server


def sweep_file(tmp_path, **backend) -> str:
    path = tmp_path / "hanging.yaml"
    path.write_text(yaml.safe_dump({**SWEEP, "backend": {"kind": "openai", "model": "lab-model", "cache": False,
                                                         **backend}}), encoding="utf-8")
    return str(path)


def run_cli(args: list[str], capsys) -> tuple[int, str, float]:
    start = time.perf_counter()
    status = main(args)
    return status, capsys.readouterr().err, time.perf_counter() - start


def test_the_sweep_files_timeout_and_retries_reach_the_server_calls(tmp_path, capsys, hanging_server) -> None:
    path = sweep_file(tmp_path, base_url=hanging_server.url, timeout_s=0.3, max_retries=0)
    status, err, seconds = run_cli(["sweep", path, "--out", str(tmp_path / "run"), "--quiet"], capsys)
    assert status == 2 and "no answer within 0.3 s" in err and "(no HTTP status, 1 attempt)" in err, err
    assert seconds < 15   # the server would take 20 s a call; the backend's defaults 4 × 60 s


def test_the_command_line_overrides_the_sweep_file(tmp_path, capsys, hanging_server) -> None:
    path = sweep_file(tmp_path, base_url=hanging_server.url, timeout_s=30, max_retries=5)
    status, err, _ = run_cli(["sweep", path, "--out", str(tmp_path / "run"), "--quiet", "--timeout-s", "0.2",
                              "--max-retries", "1"], capsys)
    assert status == 2 and "no answer within 0.2 s" in err and "2 attempts" in err, err


def test_timeouts_are_not_part_of_a_runs_identity() -> None:
    evalset = load_dataset("world").evalset
    plain = SweepSpec.from_dict({**SWEEP, "backend": {"kind": "openai", "model": "m"}})
    timed = plain.with_backend(timeout_s=5.0, max_retries=0)
    assert timed.backend.timeout_s == 5.0 and timed.backend.max_retries == 0
    a, b = ResolvedSweep.build(plain, evalset), ResolvedSweep.build(timed, evalset)
    assert a.fingerprint == b.fingerprint and [r.candidate_id for r in a.runs] == [r.candidate_id for r in b.runs]
    assert "timeout_s" not in a.describe()["spec"]["backend"]   # a stored description without them reads as before


@pytest.mark.parametrize(("sweep", "message"), [
    ({**SWEEP, "backend": {"kind": "sim", "timeout_s": 5}}, "settings of a model server"),
    ({**SWEEP, "backend": {"kind": "openai", "model": "m", "timeout_s": 0}}, "timeout_s"),
    ({**SWEEP, "backend": {"kind": "openai", "model": "m"}, "grid": {"backend.timeout_s": [1, 2]}},
     "not a backend setting a grid can vary"),
])
def test_bad_server_settings_are_named(sweep, message) -> None:
    with pytest.raises(ConfigError, match=message):
        ResolvedSweep.build(SweepSpec.from_dict(sweep), load_dataset("world").evalset)
