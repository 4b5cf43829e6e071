"""Verify a simulated sweep on a real backend (:func:`run_verify`, ``rag-lab verify``): re-run its best candidates
(:func:`select_candidates`: the Pareto front of LLM calls vs strict containment, or the best by a metric) on the
real model, on the same questions, into a sibling sweep ``RUN_DIR/verify/<backend>-<id>/`` that is kill-safe and
resumable like any sweep, and measure how far the simulator was from it (:func:`compare`: per candidate and
metric the paired gap real − simulated, Kendall's τ-b between the two rankings with a bootstrap interval, and
whether the simulated winner is on the real front). The method: docs/simulate-then-verify.md."""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rag_lab.errors import ConfigError
from rag_lab.evaluation.catalog import DEFAULT_COST, DEFAULT_QUALITY, label, lower_is_better
from rag_lab.evaluation.families import is_cost, metric_columns
from rag_lab.experiments.engine.grid import short_hash
from rag_lab.experiments.engine.resolved_sweep import ResolvedSweep, backend_identity
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.experiments.engine.store import RUN_FILE
from rag_lab.experiments.engine.sweep import BackendSpec, SweepSpec
from rag_lab.experiments.sweep_runner import load_sweep, run_sweep
from rag_lab.llm.factory import BACKENDS
from rag_lab.llm.sim.profile import is_profile_file
from rag_lab.loaders import load_dataset
from rag_lab.stats.paired import interval_text, paired_difference
from rag_lab.stats.rank import nan_quiet, rank_agreement
from rag_lab.stats.summary import ELIGIBLE_COL, pareto_mask

#: The folder of a run directory that holds its verifications, one sweep per backend and selection.
VERIFY_DIR = "verify"
#: The file in a verification folder that records how its candidates were chosen (order, reasons, ``by``).
SELECTION_FILE = "selection.json"
#: Metrics compared, those present in both runs, in this order.
VERIFY_METRICS = (
    DEFAULT_QUALITY, "quality_answer_containment", "quality_f1", "quality_has_answer_in_context",
    "quality_abstention_accuracy", "quality_refused", "quality_fallback", "quality_echo",
    DEFAULT_COST, "cost_rounds", "cost_tokens",
)
DEFAULT_TOP = 4


# --- choosing the candidates ------------------------------------------------------------------------


def config_table(sim: SweepResult) -> pd.DataFrame:
    """One row per config of the simulated sweep, in table order: ``config_id``, ``candidate_ids`` (its
    seeds' runs), ``params`` and every numeric column averaged over its seeds. A search's candidates that a
    race dropped or that break a constraint (``is_eligible`` false) are left out: they are never verified."""
    table = sim.table
    if ELIGIBLE_COL in table.columns:
        table = table[table[ELIGIBLE_COL].astype(bool)]
    numeric = metric_columns(table.columns)
    grouped = table.groupby("config_id", sort=False)
    out = grouped[numeric].mean().reset_index()
    out["candidate_ids"] = [list(grouped.get_group(k)["candidate_id"]) for k in out["config_id"]]
    params = {c["config_id"]: c["params"] for c in sim.store.candidates()}
    out["params"] = [params[k] for k in out["config_id"]]
    return out


def select_candidates(sim: SweepResult, top: int = DEFAULT_TOP, by: str | None = None) -> pd.DataFrame:
    """The configs to verify (see the module doc), best first: the config table's rows with ``reason``
    (``pareto front`` or ``best by <metric>``); the first row is the simulated winner."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ConfigError(f"--top must be a positive integer, got {top!r}")
    configs = config_table(sim)
    rank_by = by or DEFAULT_QUALITY
    for col in (rank_by, DEFAULT_COST):
        if col not in configs.columns:
            known = sorted(metric_columns(configs.columns))
            raise ConfigError(f"{sim.run_dir}: no metric {col!r} in the sweep (metrics: {known})")
    sign = 1.0 if lower_is_better(rank_by) else -1.0
    ranked = configs.assign(_key=sign * configs[rank_by].astype(float), _cost=configs[DEFAULT_COST].astype(float),
                            _pos=range(len(configs)),   # best first: then the cheaper, then the earlier
                            _front=pareto_mask(configs[DEFAULT_COST], configs[DEFAULT_QUALITY]) if by is None else False
                            ).sort_values(["_key", "_cost", "_pos"], na_position="last")
    if by is None:
        chosen = pd.concat([ranked[ranked["_front"]].assign(reason="pareto front"),
                            ranked[~ranked["_front"]].assign(reason=f"best of the rest by {rank_by}")]).head(top)
    else:
        chosen = ranked.head(top).assign(reason=f"best by {rank_by}")
    return chosen.drop(columns=["_key", "_cost", "_pos", "_front"]).reset_index(drop=True)


# --- the verification sweep -------------------------------------------------------------------------


def _slug(backend: BackendSpec) -> str:
    if BACKENDS[backend.kind].simulated:
        what = Path(backend.profile).stem if is_profile_file(backend.profile) else backend.profile
    else:
        what = Path(backend.model).stem if backend.model else "default"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{backend.kind}-{what}").strip("-")[:48]


def verify_spec(sim: SweepResult, backend: BackendSpec, chosen: pd.DataFrame, questions: int | None = None) -> SweepSpec:
    """The sweep that re-runs ``chosen`` (rows of :func:`select_candidates`) on ``backend`` over the first
    ``questions`` questions of ``sim`` (all when None): the same data and base config, a grid of exactly the
    chosen candidates, one seed (the simulated sweep's first)."""
    if questions is not None and (isinstance(questions, bool) or not isinstance(questions, int) or questions < 1):
        raise ConfigError(f"--questions must be a positive integer, got {questions!r}")
    spec = sim.spec
    limit = spec.get("limit")
    if questions is not None:
        limit = questions if limit is None else min(limit, questions)
    grid = [{k: [v] for k, v in params.items()} for params in chosen["params"]]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{spec['name']}-verify")[:80]
    return SweepSpec.from_dict({
        "name": name, "dataset": spec["dataset"], "split": spec.get("split"), "types": spec.get("types"),
        "per_type": spec.get("per_type"), "limit": limit, "base": sim.description["base_config"], "grid": grid,
        "backend": backend.model_dump(), "seeds": [spec["seeds"][0]],
    })


def verify_run_dir(sim: SweepResult, spec: SweepSpec) -> Path:
    """``RUN_DIR/verify/<backend>-<short hash of the verification>``: one folder per backend and selection."""
    ident = short_hash({"backend": backend_identity(spec.backend), "grid": spec.grid, "limit": spec.limit}, length=8)
    return Path(sim.run_dir) / VERIFY_DIR / f"{_slug(spec.backend)}-{ident}"


def run_verify(
    run_dir: str | Path,
    backend: BackendSpec,
    top: int = DEFAULT_TOP,
    by: str | None = None,
    questions: int | None = None,
    workers: int = 1,
    progress: str = "auto",
) -> Verification:
    """Choose the candidates of the simulated sweep in ``run_dir``, run them on ``backend`` into
    :func:`verify_run_dir` (resuming what is there) and compare (see the module doc). ``workers > 1``
    runs questions on threads (for network backends)."""
    sim = load_sweep(run_dir)
    if not sim.complete:
        raise ConfigError(f"{run_dir}: the simulated sweep is not complete; finish it (rag-lab sweep) before verifying")
    chosen = select_candidates(sim, top=top, by=by)
    spec = verify_spec(sim, backend, chosen, questions)
    resolved = ResolvedSweep.build(spec, load_dataset(spec.dataset).evalset)
    expected = sim.qids[: len(resolved.qids)]
    if list(resolved.qids) != expected or {r.config_id for r in resolved.runs} != set(chosen["config_id"]):
        raise ConfigError(f"{run_dir}: the verification does not reproduce the sweep's questions or configs "
                          "(was the dataset or the code changed since the sweep ran?)")
    out_dir = verify_run_dir(sim, spec)
    out_dir.mkdir(parents=True, exist_ok=True)
    selection = {"by": by or DEFAULT_QUALITY, "top": top, "questions": len(resolved.qids),
                 "chosen": [{"config_id": k, "reason": r} for k, r in zip(chosen["config_id"], chosen["reason"],
                                                                           strict=True)]}
    (out_dir / SELECTION_FILE).write_text(json.dumps(selection, indent=1) + "\n", encoding="utf-8")
    real = run_sweep(spec, out_dir, workers=workers, executor="threads" if workers > 1 else "serial",
                     progress=progress)
    return compare(sim, real, by=by or DEFAULT_QUALITY, chosen=chosen)


def verification_dirs(run_dir: str | Path) -> list[Path]:
    """The verification sweeps stored in ``run_dir`` (folders of ``RUN_DIR/verify`` with a ``run.sqlite``)."""
    root = Path(run_dir) / VERIFY_DIR
    return sorted(p for p in root.iterdir() if (p / RUN_FILE).is_file()) if root.is_dir() else []


def load_verifications(run_dir: str | Path, sim: SweepResult | None = None) -> list[Verification]:
    """Every verification of the sweep in ``run_dir``, compared again from the stored rows. A verification
    left over from another sweep in the same directory (one replaced with ``--force``) is skipped with a
    warning."""
    dirs = verification_dirs(run_dir)
    if not dirs:
        return []
    sim = sim if sim is not None else load_sweep(run_dir)
    configs = config_table(sim).set_index("config_id", drop=False)
    out = []
    for d in dirs:
        selection = json.loads((d / SELECTION_FILE).read_text(encoding="utf-8")) if (d / SELECTION_FILE).is_file() else {}
        chosen = None
        if selection.get("chosen") and all(c["config_id"] in configs.index for c in selection["chosen"]):
            chosen = configs.loc[[c["config_id"] for c in selection["chosen"]]]
            chosen = chosen.assign(reason=[c["reason"] for c in selection["chosen"]]).reset_index(drop=True)
        try:
            out.append(compare(sim, load_sweep(d), by=selection.get("by", DEFAULT_QUALITY), chosen=chosen))
        except (ConfigError, KeyError) as exc:
            warnings.warn(f"{d}: skipped, not a verification of this sweep ({exc})", stacklevel=2)
    return out


# --- the comparison ---------------------------------------------------------------------------------


@dataclass
class Verification:
    """Simulated vs real for the verified candidates (see the module doc).

    ``candidates``: one row per config, simulated winner first — ``config_id``, ``label`` (parameters that
    differ from the base), ``sim_candidate_ids``, ``real_candidate_id``, ``real_n`` (questions the real run
    finished). ``gaps``: one row per candidate and metric — ``sim``, ``real``, ``delta`` (real − sim), ``lo``,
    ``hi``, ``n``; ``candidate`` is ``all`` for the mean over the candidates. ``ranks``: one row per ranking
    metric — ``tau`` with ``lo``/``hi`` and ``defined`` (share of bootstrap resamples where τ exists: it does
    not when every candidate ties on one side). ``winner`` is the simulated winner's config id, ``real_front``
    the config ids on the real Pareto front and ``winner_on_real_front`` whether it is among them."""

    run_dir: Path
    backend: dict[str, Any]
    qids: list[str]
    by: str
    candidates: pd.DataFrame
    gaps: pd.DataFrame
    ranks: pd.DataFrame
    winner: str
    real_front: list[str]
    real_winner: str | None
    complete: bool
    notes: list[str] = field(default_factory=list)

    @property
    def labels(self) -> dict[str, str]:
        """Each verified config id → its label (the parameters it changes from the base)."""
        return dict(zip(self.candidates["config_id"], self.candidates["label"], strict=True))

    @property
    def winner_on_real_front(self) -> bool:
        return self.winner in self.real_front

    def describe_backend(self) -> str:
        b = self.backend
        if b.get("kind") == "sim":
            return f"sim (profile {b.get('profile', {}).get('name', '?')})"
        return f"{b.get('kind')} {b.get('model') or ''}".strip()

    def to_dict(self) -> dict[str, Any]:
        return {"verify_dir": str(self.run_dir), "backend": self.backend, "questions": len(self.qids), "by": self.by,
                "complete": self.complete, "winner": self.winner, "real_winner": self.real_winner,
                "real_front": self.real_front, "winner_on_real_front": self.winner_on_real_front,
                "candidates": _records(self.candidates), "gaps": _records(self.gaps), "ranks": _records(self.ranks),
                "notes": self.notes}

    def text(self) -> str:
        """The printed comparison: candidates, per-metric gaps, rank agreement and the winner's fate."""
        labels = self.labels
        lines = [f"verified on {self.describe_backend()}: {len(self.candidates)} candidates × {len(self.qids)} "
                 f"questions of the simulated sweep ({self.run_dir})" + ("" if self.complete else " — INCOMPLETE"),
                 "candidates (simulated winner first):"]
        for _, c in self.candidates.iterrows():
            lines.append(f"  {c['config_id']}  {c['label']}  [{c['reason']}]")
        lines.append("per metric, mean over the candidates: real − simulated, paired over the same questions (95%):")
        lines.append(f"  {'metric':44s} {'sim':>9s} {'real':>9s}  {'real − sim [interval]':>30s} {'n':>4s}")
        for _, g in self.gaps[self.gaps["candidate"] == "all"].iterrows():
            lines.append(f"  {label(g['metric'])[:44]:44s} {_num(g['sim']):>9s} {_num(g['real']):>9s}  "
                         f"{_gap(g):>30s} {int(g['n']):4d}")
        for metric in dict.fromkeys([self.by, DEFAULT_QUALITY, DEFAULT_COST]):
            rows = self.gaps[(self.gaps["metric"] == metric) & (self.gaps["candidate"] != "all")]
            if rows.empty:
                continue
            lines.append(f"per candidate, {label(metric)}:")
            for _, g in rows.iterrows():
                lines.append(f"  {labels[g['candidate']][:44]:44s} {_num(g['sim']):>9s} {_num(g['real']):>9s}  "
                             f"{_gap(g):>30s} {int(g['n']):4d}")
        for _, r in self.ranks.iterrows():
            lines.append(f"rank agreement on {label(r['metric'])}: Kendall τ = {tau_text(r)} over {len(self.candidates)} "
                         f"candidates (bootstrap over questions; τ defined in {r['defined']:.0%} of resamples)")
        fate = "is" if self.winner_on_real_front else "is NOT"
        lines.append(f"simulated winner {labels[self.winner]} ({self.winner}) {fate} on the real Pareto front of "
                     f"{DEFAULT_COST} vs {DEFAULT_QUALITY}; real front: "
                     + ", ".join(labels[c] for c in self.real_front)
                     + (f"; real winner: {labels[self.real_winner]}" if self.real_winner else ""))
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _num(value: Any) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def _gap(row: pd.Series) -> str:
    return interval_text(row, missing="-")


def tau_text(row: pd.Series) -> str:
    """A rank-agreement row's Kendall τ with its interval, or why it is undefined."""
    tau = "undefined (ties)" if pd.isna(row["tau"]) else f"{row['tau']:+.3f}"
    return tau + ("" if pd.isna(row["lo"]) else f" [{row['lo']:+.3f}, {row['hi']:+.3f}]")


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            for row in frame.to_dict(orient="records")]


def _values(result: SweepResult, candidate_ids: Sequence[str], qids: Sequence[str], metric: str) -> np.ndarray:
    """``metric`` per question of ``qids``, averaged over the runs (seeds) ``candidate_ids``; NaN where undefined."""
    with nan_quiet():
        return np.nanmean(result.metric_matrix(candidate_ids, metric, qids), axis=1)


def compare(sim: SweepResult, real: SweepResult, by: str = DEFAULT_QUALITY, chosen: pd.DataFrame | None = None,
            n_boot: int = 2000, seed: int = 0) -> Verification:
    """Compare the verification sweep ``real`` with the simulated sweep ``sim`` it re-ran (module doc)."""
    sim_configs = config_table(sim).set_index("config_id", drop=False)
    real_cands = {c["config_id"]: c["candidate_id"] for c in real.store.candidates()}
    missing = [k for k in real_cands if k not in sim_configs.index]
    if missing:
        raise ConfigError(f"{real.run_dir}: configs {missing} are not in the simulated sweep {sim.run_dir}")
    if list(real.qids) != list(sim.qids[: len(real.qids)]):
        raise ConfigError(f"{real.run_dir}: its questions are not the first {len(real.qids)} of the simulated sweep "
                          f"{sim.run_dir}")
    if chosen is None:  # re-read: the simulated winner first, then the real sweep's order
        ranked = select_candidates(sim, top=len(sim_configs), by=None if by == DEFAULT_QUALITY else by)
        chosen = ranked[ranked["config_id"].isin(real_cands)].reset_index(drop=True)
    config_ids = list(chosen["config_id"])
    qids = list(real.qids)
    done = {k: set(real.store.qids(real_cands[k])) for k in config_ids}
    finished = [q for q in qids if all(q in done[k] for k in config_ids)]
    labels = sim.labels()
    candidates = pd.DataFrame({
        "config_id": config_ids,
        "label": [labels[sim_configs.loc[k, "candidate_ids"][0]] for k in config_ids],
        "reason": list(chosen["reason"]),
        "sim_candidate_ids": [sim_configs.loc[k, "candidate_ids"] for k in config_ids],
        "real_candidate_id": [real_cands[k] for k in config_ids],
        "real_n": [len(done[k]) for k in config_ids],
    })
    first_sim = sim.store.rows(sim_configs.loc[config_ids[0], "candidate_ids"][0])
    first_real = real.store.rows(real_cands[config_ids[0]])
    some_sim = next(iter(first_sim.values()), {})
    some_real = next(iter(first_real.values()), {})
    metrics = [m for m in dict.fromkeys([*VERIFY_METRICS, by])
               if is_cost(m) or (m in some_sim and m in some_real)]
    gap_rows, matrices = [], {}
    for metric in metrics:
        s = np.column_stack([_values(sim, sim_configs.loc[k, "candidate_ids"], finished, metric) for k in config_ids])
        r = np.column_stack([_values(real, [real_cands[k]], finished, metric) for k in config_ids])
        matrices[metric] = (s, r)
        for j, k in enumerate(config_ids):
            d = paired_difference(r[:, j], s[:, j], n_boot=n_boot, seed=seed)
            gap_rows.append({"metric": metric, "candidate": k, "sim": d.reference_mean, "real": d.mean,
                             "delta": d.delta, "lo": d.lo, "hi": d.hi, "n": d.n})
        with nan_quiet():
            d = paired_difference(np.nanmean(r, axis=1), np.nanmean(s, axis=1), n_boot=n_boot, seed=seed)
        gap_rows.append({"metric": metric, "candidate": "all", "sim": d.reference_mean, "real": d.mean,
                         "delta": d.delta, "lo": d.lo, "hi": d.hi, "n": d.n})
    gaps = pd.DataFrame(gap_rows, columns=["metric", "candidate", "sim", "real", "delta", "lo", "hi", "n"])

    rank_rows = []
    for metric in dict.fromkeys([by, DEFAULT_QUALITY, DEFAULT_COST]):
        if metric in matrices:
            tau, lo, hi, defined = rank_agreement(*matrices[metric], n_boot=min(n_boot, 1000), seed=seed)
            rank_rows.append({"metric": metric, "tau": tau, "lo": lo, "hi": hi, "defined": defined})
    ranks = pd.DataFrame(rank_rows, columns=["metric", "tau", "lo", "hi", "defined"])

    real_front: list[str] = []
    real_winner = None
    notes = []
    if DEFAULT_QUALITY in matrices:
        with nan_quiet():
            real_q = np.nanmean(matrices[DEFAULT_QUALITY][1], axis=0)
            real_c = np.nanmean(matrices[DEFAULT_COST][1], axis=0)
        mask = pareto_mask(real_c, real_q)
        real_front = [k for k, on in zip(config_ids, mask, strict=True) if on]
        order = sorted(range(len(config_ids)), key=lambda j: (-np.nan_to_num(real_q[j], nan=-np.inf), real_c[j], j))
        real_winner = config_ids[order[0]] if not np.all(np.isnan(real_q)) else None
    if len(config_ids) < 3:
        notes.append(f"only {len(config_ids)} candidates: a rank agreement needs 3 or more to say much")
    if len(finished) < len(qids):
        notes.append(f"the real run finished {len(finished)} of {len(qids)} questions for every candidate; "
                     "the comparison uses those (run verify again to resume)")
    return Verification(run_dir=Path(real.run_dir), backend=real.description.get("backend", {}), qids=finished, by=by,
                        candidates=candidates, gaps=gaps, ranks=ranks, winner=config_ids[0], real_front=real_front,
                        real_winner=real_winner, complete=real.complete, notes=notes)
