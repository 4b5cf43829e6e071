"""Reading a sweep the way a lesson does: configurations by name, labelled tables, means by question type,
the question where two configurations differ most, several metrics' paired differences at once, and a
paired difference across two sweeps run on the same questions. Each is one call in a notebook, so the
notebook declares, runs and asserts while the package computes. These are the helpers several lessons share;
a helper only one lesson uses lives in that lesson's module (:mod:`lessons.budget_disclosure` for
notebook 02, :mod:`lessons.hyde` for 04, …, :mod:`lessons.real_model` for 16).

Every candidate is picked as in :meth:`SweepResult.reference` (a candidate/config id, or a dict of dotted
keys matching exactly one configuration)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.pipeline.answer import Result
from rag_lab.pipeline.interventions import Intervention
from rag_lab.pipeline.trace import StepKind
from rag_lab.stats.paired import interval_text
from rag_lab.stats.significance import PairedTest, paired_test

Pick = str | Mapping[str, Any]


def named(result: SweepResult, picks: Mapping[str, Pick]) -> dict[str, str]:
    """``{name: candidate_id}`` for each named configuration of ``result``."""
    return {name: result.reference(pick)["candidate_id"] for name, pick in picks.items()}


def along(result: SweepResult, key: str | Sequence[str], fixed: Mapping[str, Any] | None = None) -> dict[Any, str]:
    """``{value: candidate_id}`` for each value the grid gives ``key`` (in table order), the other keys held at
    ``fixed`` — e.g. every refusal threshold at a cap of 10 citations. With several keys, ``{(value, …):
    candidate_id}`` for each combination of their values the table holds. A configuration the grid leaves a
    key unset for (a one-at-a-time grid) is not along it. Each combination with ``fixed`` must pick exactly
    one configuration (as :meth:`SweepResult.reference` requires)."""
    keys = [key] if isinstance(key, str) else list(key)
    missing = [k for k in keys if f"param_{k}" not in result.table.columns]
    if missing or not keys:
        raise KeyError(f"the sweep's grid does not set {missing or keys} (grid keys: {result.param_columns})")
    table = result.table.dropna(subset=[f"param_{k}" for k in keys])
    combos = list(dict.fromkeys(zip(*(table[f"param_{k}"].tolist() for k in keys), strict=True)))
    out = {combo: result.reference({**dict(zip(keys, combo, strict=True)), **(fixed or {})})["candidate_id"]
           for combo in combos}
    return {combo[0]: cid for combo, cid in out.items()} if isinstance(key, str) else out


def _names(result: SweepResult, names: Mapping[str, str] | None) -> dict[str, str]:
    """``{candidate_id: name}`` from ``names`` (``{name: candidate_id}``, as :func:`named` gives), or every
    run labelled by the parameters that differ from the base config."""
    return {cid: name for name, cid in names.items()} if names is not None else result.labels()


def labelled_table(result: SweepResult, columns: Iterable[str], names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The sweep's table with a ``label`` column first, then ``columns`` (``M±`` expands to ``M, M_lo, M_hi``).
    ``names`` (``{name: candidate_id}``) keeps only the named configurations, in table order, labelled by
    name; without it every configuration is labelled by the parameters that differ from the base config."""
    labels = _names(result, names)
    table = result.table[result.table["candidate_id"].isin(labels)]
    wanted: list[str] = []
    for c in columns:
        wanted += [c[:-1], f"{c[:-1]}_lo", f"{c[:-1]}_hi"] if c.endswith("±") else [c]
    missing = [c for c in wanted if c not in table.columns]
    if missing:
        raise KeyError(f"no column {missing} in the sweep's table (columns: {list(table.columns)})")
    return table.assign(label=table["candidate_id"].map(labels))[["label", *wanted]].reset_index(drop=True)


def group_means(result: SweepResult, metrics: str | Iterable[str], names: Mapping[str, str] | None = None,
                by: str | Mapping[str, Any] = "type") -> pd.DataFrame:
    """The mean of each metric per group of questions (rows) for each configuration (columns, by name; with
    several metrics, columns (metric, name)). ``by`` is a rows column (default the question type) or a
    mapping qid → group."""
    one = isinstance(metrics, str)
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    frames = {}
    for cid, name in _names(result, names).items():
        rows = result.rows(cid)
        key = rows["qid"].map(by) if isinstance(by, Mapping) else rows[by]
        frames[name] = rows.groupby(key.rename(by if isinstance(by, str) else "group"))[metrics].mean()
    out = pd.concat({m: pd.DataFrame({name: frame[m] for name, frame in frames.items()}) for m in metrics}, axis=1)
    return out[metrics[0]] if one else out


def value_counts(result: SweepResult, column: str, names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """How often each value of ``column`` (e.g. ``stop_reason``, ``route``) occurs, per configuration."""
    return pd.DataFrame({name: result.rows(cid)[column].value_counts()
                         for cid, name in _names(result, names).items()}).fillna(0).astype(int)


def trace_contrast(result: SweepResult, names: Mapping[str, str], qid: str, clip: int = 100,
                   steps: Iterable[str] | None = None) -> pd.DataFrame:
    """One question's traces under each named configuration (``{name: candidate_id}``), step by step (only
    the step kinds in ``steps``, when given): the step, its round, queries, retrieved chunks, round yield,
    decision, knobs fired, interventions and the raw LLM output (clipped to ``clip`` characters); then a
    ``result`` row with the status and the answer."""
    records = []
    kinds = set(steps) if steps is not None else None
    for name, cid in names.items():
        trace, res = result.traces(cid)[qid], result.result(cid, qid)
        for s in trace.steps:
            if kinds is not None and s.kind not in kinds:
                continue
            decision = s.decision or {}
            records.append({"config": name, "step": s.kind, "round": s.round, "queries": " | ".join(s.queries),
                            "retrieved": ", ".join(s.retrieved), "yield": s.round_yield,
                            "decision": decision.get("action", decision.get("route", decision.get("verdict", ""))),
                            "knobs fired": ", ".join(s.knobs), "interventions": "; ".join(s.interventions),
                            "LLM output": (s.llm.raw_output[:clip] if s.llm is not None else "")})
        records.append({"config": name, "step": "result", "decision": res.status, "LLM output": res.answer[:clip],
                        "interventions": f"stop {res.stop_reason}, {res.rounds_used} round(s)"})
    return pd.DataFrame(records).astype(object).fillna("").set_index(["config", "step"])


def with_intervention(result: SweepResult, candidate: Pick, code: Intervention, kind: StepKind | None = None) -> list[str]:
    """The questions (in question order) whose trace under ``candidate`` records an intervention with
    ``code`` (on a step of ``kind``, when given)."""
    traces = result.traces(result.reference(candidate)["candidate_id"])
    return [q for q in result.qids if q in traces and traces[q].has(code, kind=kind)]


def intervention_texts(result: SweepResult, candidate: Pick, code: Intervention) -> dict[str, list[str]]:
    """``{qid: texts}`` of the interventions recorded with ``code`` under ``candidate``, for the questions
    (in question order) that have any."""
    traces = result.traces(result.reference(candidate)["candidate_id"])
    found = {q: traces[q].intervention_texts(code) for q in result.qids if q in traces}
    return {q: texts for q, texts in found.items() if texts}


def contrast_question(result: SweepResult, candidate: Pick, reference: Pick,
                      weights: Mapping[str, float] | str) -> str:
    """The question on which ``candidate`` and ``reference`` differ most: the largest Σ weight·|Δ metric|
    (undefined values count as 0; a non-numeric column, e.g. ``status``, counts 1 where it differs;
    ``weights`` may be one column name), the first in question order on a tie — so with a 0/1 metric or a
    status, the first question where the two differ, or the first question when none does."""
    weights = {weights: 1.0} if isinstance(weights, str) else dict(weights)
    if not weights:
        raise ConfigError("contrast_question needs at least one metric to weigh")
    a = result.rows(result.reference(candidate)["candidate_id"]).set_index("qid")
    b = result.rows(result.reference(reference)["candidate_id"]).set_index("qid").reindex(a.index)
    score = sum(w * _gap(a[m], b[m]) for m, w in weights.items())
    return str(score.idxmax())


def _gap(a: pd.Series, b: pd.Series) -> pd.Series:
    """|a − b| per question for numbers (undefined as 0); 1 where they differ, else 0, for anything else."""
    if a.dtype.kind in "fiub" and b.dtype.kind in "fiub":
        return (a.astype(float).fillna(0) - b.astype(float).fillna(0)).abs()
    return a.ne(b).astype(float)


def differing(result: SweepResult, candidate: Pick, reference: Pick, column: str) -> list[str]:
    """The questions (in question order) whose ``column`` differs between the two configurations."""
    a = result.rows(result.reference(candidate)["candidate_id"]).set_index("qid")[column]
    b = result.rows(result.reference(reference)["candidate_id"]).set_index("qid")[column].reindex(a.index)
    if a.dtype.kind in "fiub":
        a, b = a.astype(float).fillna(0), b.astype(float).fillna(0)
    return [str(q) for q in a.index[a.ne(b)]]


def per_question(result: SweepResult, candidate: Pick, read: Callable[[Result], Any] | str) -> pd.Series:
    """``read`` of each question's pipeline result under ``candidate``, indexed by qid in question order:
    a function of the :class:`~rag_lab.pipeline.answer.Result` (e.g.
    :func:`~rag_lab.evaluation.trace_facts.best_context_score`) or the name of one of its fields
    (e.g. ``"invalid_citations"``)."""
    if isinstance(read, str):
        if read not in Result.model_fields:
            raise KeyError(f"a pipeline result has no field {read!r} (fields: {list(Result.model_fields)})")
        read = operator.attrgetter(read)
    cid = result.reference(candidate)["candidate_id"]
    return pd.Series({q: read(result.result(cid, q)) for q in result.qids}, dtype=object).infer_objects().rename_axis("qid")


def interval_table(result: SweepResult, metrics: Iterable[str], reference: Pick | None = None) -> pd.DataFrame:
    """Every configuration but the reference (rows, by label) against it, one column per metric: the paired
    ``Δ [lo, hi]`` (:func:`~rag_lab.stats.paired.interval_text`) and its exact / permutation p."""
    out: dict[str, pd.Series] = {}
    for metric in metrics:
        cmp = result.compare(metric, reference=reference)
        cmp = cmp[~cmp["is_reference"]].set_index("label")
        out[metric] = cmp.apply(lambda r: f"{interval_text(r)} p={r['p']:.3g}", axis=1)
    return pd.DataFrame(out).rename_axis(index="against the reference")


def paired_summary(result: SweepResult, metrics: Iterable[str], candidate: Pick, reference: Pick | None = None,
                   n_boot: int = 2000) -> pd.DataFrame:
    """``candidate`` against ``reference`` on each metric (rows): both means, the relative change, the paired
    ``Δ [lo, hi]``, questions better / worse and the paired test's p (uncorrected: a notebook's asserted
    findings carry the Holm-corrected one)."""
    rows = []
    for metric in metrics:
        values, ref = result.paired_values(metric, candidate, reference)
        rows.append(_summary_row(metric, paired_test(values, ref, n_boot=n_boot)))
    return pd.DataFrame(rows).set_index("metric")


def _summary_row(metric: str, test: PairedTest) -> dict[str, Any]:
    d = test.difference
    relative = (d.mean - d.reference_mean) / d.reference_mean if d.reference_mean else np.nan
    return {"metric": metric, "candidate": round(d.mean, 3), "reference": round(d.reference_mean, 3),
            "relative": f"{relative:+.0%}" if relative == relative else "–", "delta": d.delta,
            "Δ [lo, hi]": interval_text(d._asdict()),
            "better": test.n_better, "worse": test.n_worse, "n": d.n, "p": test.p}


def paired_across(result: SweepResult, candidate: Pick, other: SweepResult, reference: Pick, metric: str,
                  n_boot: int = 2000) -> PairedTest:
    """The paired test of ``metric`` between ``candidate`` in ``result`` and ``reference`` in ``other``, two
    sweeps run on the same questions (paired by question id, seeds averaged within a question). Two sweeps
    over different questions are an error, not a silent partial pairing."""
    if list(result.qids) != list(other.qids):
        only = sorted(set(result.qids) ^ set(other.qids))
        raise ConfigError(f"the two sweeps ran different questions ({len(only)} not in both, e.g. {only[:3]}): "
                         "a paired difference needs the same questions")
    values, _ = result.paired_values(metric, candidate, candidate)
    ref, _ = other.paired_values(metric, reference, reference)
    return paired_test(values, ref, n_boot=n_boot)


def across_summary(result: SweepResult, candidate: Pick, other: SweepResult, reference: Pick,
                   metrics: Iterable[str]) -> pd.DataFrame:
    """:func:`paired_summary` for a candidate of one sweep against a reference of another (:func:`paired_across`)."""
    return pd.DataFrame([_summary_row(m, paired_across(result, candidate, other, reference, m))
                         for m in metrics]).set_index("metric")


def means(result: SweepResult, names: Mapping[str, str], metrics: Iterable[str]) -> pd.DataFrame:
    """The sweep table's mean of each metric (columns) for each named configuration (rows, by name, in the
    order of ``names``)."""
    table = result.table.set_index("candidate_id")
    metrics = list(metrics)
    return pd.DataFrame({name: table.loc[cid, metrics] for name, cid in names.items()}).T.rename_axis("configuration")


def paired_blocks(result: SweepResult, metrics: Iterable[str], pairs: Mapping[str, tuple[Pick, Pick]]) -> pd.DataFrame:
    """:func:`paired_summary` for several named (candidate, reference) pairs, one block of rows per name."""
    metrics = list(metrics)
    return pd.concat({name: paired_summary(result, metrics, cand, ref) for name, (cand, ref) in pairs.items()})


def group_share(result: SweepResult, candidate: Pick, column: str, value: Any, by: str = "type") -> pd.Series:
    """The share of each group's questions (default: by question type) whose ``column`` equals ``value``
    under ``candidate`` (e.g. the share routed COMPLEX)."""
    rows = result.rows(result.reference(candidate)["candidate_id"])
    return (rows[column] == value).groupby(rows[by]).mean()


def gold_ids(gold: Any, qid: str) -> Iterable[str]:
    """The gold doc ids of ``qid`` from ``gold`` (qid → ids, or qid → a question carrying them, as an
    :class:`~rag_lab.records.EvalSet` holds), as lessons 08 and 15 read them."""
    entry = gold[qid]
    return getattr(entry, "gold_doc_ids", entry)


def stacked_tables(sweeps: Mapping[str, SweepResult], columns: Iterable[str], key: str = "sweep") -> pd.DataFrame:
    """:func:`labelled_table` of several sweeps, one under the other, with a first ``key`` column naming the sweep."""
    columns = list(columns)
    out = pd.concat([labelled_table(s, columns).assign(**{key: name}) for name, s in sweeps.items()], ignore_index=True)
    return out[[key, *[c for c in out.columns if c != key]]]


