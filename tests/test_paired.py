"""Paired differences (rag_lab.stats.paired): coverage of the paired bootstrap interval on synthetic
paired data with a known difference, paired vs unpaired width, seeds, undefined values; then
``SweepResult.compare``, the Δ section of the HTML report and of ``rag-lab sweep`` on a real small sweep."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from rag_lab.cli import main
from rag_lab.cli.sweep_commands import delta_table_text
from rag_lab.experiments import load_sweep, run_sweep
from rag_lab.experiments.engine.candidate_configs import changes_label, config_changes
from rag_lab.experiments.engine.comparisons import comparisons, is_measured
from rag_lab.experiments.engine.summary import summarize
from rag_lab.figures.where_grid import WhereCell, WhereGridInfo, _hover
from rag_lab.report import write_report
from rag_lab.stats.paired import interval_text, paired_difference, ratio_interval, unpaired_difference
from rag_lab.stats.significance import holm, p_clause, p_text, paired_test
from rag_lab.stats.summary import bootstrap_ci

# ---------------------------------------------------------------- synthetic paired data


def _covered(draw, truth: float, reps: int, n_boot: int = 500) -> float:
    """Share of ``reps`` replications whose paired interval contains ``truth``; ``draw(rng)`` gives (a, b)."""
    rng = np.random.default_rng(123)
    hits = 0
    for rep in range(reps):
        a, b = draw(rng)
        d = paired_difference(a, b, n_boot=n_boot, seed=rep)
        hits += d.lo <= truth <= d.hi
    return hits / reps


def test_coverage_with_correlated_continuous_questions():
    """Question difficulty shared by both sides (correlation ~0.9), a known shift of 0.2."""
    def draw(rng):
        z = rng.normal(0.0, 1.0, 80)
        return z + 0.2 + rng.normal(0, 0.35, 80), z + rng.normal(0, 0.35, 80)

    assert 0.925 <= _covered(draw, 0.2, reps=1000) <= 0.97


def test_coverage_with_binary_flips():
    """0/1 outcomes as answer containment gives them: both sides share a per-question uniform, the candidate
    answers when it is below 0.6, the reference below 0.5, so the true mean difference is exactly 0.1."""
    def draw(rng):
        u = rng.random(200)
        return (u < 0.6).astype(float), (u < 0.5).astype(float)

    assert 0.92 <= _covered(draw, 0.1, reps=400) <= 0.975   # 400 replications: ±0.011 standard error


def test_coverage_with_several_seeds():
    """Per-question effect plus seed noise (3 seeds): questions resampled, seeds averaged within a question."""
    def draw(rng):
        z = rng.normal(0.0, 1.0, (60, 1))
        effect = 0.3 + rng.normal(0, 0.2, (60, 1))       # the effect itself varies by question
        return z + effect + rng.normal(0, 0.5, (60, 3)), z + rng.normal(0, 0.5, (60, 3))

    assert 0.92 <= _covered(draw, 0.3, reps=400) <= 0.975


def test_paired_interval_is_narrower_than_unpaired_when_questions_are_correlated():
    rng = np.random.default_rng(7)
    z = rng.normal(0, 1, 150)
    a, b = z + 0.1 + rng.normal(0, 0.2, 150), z + rng.normal(0, 0.2, 150)
    paired = paired_difference(a, b, seed=1)
    delta, lo, hi = unpaired_difference(a, b, seed=1)
    assert delta == pytest.approx(paired.delta)
    assert (paired.hi - paired.lo) < 0.35 * (hi - lo)
    assert paired.excludes_zero and lo < 0 < hi           # the effect is measured only when paired
    # without a shared question effect the two widths agree (the narrowing comes from the pairing)
    a2, b2 = rng.normal(0.1, 1, 150), rng.normal(0, 1, 150)
    p2, (_, lo2, hi2) = paired_difference(a2, b2, seed=1), unpaired_difference(a2, b2, seed=1)
    assert (p2.hi - p2.lo) == pytest.approx(hi2 - lo2, rel=0.2)


def test_seeds_are_averaged_within_each_question():
    a = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, np.nan]])
    b = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    d = paired_difference(a, b, n_boot=500, seed=3)
    # question 4 uses seed 0 only (seed 1 undefined on one side): per-question differences 0.5, 0.5, -0.5, 1
    assert (d.n, d.n_seeds) == (4, 2)
    assert d.delta == pytest.approx(0.375)
    assert d.share_differ == 1.0
    assert d.mean == pytest.approx((0.5 + 1 + 0 + 1) / 4) and d.reference_mean == pytest.approx((0 + 0.5 + 0.5 + 0) / 4)
    one_column = paired_difference([0.5, 0.5, -0.5, 1.0], [0, 0, 0, 0], n_boot=500, seed=3)
    assert (d.lo, d.hi) == (one_column.lo, one_column.hi)


def test_undefined_values_identical_sides_and_errors():
    d = paired_difference([1, None, 0, 1, float("nan")], [0, 1, None, 1, 1], n_boot=200)
    assert d.n == 2 and d.delta == 0.5 and d.share_differ == 0.5    # questions 1 and 4 only
    assert paired_difference([1, None], [None, 1]).n == 0
    assert math.isnan(paired_difference([None], [None]).delta)
    same = paired_difference([0.0, 1.0, 1.0], [0.0, 1.0, 1.0])
    assert (same.delta, same.lo, same.hi, same.share_differ, same.excludes_zero) == (0.0, 0.0, 0.0, 0.0, False)
    assert paired_difference(np.arange(30.0), np.zeros(30), seed=5) == paired_difference(np.arange(30.0), np.zeros(30), seed=5)
    with pytest.raises(ValueError, match="shape"):
        paired_difference([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="n_boot"):
        paired_difference([1, 2], [1, 2], n_boot=0)
    with pytest.raises(ValueError, match="alpha"):
        paired_difference([1, 2], [1, 2], alpha=1.5)
    with pytest.raises(ValueError, match="expected numbers"):
        paired_difference(["x", 1], [1, 2])


@pytest.mark.parametrize(("alpha", "seed"), [(0.05, 0), (0.2, 3), (0.01, 11)])
def test_every_bootstrap_interval_reads_the_same_percentiles_of_the_same_resamples(alpha, seed):
    """One rule for a percentile bootstrap interval: the same resamples of the same values give the same bounds,
    whether read as a mean (bootstrap_ci), a paired difference against zeros or a ratio over ones."""
    x = np.random.default_rng(seed).random(23)
    want = bootstrap_ci(x, n_boot=300, alpha=alpha, seed=seed)
    d = paired_difference(x, np.zeros_like(x), n_boot=300, alpha=alpha, seed=seed)
    assert (d.lo, d.hi) == want
    assert ratio_interval(x, np.ones_like(x), n_boot=300, alpha=alpha, seed=seed) == pytest.approx(want, abs=1e-15)


def test_a_paired_difference_is_printed_as_one_interval_text_everywhere():
    """One format for ``Δ [lo, hi]``: a paired test's text and a where-grid cell's hover print interval_text."""
    rng = np.random.default_rng(2)
    test = paired_test(rng.random(30) * 20, rng.random(30), n_boot=200)
    assert test.text().startswith(interval_text(test.difference._asdict(), 3) + ", p")
    assert test.text(1).startswith(interval_text(test.difference._asdict(), 1) + ", p")
    cell = WhereCell("holds", "✓", 12.34567, -0.5, 25.0, 30, 0.01, "")
    grid = WhereGridInfo(("k",), ("claim",), ("world s0",), ("world",), ((cell,),), "")
    assert f"Δ = {interval_text(cell._asdict(), 3)}, n=30" in _hover(grid, 0, 0)


def test_config_changes_and_labels():
    base = {"round_cap.max_rounds": 3, "disclosure.disclosed": False, "crag.upper": 0.5, "sources.simple": []}
    config = {**base, "disclosure.disclosed": True, "crag.upper": 0.7, "round_cap.max_rounds": 3}
    changes = config_changes(config, base, order=["disclosure.disclosed"])
    assert changes == {"disclosure.disclosed": True, "crag.upper": 0.7}
    assert list(changes) == ["disclosure.disclosed", "crag.upper"]
    assert changes_label(changes) == "disclosure.disclosed=true, crag.upper=0.7"
    assert changes_label({}) == "base" and changes_label({"budget.max_rounds": None}) == "budget.max_rounds=none"


# ---------------------------------------------------------------- a real small sweep

SPEC = {
    "name": "paired-test", "dataset": "world", "split": "test", "types": ["bridge", "comparison", "single"],
    "per_type": 4, "base": {"round_cap.max_rounds": 3}, "seeds": [0, 1],
    "grid": [{"round_cap.max_rounds": [1, 3]}, {"truncation.strategy": ["rank_then_truncate", "append_then_truncate"]}],
}
METRIC = "quality_has_answer_in_context"


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return run_sweep(SPEC, tmp_path_factory.mktemp("paired") / "run", progress="quiet")


def test_compare_against_the_base_config(sweep):
    table = sweep.compare(METRIC, n_boot=500)
    ref = table.attrs["reference"]
    assert ref["rule"] == "base" and ref["description"].startswith("the base config")
    assert table["label"].tolist() == ["round_cap.max_rounds=1", "base", "truncation.strategy=append_then_truncate"]
    assert table["is_reference"].tolist() == [False, True, False]
    assert (table["n_seeds"] == 2).all() and (table["metric"] == METRIC).all()
    base = table[table["is_reference"]].iloc[0]
    assert (base["delta"], base["lo"], base["hi"], base["share_differ"]) == (0.0, 0.0, 0.0, 0.0)

    # the same numbers computed another way: per-question means over the two seeds, from the stored rows
    def per_question(config_id):
        cands = sweep.table.loc[sweep.table["config_id"] == config_id, "candidate_id"]
        frames = [sweep.rows(c).set_index("qid")[METRIC].astype(float) for c in cands]
        return pd.concat(frames, axis=1).mean(axis=1)

    ref_values = per_question(ref["config_id"])
    for _, row in table.iterrows():
        diff = (per_question(row["config_id"]) - ref_values).dropna()
        assert row["n"] == len(diff) == len(sweep.qids)
        assert row["delta"] == pytest.approx(diff.mean())
        assert row["share_differ"] == pytest.approx((diff.abs() > 1e-12).mean())
        assert row["lo"] <= row["delta"] <= row["hi"]
        assert row["excludes_zero"] == (row["lo"] > 0 or row["hi"] < 0)


def test_compare_costs_other_references_and_errors(sweep):
    calls = sweep.compare("cost_llm_calls", n_boot=300).set_index("label")
    assert calls.loc["round_cap.max_rounds=1", "delta"] < 0        # one round needs fewer controller calls
    cap1 = sweep.table.loc[sweep.table["param_round_cap.max_rounds"] == 1, "candidate_id"].iloc[1]  # seed 1's run
    by_run = sweep.compare(METRIC, reference=cap1, n_boot=300)
    assert by_run.attrs["reference"]["rule"] == "given"
    assert by_run["label"].tolist() == ["reference", "round_cap.max_rounds=3",
                                        "round_cap.max_rounds=3, truncation.strategy=append_then_truncate"]
    by_params = sweep.compare(METRIC, reference={"truncation.strategy": "append_then_truncate"}, n_boot=300)
    assert by_params["is_reference"].tolist() == [False, False, True]
    flipped = by_params.set_index("label").loc["truncation.strategy=rank_then_truncate", "delta"]
    assert flipped == pytest.approx(-sweep.compare(METRIC, n_boot=300)["delta"].iloc[2])
    with pytest.raises(KeyError, match="matches 3"):
        sweep.compare(METRIC, reference={"retrieval.top_k": 5})   # every config has it: not one
    with pytest.raises(KeyError):
        sweep.compare(METRIC, reference="nope")
    # the rule a sweep file's findings are checked by, with its words: what the candidates have
    with pytest.raises(KeyError, match=r"reference \{round_cap.max_rounds: 7\} matches no candidate of the sweep "
                                       r"\(round_cap.max_rounds is 1 or 3 in its candidates\)"):
        sweep.compare(METRIC, reference={"round_cap.max_rounds": 7})
    with pytest.raises(ValueError, match="no metric 'quality_nope'"):
        sweep.compare("quality_nope")
    assert sweep.labels()[cap1] == "round_cap.max_rounds=1"


def test_reference_is_the_first_candidate_when_the_base_is_not_a_grid_point(tmp_path):
    spec = {**SPEC, "name": "no-base", "per_type": 1, "seeds": [0], "grid": {"round_cap.max_rounds": [1, 2]}}
    result = run_sweep(spec, tmp_path / "run", progress="quiet")
    table = result.compare(METRIC, n_boot=200)
    ref = table.attrs["reference"]
    assert ref["rule"] == "first" and ref["candidate_id"] == result.table["candidate_id"].iloc[0]
    assert "the base config is not among the candidates" in ref["description"]
    assert "round_cap.max_rounds=1" in ref["description"]
    assert table["label"].tolist() == ["reference", "round_cap.max_rounds=2"]


def test_report_and_cli_show_the_deltas(sweep, tmp_path):
    text = write_report(sweep.run_dir, tmp_path / "report.html", quality_col=METRIC).read_text(encoding="utf-8")
    assert "<h2>Paired differences vs the reference (exploratory)</h2>" in text
    assert f"<h1>rag_lab sweep report: {sweep.spec['name']}</h1>" in text   # the sweep's name, not its folder's
    assert 'id="forest-0"' in text and 'id="forest-1"' in text and 'id="forest-2"' not in text  # one per metric
    quality = sweep.compare(METRIC)
    row = quality.iloc[0]
    assert f"{row['delta']:+.3f} [{row['lo']:+.3f}, {row['hi']:+.3f}]" in text
    assert "round_cap.max_rounds=1" in text and "the base config" in text
    assert re.search(r"<th[^>]*>changes</th>", text)          # the results table names each candidate's changes

    frames = comparisons(load_sweep(sweep.run_dir), (METRIC, "cost_llm_calls", "quality_not_there"))
    assert list(frames) == [METRIC, "cost_llm_calls"]
    exploratory, *lines = delta_table_text(summarize(load_sweep(sweep.run_dir), METRIC)).splitlines()
    assert exploratory.startswith("Exploratory: every candidate against the reference")
    assert lines[0].startswith("Δ = candidate − the base config")
    assert "the same 12 questions" in lines[0] and "2 seed(s)" in lines[0]
    assert "Δ gold answer in final context" in lines[1] and "Δ LLM calls / question" in lines[1]
    assert [ln.split("  ")[0].strip() for ln in lines[2:]] == ["round_cap.max_rounds=1",
                                                               "truncation.strategy=append_then_truncate"]
    assert lines[2].count("*") == sum(is_measured(frames[m].iloc[0]) for m in frames)
    # every Δ carries its p and its Holm-adjusted p, Holm over the 2 candidates x 2 metrics of the table
    family = [(m, i) for m in frames for i in range(len(frames[m])) if not frames[m]["is_reference"].iloc[i]]
    assert len(family) == 4
    raw = [float(frames[m]["p"].iloc[i]) for m, i in family]
    assert [float(frames[m]["p_holm"].iloc[i]) for m, i in family] == pytest.approx(holm(raw))
    assert all(math.isnan(v) for f in frames.values() for v in f.loc[f["is_reference"], "p_holm"])
    m, i = family[0]
    assert f"{p_clause(raw[0])} (Holm {p_text(float(frames[m]['p_holm'].iloc[i]))})" in lines[2]
    assert "Holm" in text and "p=" in text


def test_rag_lab_sweep_prints_the_delta_table(sweep, tmp_path, capsys):
    sweep_file = tmp_path / "paired.json"
    sweep_file.write_text(json.dumps(SPEC))
    assert main(["sweep", str(sweep_file), "--out", str(sweep.run_dir), "--quiet"]) == 0   # resumes: runs nothing
    text = capsys.readouterr().out
    table = text[text.index("Δ = candidate − the base config"):].splitlines()
    assert table[1].split()[:3] == ["changes", "vs", "reference"]
    assert table[2].startswith("round_cap.max_rounds=1 ") and len(table) == 4
    assert "Holm" in table[0] and re.search(r"p[=<][0-9.]+ \(Holm <?[0-9.]+\)", table[2])


def test_a_finding_holds_only_where_its_interval_lies_and_its_p_is_small():
    from rag_lab.experiments import Finding

    def finding(lo, hi, direction, margin=0.0, n=40, p=0.001):
        return Finding("c", "quality_f1", "x=1", "base", direction, margin, (lo + hi) / 2, lo, hi, n, 0.2, 0.5, 0.4,
                       p=p, method="exact")

    assert finding(0.01, 0.2, "above").holds and not finding(0.0, 0.2, "above").holds
    assert not finding(-0.1, 0.2, "above").holds and not finding(-0.2, -0.01, "above").holds
    assert finding(-0.2, -0.01, "below").holds and not finding(-0.2, 0.0, "below").holds
    assert finding(-0.01, 0.02, "none", 0.02).holds and not finding(-0.01, 0.05, "none", 0.02).holds
    assert not finding(float("nan"), float("nan"), "above").holds and not finding(0.1, 0.2, "above", n=0).holds
    # the interval alone is not enough: p must be below alpha too
    assert not finding(0.01, 0.2, "above", p=0.125).holds and not finding(0.01, 0.2, "above", p=float("nan")).holds
    text = finding(0.01, 0.2, "above").message
    assert text.startswith("Finding holds (measured): c.") and "entirely above 0" in text and "[+0.010, +0.200]" in text
    assert "p=0.0010 (exact)" in text
    assert "does NOT hold" in finding(-0.1, 0.2, "above").message


def test_paired_finding_on_a_real_sweep(sweep):
    from rag_lab.experiments import paired_finding

    table = sweep.compare("cost_rounds").set_index("label")
    one = paired_finding(sweep, "cost_rounds", candidate={"round_cap.max_rounds": 1}, direction="below",
                         claim="one round costs fewer rounds")
    row = table.loc["round_cap.max_rounds=1"]
    assert (one.delta, one.lo, one.hi, one.n) == (row["delta"], row["lo"], row["hi"], len(sweep.qids))
    assert one.delta < 0 and one.holds == (one.hi < 0 and one.p < 0.05)
    # the claim's test is one-sided: half the two-sided p of the Δ table when Δ lies the claimed way
    assert one.p == pytest.approx(row["p"] / 2) and one.method == row["test"] + ", one-sided"
    assert one.n_worse == row["n_worse"]
    assert one.candidate == "round_cap.max_rounds=1" and one.reference == "base"
    assert "one round costs fewer rounds" in one.message and f"{one.delta:+.3f}" in one.message
    assert not paired_finding(sweep, "cost_rounds", candidate={"round_cap.max_rounds": 1}, direction="above").holds
    # the reverse comparison flips the sign
    base = {"round_cap.max_rounds": 3, "truncation.strategy": "rank_then_truncate"}
    flipped = paired_finding(sweep, "cost_rounds", candidate=base,
                             reference={"round_cap.max_rounds": 1}, direction="above")
    assert flipped.delta == pytest.approx(-one.delta) and flipped.reference == "round_cap.max_rounds=1"
    # "no effect": truncation order runs the same rounds on every question here, but a count without spread
    # bounds nothing beyond these questions: the TOST is refused, not "proved" (issue 29)
    same = paired_finding(sweep, "cost_rounds", candidate={"truncation.strategy": "append_then_truncate"},
                          direction="none", margin=0.01)
    assert not same.holds and same.delta == 0 and same.method == "TOST refused" and same.p == 1.0
    with pytest.raises(ValueError, match="margin"):
        paired_finding(sweep, "cost_rounds", candidate={"truncation.strategy": "append_then_truncate"}, direction="none")
    with pytest.raises(ValueError, match="same configuration"):
        paired_finding(sweep, "cost_rounds", candidate=base)
    with pytest.raises(ValueError, match="direction"):
        paired_finding(sweep, "cost_rounds", candidate={"round_cap.max_rounds": 1}, direction="up")


def test_what_the_model_did_adds_up_to_the_questions_and_the_rounds_metric(sweep):
    """The recorded pages' "what the model did" tables (rag_lab.experiments.engine.behaviour), on a sweep of two
    seeds: each run's questions split once by rounds and once by stop reason, its mean rounds is the table's
    ``cost_rounds``, and no controller is asked after more rounds than its cap allows."""
    from rag_lab.experiments.engine.behaviour import decisions_by_round, loop_ends

    ends = loop_ends(sweep)
    assert len(ends) == len(sweep.table) and ends["configuration"].is_unique
    rounds = [c for c in ends if c.startswith("rounds ")]
    stops = [c for c in ends if c.startswith("ended: ")]
    assert (ends[rounds].sum(axis=1) == ends["questions"]).all() and (ends[stops].sum(axis=1) == ends["questions"]).all()
    assert ends["mean rounds"].tolist() == pytest.approx(sweep.table["cost_rounds"].tolist())
    decisions = decisions_by_round(sweep)
    capped = decisions[decisions["configuration"].str.startswith("round_cap.max_rounds=1")]
    assert len(capped) and set(capped["round"]) == {1} and decisions["round"].max() <= 3
    assert {"answer", "retrieve_again", "of which fallback"} <= set(decisions.columns)
