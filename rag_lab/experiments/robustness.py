"""Re-running a sweep's declared findings elsewhere: the same sweep on other datasets and simulator seeds, each
finding it states (``findings:``) tested in every (dataset, seed) cell with its one test
(:func:`~rag_lab.experiments.engine.findings.sweep_findings`). On the sweep's own dataset a cell keeps its questions
(split, types, per_type); on another it takes that dataset's first ``limit`` questions. A cell gives one plain
record per finding: the paired Δ, its interval, the claim's p — not corrected over the cells, which is the caller's
family to declare — and the paired differences from which what the cell could have detected follows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.sweep import SweepSpec
from rag_lab.experiments.engine.sweep_file import load_sweep_spec

__all__ = ["cell_spec", "rerun_findings", "tested_findings"]

#: The question filters of a sweep's own dataset, which another dataset's cell does not take.
_OWN_QUESTIONS = ("split", "types", "per_type")


def cell_spec(sweep: SweepSpec | Mapping[str, Any] | str | Path, dataset: str, seed: int,
              limit: int | None = None) -> dict[str, Any]:
    """The sweep of one cell: ``sweep`` on ``dataset`` with simulator seed ``seed``, named
    ``<name>_<dataset>_s<seed>``; on a dataset other than the sweep's own, its first ``limit`` questions.

    >>> spec = cell_spec({"name": "c", "dataset": "world", "split": "test", "per_type": 5,
    ...                   "grid": {"round_cap.max_rounds": [1, 2]}}, "hotpotqa_sample", 1, limit=60)
    >>> spec["name"], spec["dataset"], spec["seeds"], spec["limit"], "per_type" in spec
    ('c_hotpotqa_sample_s1', 'hotpotqa_sample', [1], 60, False)
    """
    spec = load_sweep_spec(sweep)
    data = spec.model_dump(mode="json", exclude_defaults=True)
    data.update({"name": f"{spec.name}_{dataset}_s{seed}", "dataset": dataset, "seeds": [seed]})
    if dataset != spec.dataset:
        for key in (*_OWN_QUESTIONS, "limit"):
            data.pop(key, None)
        if limit is not None:
            data["limit"] = limit
    return data


def tested_findings(result: Any) -> list[dict[str, Any]]:
    """One record per finding a finished sweep states, in order: ``finding`` (its index), ``name``, ``n``, ``delta``,
    ``lo``, ``hi``, ``test``, ``n_better``, ``n_worse``, ``p`` (the claim's own, uncorrected), ``differences`` (over
    the questions the claim is tested on, :func:`~rag_lab.experiments.engine.findings.claim_qids`) and, for a
    no-change claim, ``p_difference`` (the two-sided paired test of the same difference)."""
    import numpy as np

    from rag_lab.experiments.engine.findings import claim_qids, sweep_findings
    from rag_lab.stats.power import paired_differences
    from rag_lab.stats.significance import paired_test

    claims = list((result.spec or {}).get("findings") or [])
    if any(c.get("over") == "pairs" for c in claims):
        raise ConfigError("a finding over pairs is re-run with the sweep of its other half, not on its own")
    tested = set(claim_qids(result))
    kept = np.array([q in tested for q in result.qids], dtype=bool)
    records = []
    for index, (claim, found) in enumerate(zip(claims, sweep_findings(result), strict=True)):
        values, reference = result.paired_values(found.metric, found.candidate_config, found.reference_config)
        values, reference = values[kept], reference[kept]
        record: dict[str, Any] = {"finding": index, "name": claim.get("name", ""), "n": found.n,
                                  "delta": found.delta, "lo": found.lo, "hi": found.hi, "test": found.method,
                                  "n_better": found.n_better, "n_worse": found.n_worse, "p": found.p,
                                  "differences": paired_differences(values, reference)._asdict()}
        if found.direction == "none":
            record["p_difference"] = paired_test(values, reference).p
        records.append(record)
    return records


def rerun_findings(
    sweep: SweepSpec | Mapping[str, Any] | str | Path,
    datasets: Sequence[str],
    seeds: Sequence[int],
    work_dir: str | Path,
    limit: int | None = None,
    on_cell: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run ``sweep`` on each of ``datasets`` × ``seeds`` (:func:`cell_spec`; each cell's run kept in
    ``work_dir/<cell name>`` and resumed) and test its declared findings there: the records of
    :func:`tested_findings`, each with its ``dataset`` and ``seed`` (after ``finding`` and ``name``), cell by cell
    in that order. ``on_cell(record)`` is called with each record as its cell finishes."""
    from rag_lab.experiments.sweep_runner import run_sweep

    spec = load_sweep_spec(sweep)
    if not spec.findings:
        raise ConfigError(f"sweep {spec.name!r} states no findings to re-run (findings:)")
    if not datasets or not seeds:
        raise ConfigError("a re-run needs at least one dataset and one seed")
    records = []
    for dataset in datasets:
        for seed in seeds:
            cell = cell_spec(spec, dataset, seed, limit)
            result = run_sweep(cell, Path(work_dir) / cell["name"], progress="quiet", overwrite=True)
            for found in tested_findings(result):
                record = {"finding": found.pop("finding"), "name": found.pop("name"), "dataset": dataset,
                          "seed": seed, **found}
                records.append(record)
                if on_cell is not None:
                    on_cell(record)
    return records
