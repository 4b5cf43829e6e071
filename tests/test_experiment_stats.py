"""Statistics, Pareto front, cost-quality figure info and the HTML report of a sweep (issue 5)."""

import math
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from rag_lab.evaluation.catalog import DEFAULT_QUALITY, label
from rag_lab.figures import cost_quality_figure, cost_quality_info
from rag_lab.figures.common import UNSET
from rag_lab.report import write_report
from rag_lab.stats.summary import (
    add_pareto,
    aggregate_by_type,
    aggregate_rows,
    bootstrap_ci,
    mean_std_over_seeds,
    pareto_mask,
)

# ---------------------------------------------------------------- bootstrap


def test_bootstrap_ci_on_bernoulli_covers_mean_with_normal_width():
    p, n = 0.3, 2000
    draws = np.random.default_rng(11).binomial(1, p, size=n).astype(float)
    lo, hi = bootstrap_ci(draws, n_boot=2000, seed=3)
    assert lo < p < hi
    assert lo < draws.mean() < hi
    expected_width = 2 * 1.96 * math.sqrt(p * (1 - p) / n)
    assert hi - lo == pytest.approx(expected_width, rel=0.1)


def test_bootstrap_ci_coverage_is_about_95_percent():
    rng = np.random.default_rng(5)
    mu, sigma, n, reps = 2.0, 1.5, 200, 400
    covered = 0
    for rep in range(reps):
        lo, hi = bootstrap_ci(rng.normal(mu, sigma, size=n), n_boot=500, seed=rep)
        covered += lo <= mu <= hi
    assert 0.91 <= covered / reps <= 0.98


def test_bootstrap_ci_deterministic_drops_none_and_edge_cases():
    values = [1.0, None, 0.0, 1.0, float("nan"), 1.0]
    assert bootstrap_ci(values, seed=1) == bootstrap_ci(values, seed=1)
    assert bootstrap_ci(values, seed=1) == bootstrap_ci([1.0, 0.0, 1.0, 1.0], seed=1)
    assert bootstrap_ci([0.4]) == (0.4, 0.4)
    assert all(math.isnan(b) for b in bootstrap_ci([None, None]))
    assert all(math.isnan(b) for b in bootstrap_ci([]))
    lo90, hi90 = bootstrap_ci(np.arange(50.0), alpha=0.1)
    lo95, hi95 = bootstrap_ci(np.arange(50.0), alpha=0.05)
    assert lo95 <= lo90 < hi90 <= hi95


@pytest.mark.parametrize("kwargs", [{"n_boot": 0}, {"n_boot": 2.5}, {"alpha": 0.0}, {"alpha": 1.0}])
def test_bootstrap_ci_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], **kwargs)


def test_bootstrap_ci_rejects_text():
    with pytest.raises(ValueError, match="'yes'"):
        bootstrap_ci([1.0, "yes"])


# ---------------------------------------------------------------- aggregation

ROWS = [
    {"qid": "q1", "type": "bridge", "quality_answer_containment": 1.0, "quality_f1": 1.0,
     "cost_llm_calls": 4, "cost_calls_planner": 1, "spent_llm_calls": 4, "run_wall_latency_s": 0.5},
    {"qid": "q2", "type": "bridge", "quality_answer_containment": 0.0, "quality_f1": 0.5,
     "cost_llm_calls": 2, "spent_llm_calls": 0, "run_wall_latency_s": 0.1},
    {"qid": "q3", "type": "unanswerable", "quality_answer_containment": None, "quality_f1": None,
     "cost_llm_calls": 3, "spent_llm_calls": 1, "run_wall_latency_s": 0.3},
]


def test_aggregate_rows_means_bounds_and_costs():
    agg = aggregate_rows(ROWS, n_boot=200)
    assert agg["n_questions"] == 3
    assert agg["quality_answer_containment"] == pytest.approx(0.5)  # None left out
    assert agg["quality_f1"] == pytest.approx(0.75)
    for col in ("quality_answer_containment", "quality_f1"):
        assert agg[f"{col}_lo"] <= agg[col] <= agg[f"{col}_hi"]
    assert (agg["quality_f1_lo"], agg["quality_f1_hi"]) == bootstrap_ci([1.0, 0.5], n_boot=200)
    assert agg["cost_llm_calls"] == pytest.approx(3.0)
    assert agg["cost_calls_planner"] == pytest.approx(1 / 3)  # a missing role key counts as zero calls
    assert agg["spent_llm_calls"] == pytest.approx(5 / 3)
    assert agg["run_wall_latency_s"] == pytest.approx(0.3)
    assert "qid" not in agg and "type" not in agg
    assert aggregate_rows(ROWS, n_boot=200) == agg


def test_aggregate_rows_undefined_column_and_empty():
    agg = aggregate_rows([{"quality_x": None, "cost_y": 1}])
    assert math.isnan(agg["quality_x"]) and math.isnan(agg["quality_x_lo"]) and math.isnan(agg["quality_x_hi"])
    assert aggregate_rows([]) == {"n_questions": 0}
    with pytest.raises(ValueError, match="list of dicts"):
        aggregate_rows({"quality_x": 1.0})


def test_aggregate_by_type():
    by_type = aggregate_by_type(ROWS, n_boot=100)
    assert list(by_type) == ["bridge", "unanswerable"]
    assert by_type["bridge"]["n_questions"] == 2
    assert by_type["bridge"]["quality_f1"] == pytest.approx(0.75)
    assert math.isnan(by_type["unanswerable"]["quality_f1"])
    assert by_type["unanswerable"]["cost_llm_calls"] == 3
    with pytest.raises(ValueError, match="'type'"):
        aggregate_by_type([{"quality_x": 1.0}])


def test_mean_std_over_seeds():
    table = pd.DataFrame({
        "param_round_cap.max_rounds": [1, 1, 2, 2, 3],
        "param_hyde.n_docs": [np.nan, np.nan, 4, 4, np.nan],
        "seed": [0, 1, 0, 1, 0],
        "quality_f1": [0.2, 0.4, 0.5, 0.5, 0.9],
        "quality_f1_lo": [0.1] * 5,
        "quality_f1_hi": [0.9] * 5,
        "cost_llm_calls": [2.0, 4.0, 6.0, 6.0, 8.0],
        "n_questions": [10] * 5,
    })
    out = mean_std_over_seeds(table, ["param_round_cap.max_rounds", "param_hyde.n_docs"])
    assert list(out.columns) == [
        "param_round_cap.max_rounds", "param_hyde.n_docs",
        "quality_f1_mean", "quality_f1_std", "cost_llm_calls_mean", "cost_llm_calls_std", "n_seeds",
    ]
    assert out["param_round_cap.max_rounds"].tolist() == [1, 2, 3]
    assert out["quality_f1_mean"].tolist() == pytest.approx([0.3, 0.5, 0.9])
    assert out["quality_f1_std"].iloc[0] == pytest.approx(np.std([0.2, 0.4], ddof=1))
    assert out["quality_f1_std"].iloc[1] == 0.0
    assert math.isnan(out["quality_f1_std"].iloc[2])  # one seed
    assert out["n_seeds"].tolist() == [2, 2, 1]
    only = mean_std_over_seeds(table, ["param_round_cap.max_rounds"], value_cols=["cost_llm_calls"])
    assert list(only.columns) == ["param_round_cap.max_rounds", "cost_llm_calls_mean", "cost_llm_calls_std", "n_seeds"]
    with pytest.raises(ValueError, match="seed repeated"):
        mean_std_over_seeds(table, ["param_hyde.n_docs"])
    with pytest.raises(ValueError, match="no column"):
        mean_std_over_seeds(table, ["param_missing"])


# ---------------------------------------------------------------- Pareto


def test_pareto_mask_hand_made():
    #        A    B    C    D    E    F(dup A)  G(nan) H    I
    cost = [1.0, 2.0, 2.0, 3.0, 0.5, 1.0, np.nan, 4.0, 3.0]
    qual = [0.5, 0.7, 0.6, 0.7, 0.2, 0.5, 0.99, 0.9, None]
    mask = pareto_mask(cost, qual)
    #  E (cheapest), A and its duplicate F, B (better than A); C same cost lower quality than B;
    #  D same quality as B at higher cost; G and I undefined; H best quality.
    assert mask.tolist() == [True, True, False, False, True, True, False, True, False]
    assert mask.dtype == bool


def test_pareto_mask_matches_brute_force():
    rng = np.random.default_rng(0)
    cost = rng.integers(0, 8, size=300).astype(float)
    qual = rng.integers(0, 8, size=300).astype(float)
    cost[::37] = np.nan

    def dominated(i):
        return any(
            cost[j] <= cost[i] and qual[j] >= qual[i] and (cost[j] < cost[i] or qual[j] > qual[i])
            for j in range(len(cost)) if not np.isnan(cost[j])
        )

    expected = [not np.isnan(cost[i]) and not dominated(i) for i in range(len(cost))]
    assert pareto_mask(cost, qual).tolist() == expected


def test_pareto_mask_edge_cases():
    assert pareto_mask([], []).tolist() == []
    assert pareto_mask([np.nan], [1.0]).tolist() == [False]
    with pytest.raises(ValueError, match="length"):
        pareto_mask([1.0, 2.0], [1.0])


def test_add_pareto_returns_a_copy():
    table = pd.DataFrame({"cost_llm_calls": [1, 2, 3], "quality_f1": [0.5, 0.4, 0.8]})
    out = add_pareto(table, "cost_llm_calls", "quality_f1")
    assert out["is_pareto"].tolist() == [True, False, True]
    assert "is_pareto" not in table.columns
    assert add_pareto(table, "cost_llm_calls", "quality_f1", column="front")["front"].tolist() == [True, False, True]
    with pytest.raises(ValueError, match="quality_nope"):
        add_pareto(table, "cost_llm_calls", "quality_nope")


# ---------------------------------------------------------------- figure info

TABLE = pd.DataFrame({
    "candidate_id": ["c0", "c1", "c2", "c3", "c4"],
    "seed": [0] * 5,
    "param_round_cap.max_rounds": [1, 2, 3, 4, 2],
    "param_hyde.enabled": [False, False, True, True, True],
    DEFAULT_QUALITY: [0.40, 0.60, 0.55, 0.80, np.nan],
    f"{DEFAULT_QUALITY}_lo": [0.30, 0.50, 0.45, 0.70, np.nan],
    f"{DEFAULT_QUALITY}_hi": [0.50, 0.70, 0.65, 0.90, np.nan],
    "quality_f1": [0.31, 0.52, 0.50, 0.71, 0.2],
    "cost_llm_calls": [2.0, 3.0, 4.0, 6.0, 3.0],
    "cost_tokens": [900.0, 1400.0, 2000.0, 3100.0, 1500.0],
    "spent_llm_calls": [2.0, 1.0, 1.0, 2.0, 0.0],
    "run_wall_latency_s": [0.1, 0.2, 0.2, 0.3, 0.1],
    "n_questions": [20] * 5,
    "is_pareto": [False] * 5,
})


def test_cost_quality_info():
    info = cost_quality_info(TABLE, "cost_llm_calls", DEFAULT_QUALITY,
                             color_by="param_hyde.enabled")
    assert info.ids == ("c0", "c1", "c2", "c3")  # c4 has no quality
    assert info.n_undefined == 1
    assert info.x == (2.0, 3.0, 4.0, 6.0)
    assert info.y == (0.40, 0.60, 0.55, 0.80)
    assert info.y_lo == (0.30, 0.50, 0.45, 0.70)
    assert info.y_hi == (0.50, 0.70, 0.65, 0.90)
    assert info.is_pareto == (True, True, False, True)
    assert info.front_ids == ("c0", "c1", "c3")
    assert info.front_x == (2.0, 3.0, 6.0) and info.front_y == (0.40, 0.60, 0.80)
    assert info.groups == ("no", "no", "yes", "yes")
    assert info.group_names == ("no", "yes")
    assert info.labels[2] == "c2\nround_cap.max_rounds=3\nhyde.enabled=yes"


def test_cost_quality_info_without_ci_groups_and_unset():
    table = TABLE.assign(**{"param_hyde.n_docs": [np.nan, np.nan, 4, 8, 4]})
    info = cost_quality_info(table, "cost_tokens", "quality_f1", color_by="param_hyde.n_docs",
                             label_cols=["param_hyde.n_docs"])
    assert info.y_lo is None and info.y_hi is None
    assert info.n_undefined == 0
    assert info.groups == (UNSET, UNSET, "4", "8", "4")
    assert info.group_names == ("4", "8", UNSET)
    assert info.labels[0] == "c0" and info.labels[3] == "c3\nhyde.n_docs=8"
    assert info.front_ids == ("c0", "c1", "c3")
    with pytest.raises(ValueError, match="param_nope"):
        cost_quality_info(TABLE, "cost_tokens", "quality_f1", color_by="param_nope")


def test_cost_quality_figure_from_info():
    info = cost_quality_info(TABLE, "cost_llm_calls", DEFAULT_QUALITY,
                             color_by="param_hyde.enabled")
    fig = cost_quality_figure(info)
    assert isinstance(fig, go.Figure)
    names = [t.name for t in fig.data]
    assert names == ["hyde.enabled=no", "hyde.enabled=yes", "Pareto front"]
    assert list(fig.data[0].error_y.array) == pytest.approx([0.10, 0.10])
    assert list(fig.data[-1].x) == [2.0, 3.0, 6.0] and fig.data[-1].line.shape == "hv"
    assert fig.layout.xaxis.title.text == "LLM calls / question"
    assert fig.layout.yaxis.title.text == "answer containment (strict: short answer)"


# ---------------------------------------------------------------- report


def test_write_report_is_self_contained(tmp_path):
    table = TABLE.assign(**{"param_note": ["<b>x</b>", "a", "b", "c", "d"]})
    out = write_report(table, tmp_path / "sub" / "report.html")
    assert out == tmp_path / "sub" / "report.html"
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "rag_lab sweep report" in text
    assert "<script" in text and "Plotly.newPlot" in text
    assert len(text) > 1_000_000  # plotly.js inlined, once
    assert text.count("plotly.js v") == 1
    assert not re.search(r"<script[^>]*\bsrc=", text)  # nothing loaded from a CDN or anywhere else
    assert "https://cdn" not in text.replace(_plotly_js(text), "")  # (plotly.js itself mentions CDNs)
    assert "How to read this" in text and "spent_*" in text
    assert f"{label(DEFAULT_QUALITY)} vs tokens \\u002f question" in text  # the second scatter, readable titles (JSON)
    # the table: values, CI folded into the quality cell, Pareto rows, escaped text
    assert "<td>0.6 [0.5, 0.7]</td>" in text
    assert "<td>3100</td>" in text
    assert text.count('<tr class="pareto">') == 3
    assert "&lt;b&gt;x&lt;/b&gt;" in text and "<b>x</b>" not in text
    header = re.search(r"<thead><tr>(.*?)</tr></thead>", text).group(1)
    heads = re.findall(r"<th[^>]*>(.*?)</th>", header)
    assert heads[:4] == ["candidate_id", "round_cap.max_rounds", "hyde.enabled", "note"]
    assert heads.index(DEFAULT_QUALITY) < heads.index("cost_llm_calls") < heads.index("is_pareto")
    assert f"{DEFAULT_QUALITY}_lo" not in heads
    assert "LLM calls spent / incurred: 33.3%" in text  # 6 of 18 calls per question missed the cache


def _plotly_js(text: str) -> str:
    """The inlined plotly.js bundle (the largest script of the page)."""
    return max(re.findall(r"<script[^>]*>(.*?)</script>", text, flags=re.S), key=len)


def test_write_report_names_a_table_and_has_no_delta_section_without_a_sweep(tmp_path):
    """A bare table has no per-question rows, so no paired differences (tests/test_paired.py: from a sweep)."""
    named = write_report(TABLE, tmp_path / "n.html", name="a & b").read_text(encoding="utf-8")
    assert "<h1>rag_lab sweep report: a &amp; b</h1>" in named
    assert "Paired differences" not in named and "<td>0.6 [0.5, 0.7]</td>" in named


def test_write_report_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="no column 'cost_nope'"):
        write_report(TABLE, tmp_path / "r.html", cost_col="cost_nope")
    with pytest.raises(ValueError, match="no rows"):
        write_report(TABLE.iloc[:0], tmp_path / "r.html")
    with pytest.raises(ValueError, match="not a run directory"):
        write_report(tmp_path / "missing", tmp_path / "r.html")
