"""The benchmark runner (``python -m benchmarks``): discovery of ``bench_*.py`` sections, ratios that
always read "above 1 = the candidate is better", and the markdown table's header and rows. No
benchmark is run here."""

from __future__ import annotations

import json

import pytest

from benchmarks import Measure, Ratio, Section
from benchmarks.__main__ import discover, main, markdown


@pytest.mark.slow  # a fresh interpreter importing the package: seconds
def test_sections_are_discovered_and_scripts_listed():
    sections, scripts = discover()
    assert list(sections)[:3] == ["embedding", "concurrency", "scale"]
    assert all(callable(m.run) for m in sections.values())
    assert "simulator" in scripts and "embedding_cache" in scripts


def test_ratio_direction_and_targets():
    faster = Ratio("throughput", "a", "b", 10.0, 65.0, "runs/s", target=6.0)
    assert faster.ratio == 6.5 and faster.met is True
    quicker = Ratio("latency", "exact", "hnsw", 12.0, 0.5, "ms", higher_is_better=False)
    assert quicker.ratio == 24.0 and quicker.met is None
    assert Ratio("x", "a", "b", 10.0, 50.0, "runs/s", target=6.0).met is False
    assert Measure("rss", 1600, "MB", at_most=1536).met is False
    assert Measure("recall", 0.98, "", at_least=0.97).met is True


def test_markdown_has_the_cores_the_command_and_one_row_per_ratio():
    section = Section("demo", ratios=[Ratio("throughput, 8 vs 1", "1 worker", "8 workers", 1.0, 7.0, "runs/s",
                                            target=6.0)],
                      measures=[Measure("peak RSS", 900.0, "MB", at_most=1536)], notes=["a note"])
    report = {"command": "python -m benchmarks --quick", "started": "2026-12-01 04:00", "commit": "abc", "quick": True,
              "seconds": 3.0, "machine": {"cores": 2, "load_avg_1_5_15": [1.0, 1.0, 1.0], "python": "3.11",
                                          "torch": "2.13.0", "onnxruntime": None, "hnswlib": "0.8.0"},
              "sections": [json.loads(json.dumps(section.to_dict()))], "script_only": ["simulator"]}
    text = markdown(report)
    assert "**2 cores**" in text and "`python -m benchmarks --quick`" in text
    assert "| demo | throughput, 8 vs 1 | 1 worker: 1.00 runs/s | 8 workers: 7.00 runs/s | **7.00×** | ≥ 6× | yes |" in text
    assert "| demo | peak RSS | 900 MB | ≤ 1536 | yes |" in text
    assert "- a note" in text and "simulator" in text


@pytest.mark.slow   # out of the quick loop: runs the benchmark runner
def test_unknown_sections_are_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--sections", "nope", "--out", "/tmp/unused"])
    assert exc.value.code == 2
    assert "unknown section(s) ['nope']" in capsys.readouterr().err


def test_the_recorded_race_benchmark_builds_a_replayed_race_for_every_part():
    """``bench_race_recorded`` reads each study part's sweep file through the engine: a moved or renamed loader
    breaks it here, not at the next benchmark run."""
    from benchmarks.bench_race_recorded import PARTS, race_spec
    from rag_lab.experiments.engine.sweep_file import load_sweep_spec

    for part in PARTS:
        spec = load_sweep_spec(race_spec(part, 0.02, 0))
        assert spec.backend.replay and spec.search.race.margin == 0.02 and spec.search.sampler == "grid"


def test_the_bound_benchmark_reproduces_the_shipped_rule_with_bonferroni():
    """``bench_racing_bound.combined_race`` with ``bonferroni`` is the shipped rule, so its other tests of "no rival
    dominates c" (Simes, distance weights) are compared with the rule itself: the same drops at the same looks as
    :func:`run_race` on fields where some candidates are dominated by a little and some by a lot."""
    import numpy as np

    from benchmarks.bench_racing_bound import bonferroni, combined_race
    from rag_lab.experiments.engine.search_space import Objective, RaceSpec
    from rag_lab.experiments.tuning.racing import run_race

    objectives = [Objective.parse("cost_llm_calls"), Objective.parse("max:quality_answer_containment_strict")]
    n, stages, drops = 240, [20, 40, 80, 160], 0
    order = [f"q{i}" for i in range(n)]
    for seed in range(6):
        rng = np.random.default_rng(seed)
        easy, calls = rng.beta(2.0, 1.5, n), 2.0 + (rng.random(n) < 0.3)
        values = {f"c{k}": {"cost_llm_calls": calls + (rng.random(n) < 0.1 * k),
                            "quality_answer_containment_strict": (rng.random(n) < easy * (1 - 0.12 * k)).astype(float)}
                  for k in range(5)}
        mine = combined_race(values, np.arange(n), RaceSpec(batches=stages).stages(n), objectives, 0.05, 0.02,
                             bonferroni)
        out = run_race(list(values), [], order, RaceSpec(batches=stages), objectives, [], lambda a, b: None,
                       lambda c, q, m, v=values: v[c][m][[int(x[1:]) for x in q]])
        assert mine == {c: o.n_questions for c, o in out.items() if o.status == "dropped"}
        drops += len(mine)
    assert drops >= 6, f"only {drops} drops: the fields test nothing"
