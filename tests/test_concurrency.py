"""Sweeps against a network backend at full concurrency: the lab server's ``--latency`` option,
questions in flight up to ``workers``, 429s answered with backoff, and tables equal to a serial run.
Real sockets on 127.0.0.1 through the real ``openai`` client; no timing targets (those live in
``benchmarks/``)."""

from __future__ import annotations

import random
import time

import pandas as pd
import pytest

from rag_lab.cli import build_parser
from rag_lab.errors import ConfigError
from rag_lab.experiments import run_sweep
from rag_lab.llm.base import LLMRequest, Message
from rag_lab.llm.openai_backend import OpenAIBackend
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.llm.server.lab_server import FaultPlan, LabServer, Latency
from rag_lab.llm.simulator import SimulatedBackend

#: 2 candidates x 6 questions through the OpenAI-compatible backend, no response cache.
SPEC = {
    "name": "concurrency",
    "dataset": "world",
    "split": "test",
    "types": ["single", "bridge", "comparison"],
    "per_type": 2,
    "grid": {"round_cap.max_rounds": [1, 2]},
}


def spec_for(server: LabServer, **backend: object) -> dict:
    return {**SPEC, "backend": {"kind": "openai", "model": server.models[0], "base_url": server.url, "cache": False,
                                **backend}}


def deterministic(table: pd.DataFrame) -> pd.DataFrame:
    """The param_/quality_/cost_ columns (candidate ids name the server's URL, whose port differs per test)."""
    cols = ["seed", *[c for c in table.columns if c.startswith(("param_", "quality_", "cost_"))]]
    return table[cols].reset_index(drop=True)


@pytest.fixture(scope="module")
def serial_table(tmp_path_factory) -> pd.DataFrame:
    with LabServer(SimulatedBackend(), max_concurrency=1) as server:
        result = run_sweep(spec_for(server), tmp_path_factory.mktemp("serial"), progress="quiet")
    assert result.complete and server.peak_concurrency == 1
    return deterministic(result.table)


# --- the latency option ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "kind", "a", "b"), [
    ("0.5", "fixed", 0.5, 0.0), ("fixed:2", "fixed", 2.0, 0.0), ("uniform:0.3,0.7", "uniform", 0.3, 0.7),
    ("lognormal:0.5,0.4", "lognormal", 0.5, 0.4), (" 0 ", "fixed", 0.0, 0.0),
])
def test_latency_parses_fixed_and_distributions(text, kind, a, b):
    latency = Latency.parse(text)
    assert (latency.kind, latency.a, latency.b) == (kind, a, b)


@pytest.mark.parametrize(("text", "message"), [
    ("fast", "could not convert"), ("-1", "greater than or equal to 0"), ("uniform:0.7,0.3", "a <= b"),
    ("uniform:0.3", "takes 2 number"), ("gamma:1,2", "unknown distribution"), ("nan", "finite"), ("700", "less than"),
])
def test_bad_latencies_are_clear_errors(text, message):
    with pytest.raises(ConfigError, match=message):
        Latency.parse(text)


def test_latency_draws_stay_in_range_and_follow_the_distribution():
    rng = random.Random(0)
    uniform = [Latency.parse("uniform:0.3,0.7").sample(rng) for _ in range(2000)]
    assert min(uniform) >= 0.3 and max(uniform) <= 0.7 and abs(sum(uniform) / 2000 - 0.5) < 0.02
    lognormal = sorted(Latency.parse("lognormal:0.5,0.4").sample(rng) for _ in range(2001))
    assert abs(lognormal[1000] - 0.5) < 0.05  # the median
    assert lognormal[0] > 0 and lognormal[-1] > 0.9  # a right tail


def test_server_latency_delays_each_completion_and_the_cli_takes_it():
    request = LLMRequest(role="answer", messages=(Message(role="user", content="hi"),))
    with LabServer(ScriptedBackend({}, default="ok", model="m"), latency="0.3") as server:
        backend = OpenAIBackend("m", base_url=server.url, max_retries=0)
        start = time.perf_counter()
        assert backend.complete(request).text == "ok"
        assert time.perf_counter() - start >= 0.3
    with LabServer(ScriptedBackend({}, default="ok", model="m"), latency=0.25) as other:
        assert other.latency == Latency(a=0.25)
    args = build_parser().parse_args(["serve", "--latency", "uniform:0.3,0.7", "--max-concurrency", "8"])
    assert Latency.parse(args.latency).kind == "uniform" and args.max_concurrency == 8


# --- sweeps at full concurrency ---------------------------------------------------------------------


@pytest.mark.slow
def test_threads_keep_up_to_workers_calls_in_flight_with_the_serial_table(serial_table, tmp_path):
    """6 thread workers: more than the OpenAI backend's old default of 4 calls run at once."""
    with LabServer(SimulatedBackend(), max_concurrency=8, latency=0.15) as server:
        result = run_sweep(spec_for(server), tmp_path, workers=6, executor="threads", progress="quiet")
    pd.testing.assert_frame_equal(deterministic(result.table), serial_table)
    assert server.peak_concurrency >= 5
    assert server.status_counts[429] == 0


def test_backend_max_concurrency_caps_calls_below_the_worker_count(serial_table, tmp_path):
    with LabServer(SimulatedBackend(), max_concurrency=2, latency=0.02) as server:
        result = run_sweep(spec_for(server, max_concurrency=2), tmp_path, workers=6, executor="threads",
                           progress="quiet")
    pd.testing.assert_frame_equal(deterministic(result.table), serial_table)
    assert server.peak_concurrency <= 2 and server.status_counts[429] == 0


def test_429s_under_many_workers_are_retried_with_backoff_and_lose_nothing(serial_table, tmp_path):
    """8 workers meet a server that rate-limits its first 12 answers (Retry-After 0.05 s): every call
    is retried after a backoff, nothing is lost, and the table equals the serial one."""
    plan = FaultPlan(rate_limit=12, retry_after_s=0.05)
    with LabServer(SimulatedBackend(), max_concurrency=8, faults=plan) as server:
        result = run_sweep(spec_for(server), tmp_path, workers=8, executor="threads", progress="quiet")
    assert server.status_counts[429] == 12
    assert result.complete and result.computed == len(result.qids) * len(result.table)
    pd.testing.assert_frame_equal(deterministic(result.table), serial_table)
    calls = round(result.table["cost_llm_calls"].sum() * len(result.qids))
    assert server.status_counts[200] == calls


def test_retry_after_is_honoured_before_the_next_attempt():
    request = LLMRequest(role="answer", messages=(Message(role="user", content="hi"),))
    with LabServer(ScriptedBackend({}, default="ok", model="m"),
                   faults=FaultPlan(rate_limit=1, retry_after_s=0.8)) as server:
        backend = OpenAIBackend("m", base_url=server.url, max_retries=2)
        start = time.perf_counter()
        assert backend.complete(request).text == "ok"
        assert time.perf_counter() - start >= 0.8   # longer than the openai client's own first backoff (at most 0.5 s)
    assert backend.stats_dict()["retries"] == 1 and server.status_counts[429] == 1


def test_latency_parses_every_kind_it_has_and_names_them_all_for_another():
    """One list of latency distributions (Latency.kind): each parses, and an unknown one is refused naming them."""
    from typing import get_args

    kinds = get_args(Latency.model_fields["kind"].annotation)
    assert [Latency.parse("0.5" if k == "fixed" else f"{k}:0.1,0.2").kind for k in kinds] == list(kinds)
    with pytest.raises(ConfigError, match=rf"'gamma' \({', '.join(kinds[:-1])} or {kinds[-1]}\)"):
        Latency.parse("gamma:1,2")


def test_every_fault_count_is_checked_by_its_type():
    """One rule for a fault count (faults.Times: >= 0, or 'always'), for every count of a FaultPlan."""
    from pydantic import ValidationError

    from rag_lab.llm.server.faults import Times

    counts = [name for name, field in FaultPlan.model_fields.items() if field.rebuild_annotation() == Times]
    assert counts == ["rate_limit", "server_error", "delay", "malformed_body", "content_times"]
    for name in counts:
        with pytest.raises(ValidationError, match="a fault count must be >= 0 or 'always', got -1"):
            FaultPlan(**{name: -1})
        assert getattr(FaultPlan(**{name: "always"}), name) == "always"
