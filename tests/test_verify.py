"""``rag-lab verify``: a simulated sweep's best candidates re-run on another backend on the same questions.
Another simulator profile stands in for the real model: the comparison table (per-metric gaps with paired
intervals, Kendall's τ, the simulated winner on the real Pareto front) must match what the two stores hold,
an interrupted verification must resume without recomputing finished rows, and the HTML report must gain
its "Simulated vs real" section."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from scipy.stats import kendalltau

from rag_lab.cli import main
from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY
from rag_lab.experiments import load_sweep, run_sweep
from rag_lab.experiments.calibration.verify import (
    config_table,
    load_verifications,
    run_verify,
    select_candidates,
    verification_dirs,
)
from rag_lab.experiments.engine.resolved_sweep import backend_identity
from rag_lab.experiments.engine.sweep import BackendSpec
from rag_lab.figures.sim_vs_real import sim_vs_real_figure, sim_vs_real_info
from rag_lab.report import write_report
from rag_lab.stats import kendall_tau, pareto_mask, rank_agreement

#: Six candidates (five distinct configs: round cap 3 is the base) over 15 world questions, simulated.
SIM_SWEEP = {
    "name": "to_verify", "dataset": "world", "split": "test", "types": ["comparison", "bridge", "single"],
    "per_type": 5, "base": {"round_cap.max_rounds": 3},
    "backend": {"kind": "sim", "profile": "typical"},
    "grid": [{"round_cap.max_rounds": [1, 2, 3]}, {"disclosure.disclosed": [True]},
             {"truncation.strategy": ["append_then_truncate"], "truncation.max_snippets": [2]}],
}
SLOPPY = BackendSpec(kind="sim", profile="sloppy", knobs={"synonym_spinning": 0.4})  # sloppy's own rate, as an override


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory):
    return run_sweep(SIM_SWEEP, tmp_path_factory.mktemp("sim") / "run", progress="quiet")


@pytest.fixture(scope="module")
def verified(sim_run, tmp_path_factory):
    """The sweep copied to a fresh folder and verified on the sloppy profile (top 4, all questions)."""
    run_dir = tmp_path_factory.mktemp("verified") / "run"
    shutil.copytree(sim_run.run_dir, run_dir)
    return run_dir, run_verify(run_dir, SLOPPY, top=4, progress="quiet")


def test_candidates_are_the_simulated_front_best_quality_first(sim_run):
    configs = config_table(sim_run)
    chosen = select_candidates(sim_run, top=4)
    front = pareto_mask(configs[DEFAULT_COST], configs[DEFAULT_QUALITY])
    on_front = set(configs.loc[front, "config_id"])
    assert len(chosen) == 4 and len(set(chosen["config_id"])) == 4
    # the front comes first (padded with the best of the rest), best quality first, then the cheaper
    reasons = list(chosen["reason"])
    assert reasons == sorted(reasons, key=lambda r: r != "pareto front")
    assert {k for k, r in zip(chosen["config_id"], reasons, strict=True) if r == "pareto front"} <= on_front
    quality = list(chosen[DEFAULT_QUALITY])
    n_front = reasons.count("pareto front")
    assert quality[:n_front] == sorted(quality[:n_front], reverse=True)
    assert chosen.iloc[0][DEFAULT_QUALITY] == configs[DEFAULT_QUALITY].max()
    # by a metric: the best by it (lowest for a cost)
    cheapest = select_candidates(sim_run, top=2, by="cost_tokens")
    assert list(cheapest["cost_tokens"]) == sorted(configs["cost_tokens"])[:2]
    with pytest.raises(ConfigError, match="no metric 'quality_nope'"):
        select_candidates(sim_run, by="quality_nope")
    with pytest.raises(ConfigError, match="--top must be a positive integer"):
        select_candidates(sim_run, top=0)


@pytest.mark.slow
def test_verify_on_another_profile_gives_the_comparison_table(sim_run, verified):
    run_dir, v = verified
    real = load_sweep(verification_dirs(run_dir)[0])
    assert real.complete and len(real.table) == 4 and real.qids == sim_run.qids and v.qids == sim_run.qids
    assert real.description["backend"]["profile"]["name"] == "sloppy-custom"
    chosen = select_candidates(sim_run, top=4)
    assert list(v.candidates["config_id"]) == list(chosen["config_id"]) and v.winner == chosen.iloc[0]["config_id"]

    sim_by_config = sim_run.table.set_index("config_id")
    real_by_config = real.table.set_index("config_id")
    for metric in (DEFAULT_QUALITY, DEFAULT_COST, "quality_f1"):
        rows = v.gaps[v.gaps["metric"] == metric].set_index("candidate")
        for k in v.candidates["config_id"]:  # the means are the two stores' own, on the same 15 questions
            assert rows.loc[k, "sim"] == pytest.approx(sim_by_config.loc[k, metric])
            assert rows.loc[k, "real"] == pytest.approx(real_by_config.loc[k, metric])
            assert rows.loc[k, "delta"] == pytest.approx(rows.loc[k, "real"] - rows.loc[k, "sim"])
            assert rows.loc[k, "lo"] <= rows.loc[k, "delta"] <= rows.loc[k, "hi"] and rows.loc[k, "n"] == 15
        assert rows.loc["all", "sim"] == pytest.approx(np.mean([rows.loc[k, "sim"] for k in v.candidates["config_id"]]))
    assert (v.gaps["delta"].abs() > 0).any()  # another profile is another model: some gap is not 0

    order = list(v.candidates["config_id"])
    for metric in (DEFAULT_QUALITY, DEFAULT_COST):
        sim_means = [sim_by_config.loc[k, metric] for k in order]
        real_means = [real_by_config.loc[k, metric] for k in order]
        expected = kendalltau(sim_means, real_means).statistic
        tau = v.ranks.set_index("metric").loc[metric]
        assert (math.isnan(expected) and math.isnan(tau["tau"])) or tau["tau"] == pytest.approx(expected)
    real_front = pareto_mask([real_by_config.loc[k, DEFAULT_COST] for k in order],
                             [real_by_config.loc[k, DEFAULT_QUALITY] for k in order])
    assert v.real_front == [k for k, on in zip(order, real_front, strict=True) if on]
    assert v.winner_on_real_front == (v.winner in v.real_front)

    text = v.text()
    assert "Kendall τ" in text and "simulated winner" in text and "per candidate, LLM calls / question" in text
    again = load_verifications(run_dir)  # read back from the stores: the same comparison
    assert len(again) == 1 and again[0].gaps.equals(v.gaps) and list(again[0].candidates["reason"]) == list(chosen["reason"])


@pytest.mark.slow
def test_verifying_a_sweep_on_its_own_backend_shows_no_gap(sim_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(sim_run.run_dir, run_dir)
    same = BackendSpec(kind="sim", profile="typical")
    v = run_verify(run_dir, same, top=5, progress="quiet")
    assert (v.gaps["delta"].abs() < 1e-12).all() and (v.gaps["lo"].abs() < 1e-12).all()
    ranks = v.ranks.set_index("metric")
    assert ranks.loc[DEFAULT_COST, "tau"] == pytest.approx(1.0)
    assert v.winner_on_real_front and v.real_winner == v.winner


@pytest.mark.slow
def test_an_interrupted_verification_resumes_without_recomputing_done_rows(sim_run, tmp_path, monkeypatch):
    from rag_lab.experiments.engine.worker import WorkerState

    run_dir = tmp_path / "run"
    shutil.copytree(sim_run.run_dir, run_dir)
    original = WorkerState.run
    computed: list[tuple[str, str]] = []

    def dies_after_seven(self, unit):
        if len(computed) >= 7:
            raise KeyboardInterrupt("killed mid-verification")
        out = original(self, unit)
        computed.extend((o.candidate_id, o.qid) for o in out)
        return out

    monkeypatch.setattr(WorkerState, "run", dies_after_seven)
    with pytest.raises(KeyboardInterrupt):
        run_verify(run_dir, SLOPPY, top=3, questions=6, progress="quiet")
    verify_dir = verification_dirs(run_dir)[0]
    partial = load_sweep(verify_dir)
    done = partial.store.done_pairs()
    assert done == set(computed) and len(done) == 7 and not partial.complete
    # a report of a half-done verification says so rather than failing
    assert not load_verifications(run_dir)[0].complete

    resumed: list[tuple[str, str]] = []

    def counts(self, unit):
        out = original(self, unit)
        resumed.extend((o.candidate_id, o.qid) for o in out)
        return out

    monkeypatch.setattr(WorkerState, "run", counts)
    v = run_verify(run_dir, SLOPPY, top=3, questions=6, progress="quiet")
    assert len(resumed) == 3 * 6 - 7 and not set(resumed) & done
    assert v.complete and len(v.qids) == 6 and verification_dirs(run_dir) == [verify_dir]
    sessions = load_sweep(verify_dir).store.sessions()
    assert [s["computed"] for s in sessions] == [7, 11]

    monkeypatch.setattr(WorkerState, "run", dies_after_seven)  # a third run has nothing left to compute
    computed.clear()
    assert run_verify(run_dir, SLOPPY, top=3, questions=6, progress="quiet").gaps.equals(v.gaps) and computed == []


@pytest.mark.slow
def test_report_gains_a_simulated_vs_real_section_and_figure(sim_run, verified, tmp_path):
    run_dir, v = verified
    html = write_report(run_dir, tmp_path / "report.html").read_text()
    assert "<h2>Simulated vs real</h2>" in html and 'id="sim-vs-real-0-quality_answer_containment_strict"' in html
    assert "Kendall" in html and "mean of the candidates" in html
    plain = write_report(sim_run.run_dir, tmp_path / "plain.html").read_text()
    assert "Simulated vs real" not in plain

    info = sim_vs_real_info(v, DEFAULT_QUALITY)
    rows = v.gaps[(v.gaps["metric"] == DEFAULT_QUALITY) & (v.gaps["candidate"] != "all")]
    assert info.ids == tuple(v.candidates["config_id"]) and info.sim == tuple(rows["sim"]) and info.real == tuple(rows["real"])
    assert info.is_winner == tuple(k == v.winner for k in info.ids) and sum(info.is_winner) == 1
    assert all(lo <= r + 1e-12 and r <= hi + 1e-12 for lo, r, hi in zip(info.lo, info.real, info.hi, strict=True))
    fig = sim_vs_real_figure(info)
    assert len(fig.data) == 2 and list(fig.data[1].x) == list(info.sim)
    with pytest.raises(ValueError, match="no metric"):
        sim_vs_real_info(v, "quality_nope")


def test_rank_agreement_statistics():
    assert kendall_tau([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(kendall_tau([1, 1, 1], [1, 2, 3]))
    rng = np.random.default_rng(1)
    sim = rng.random((40, 4)) + np.array([0.0, 0.3, 0.6, 0.9])
    tau, lo, hi, defined = rank_agreement(sim, sim + 0.01, n_boot=200)
    assert tau == pytest.approx(1.0) and lo <= tau <= hi and defined == 1.0
    tau, lo, hi, _ = rank_agreement(sim, -sim, n_boot=200)
    assert tau == pytest.approx(-1.0) and hi <= -0.3


@pytest.mark.slow
def test_cli_verify(sim_run, tmp_path, capsys):
    run_dir = tmp_path / "run"
    shutil.copytree(sim_run.run_dir, run_dir)
    assert main(["verify", str(run_dir), "--backend", "sim", "--profile", "ideal",
                 "--top", "3", "--questions", "6", "--quiet", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["questions"] == 6 and len(out["candidates"]) == 3 and out["complete"]
    assert {r["metric"] for r in out["ranks"]} == {DEFAULT_QUALITY, DEFAULT_COST}
    assert main(["verify", str(run_dir), "--backend", "sim", "--profile", "ideal",
                 "--top", "3", "--questions", "6", "--quiet"]) == 0
    assert "rank agreement on" in capsys.readouterr().out
    assert main(["verify", str(run_dir), "--backend", "local", "--profile", "sloppy"]) == 2
    assert "--profile, --seed and --sim are settings of --backend sim" in capsys.readouterr().err
    assert main(["verify", str(tmp_path), "--backend", "sim"]) == 2
    assert "not a sweep run directory" in capsys.readouterr().err


def test_a_token_cap_is_part_of_the_backend_identity_only_when_set(tmp_path):
    from rag_lab.llm.base import LLMRequest, SamplingParams
    from rag_lab.llm.factory import open_backend

    assert backend_identity(BackendSpec(kind="local")) == {"kind": "local", "model": None, "base_url": None}
    assert backend_identity(BackendSpec(kind="local", max_tokens=96))["max_tokens"] == 96
    assert "max_tokens" not in backend_identity(BackendSpec()) and backend_identity(BackendSpec(max_tokens=8))["max_tokens"] == 8
    from rag_lab.llm.prompts import EvidenceItem, answer_prompt

    evidence = [EvidenceItem(1, "Ann Lee", "Ann Lee is a Dutch painter who was born in Utrecht in 1931 and who "
                                           "worked in Leiden, Delft and Haarlem for sixty years.")]
    request = LLMRequest(role="answer", messages=answer_prompt("Where was Ann Lee born?", evidence, "correct"),
                         params=SamplingParams(max_tokens=512))
    cache = tmp_path / "llm.sqlite"
    with open_backend("sim", profile="ideal", cache=cache) as full, open_backend("sim", profile="ideal", cache=cache,
                                                                                 max_tokens=4) as capped:
        long, short = full.complete(request), capped.complete(request)
        assert long.usage.completion_tokens > 4 and short.usage.completion_tokens == 4
        assert capped.complete(request).cached and capped.complete(request).text == short.text  # its own cache entry
    with pytest.raises(ValueError, match="max_tokens"):
        BackendSpec(kind="sim", max_tokens=0)


@pytest.mark.slow
def test_a_verification_of_a_replaced_sweep_is_skipped_not_fatal(verified, tmp_path):
    run_dir, _ = verified
    other = tmp_path / "other"
    run_sweep({**SIM_SWEEP, "per_type": 1}, other, progress="quiet")
    shutil.copytree(run_dir / "verify", other / "verify")  # as if the sweep had been replaced with --force
    with pytest.warns(UserWarning, match="not a verification of this sweep"):
        assert load_verifications(other) == []
    with pytest.warns(UserWarning, match="not a verification of this sweep"):
        assert "Simulated vs real" not in write_report(other, tmp_path / "r.html").read_text()
