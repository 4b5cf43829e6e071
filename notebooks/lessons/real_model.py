"""Notebook 16's own code: the recorded real model beside its simulator twin, the prompt sets on the recorded
model (``sweeps/real_qwen_hotpotqa_v2.yaml``), the controller's actions, the checked findings and the answers of
several runs side by side, and the live model behind the explorer. (The lesson's claims are
declared in the notebook, with their kind, where the course test reads them.)"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import pandas as pd

from lessons.contrasts import Pick, labelled_table, paired_blocks, stacked_tables
from rag_lab.experiments.engine.findings import Finding
from rag_lab.experiments.engine.results import SweepResult
from rag_lab.llm.base import LLMBackend
from rag_lab.llm.schemas import CONTROLLER_ACTIONS

__all__ = ["GUARD_STUDY", "GuardStudy", "POLICY_PAIRS", "STUDY", "V1", "answers_table", "controller_actions",
           "findings_table", "guard_study", "live_backend", "policy_pairs", "prompt_set_tables", "side_by_side",
           "study_findings", "study_summary", "study_table"]

#: The original prompt set, a candidate of the v2 sweep (whose base speaks v2).
V1 = {"prompts.version": "v1"}
_STRICT, _CALLS = "quality_answer_containment_strict", "cost_llm_calls"


#: The v1 sweep's policies, each against its base (router off, round cap 3, rank-then-truncate, CRAG lower 0.2).
POLICY_PAIRS = {"cap 1 vs 3": ({"round_cap.max_rounds": 1}, None), "router on vs off": ({"router.enabled": True}, None),
                "CRAG lower 0.5 vs 0.2": ({"crag.lower": 0.5}, None),
                "append vs rank": ({"truncation.strategy": "append_then_truncate"}, None)}


def findings_table(*findings: Finding) -> pd.DataFrame:
    """The checked findings, one row each: the claim, its kind, what was measured (Δ [lo, hi], p, Holm) and
    whether it holds — what a notebook shows before it asserts them."""
    return pd.DataFrame([{"claim": f.claim, "kind": f.kind, "metric": f.metric, "measured": f.measured,
                          "holds": f.holds} for f in findings])


#: Issue 37's study: its sweep files (claims declared before the first call), recorded together by
#: scripts/record_study.sh to their declared sizes (200 HotpotQA, 100 MuSiQue questions); each is replayed from its cassette.
STUDY = ("real_qwen_hotpotqa_v3", "real_qwen_hotpotqa_v3_answer", "real_qwen_musique_v3", "real_qwen_musique_disclosure")


def study_findings(names: Iterable[str] = STUDY) -> dict[str, list[Finding]]:
    """Each study sweep (``names``, shipped sweep files) replayed from its cassette, and
    its declared findings tested (:func:`~rag_lab.experiments.engine.findings.sweep_findings`)."""
    from lessons.notebook import lesson_sweep
    from rag_lab.experiments.engine.findings import sweep_findings
    from rag_lab.paths import SWEEPS_DIR

    return {name: sweep_findings(lesson_sweep(SWEEPS_DIR / f"{name}.yaml", replay=True)) for name in names}


#: Issue 48's study: the unanswerable twins of the HotpotQA sample, with their answerable half (pairs_with).
GUARD_STUDY = "real_qwen_hotpotqa_twins"
_READER = {"generation.reader": "plain"}


class GuardStudy(NamedTuple):
    """The twins' study replayed: the twins' run, the pairs with its answerable half, its declared findings, and what
    the guards cost on the answerable questions against the plain reader (exploratory: right answers)."""

    twins: SweepResult
    pairs: Any
    declared: list[Finding]
    cost: Finding

    def lines(self) -> list[str]:
        """What the guards buy (the first declared claim) and what they cost, one line each, with their bounds."""
        bought = self.declared[0]
        return [f"buys (declared, {bought.verdict}): {bought.claim}: {bought.measured}",
                f"costs (exploratory, {self.cost.n} answerable questions): {self.cost.claim}: {self.cost.measured}"]

    def shown(self) -> list[Any]:
        """What lesson 13 shows of the study: its two lines, the pair table of the pairs the claims are tested on,
        the declared family's verdicts, and the guard trade-off against the plain reader on each half (twins, then
        their questions)."""
        from lessons.lesson_text import findings_markdown
        from rag_lab.figures import guard_tradeoff_figure, guard_tradeoff_info

        table = self.pairs.table(self.pairs.claim_qids()).drop(columns=["candidate_id"]).round(3)
        figures = [guard_tradeoff_figure(guard_tradeoff_info(half, reference=_READER))
                   for half in (self.twins, self.pairs.answerable)]
        return ["\n".join(self.lines()), table, findings_markdown(*self.declared), *figures]


def guard_study(name: str = GUARD_STUDY) -> GuardStudy:
    """The twins' study (``sweeps/<name>.yaml``) replayed from its cassette, with its pairs and findings (lessons 13
    and 16 open with its :meth:`GuardStudy.lines`)."""
    from lessons.notebook import lesson_sweep
    from rag_lab.experiments.engine.findings import paired_finding, sweep_findings
    from rag_lab.experiments.engine.pairs import PairedHalves, stored_other_half
    from rag_lab.paths import SWEEPS_DIR

    twins = lesson_sweep(SWEEPS_DIR / f"{name}.yaml", replay=True)
    pairs = PairedHalves(twins, stored_other_half(twins))
    cost = paired_finding(pairs.answerable, "quality_right", candidate=_READER, direction="above",
                          claim="the plain reader gives right answers the guarded pipeline does not")
    return GuardStudy(twins, pairs, sweep_findings(twins), cost)


def study_table(findings: Mapping[str, Iterable[Finding]]) -> pd.DataFrame:
    """A declared study's findings (``findings``: sweep name → its findings, as :func:`study_findings` gives), one
    row each: the claim, the questions (those recorded after the declaration: each sweep names its pilot), Δ with its
    interval, the claim's p after its family's fixed-sequence correction and after Holm's over the whole study, the
    verdict (its family's) and — where it is not shown — the smallest effect that sample could have detected."""
    from rag_lab.stats.significance import holm

    rows = [(name, f) for name, found in findings.items() for f in found]
    study = holm(f.p for _, f in rows)
    return pd.DataFrame([{"sweep": name, "claim": f.claim, "n": f.n, "Δ": f"{f.delta:+.3f} [{f.lo:+.3f}, {f.hi:+.3f}]",
                          "p (fixed sequence)": f.p_adjusted, "p (Holm, study)": p_study, "holds": f.holds,
                          "could have detected": "" if f.detectable is None else f.detectable.text}
                         for (name, f), p_study in zip(rows, study, strict=True)])


def study_summary(names: Iterable[str] = STUDY) -> tuple[pd.DataFrame, Any]:
    """The named study sweeps replayed and their declared findings: the :func:`study_table` and the findings
    written out (:func:`~lessons.lesson_text.findings_markdown`), for ``display(*study_summary(...))``."""
    from lessons.lesson_text import findings_markdown

    found = study_findings(names)
    return study_table(found), findings_markdown(*(f for fs in found.values() for f in fs))


def answers_table(runs: Mapping[str, tuple[SweepResult, Pick]], metrics: Iterable[str] = (), clip: int = 160) -> pd.DataFrame:
    """The same questions answered under several runs side by side (``runs``: name → (sweep, candidate);
    the sweeps must hold the same questions): per question the text, then per run its answer (clipped), status
    and ``metrics``."""
    picked = {name: (r, r.reference(c)["candidate_id"]) for name, (r, c) in runs.items()}
    rows = {name: r.rows(cid).set_index("qid") for name, (r, cid) in picked.items()}  # read once per run
    first = next(iter(picked.values()))[0]
    metrics = list(metrics)
    records = []
    for qid in first.qids:
        row: dict[str, Any] = {"qid": qid, "question": first.result(picked[next(iter(picked))][1], qid).question}
        for name, (r, cid) in picked.items():
            res, values = r.result(cid, qid), rows[name].loc[qid]
            row[f"{name}: answer"], row[f"{name}: status"] = res.answer[:clip], res.status
            row.update({f"{name}: {m}": values[m] for m in metrics})
        records.append(row)
    return pd.DataFrame(records).set_index("qid")


def controller_actions(result: SweepResult, candidate: Pick = None) -> pd.Series:
    """How often the controller of ``candidate`` (default: the base config) chose each action, over every
    controller step of every question (the decision the pipeline acted on: a fallback's when the output was
    unusable)."""
    from rag_lab.pipeline.trace import controller_decisions

    cid = result.reference(candidate)["candidate_id"]
    counts: dict[str, int] = {}
    for row in controller_decisions(result.traces(cid).values()):
        counts[row["action"]] = counts.get(row["action"], 0) + row["decisions"]
    return pd.Series(counts, dtype=int).reindex(CONTROLLER_ACTIONS, fill_value=0).rename("controller steps")


def side_by_side(runs: Mapping[str, SweepResult]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each configuration's means under each model (strict containment, refusals, calls, rounds, seconds), one
    model under the other; and what the base config's controller decided, per model."""
    means = stacked_tables(runs, [_STRICT, "quality_refused", _CALLS, "cost_rounds", "cost_modelled_latency_s"],
                           key="model")
    return means, pd.concat({name: controller_actions(run) for name, run in runs.items()}, axis=1)


def policy_pairs(runs: Mapping[str, SweepResult]) -> pd.DataFrame:
    """:data:`POLICY_PAIRS` paired on the same questions under each model (strict containment and calls)."""
    return pd.concat({name: paired_blocks(run, [_STRICT, _CALLS], POLICY_PAIRS) for name, run in runs.items()})


def prompt_set_tables(result: SweepResult) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The v2 sweep's three views: each configuration's means (strict containment, token F1, refusals, echoes,
    rounds, calls); the controller's actions under v2 and v1; and the paired blocks of v1, the round cap and
    the router against the v2 base."""
    means = labelled_table(result, [_STRICT, "quality_f1", "quality_refused", "quality_echo", "cost_rounds", _CALLS])
    actions = pd.concat({"v2 (base)": controller_actions(result), "v1": controller_actions(result, V1)}, axis=1)
    pairs = {"v1 vs v2 prompts": (V1, None), "cap 1 vs 3 (v2)": ({"round_cap.max_rounds": 1}, None),
             "router on vs off (v2)": ({"router.enabled": True}, None)}
    return means, actions, paired_blocks(result, [_STRICT, "quality_f1", "cost_rounds", _CALLS], pairs)


def live_backend(stack: contextlib.ExitStack, model: str, max_tokens: int = 200) -> LLMBackend | None:
    """The packaged ``model`` served live, entered on ``stack`` (closing it stops the server), or None — with a
    line saying so — when llama-cpp-python or the model is not installed."""
    from rag_lab.llm.factory import open_backend
    from rag_lab.llm.local.backend import llama_cpp_available
    from rag_lab.llm.local.model_pack import installed

    if not (llama_cpp_available() and installed(model)):
        print(f"{model} is not installed (bash scripts/install.sh local qwen): the simulator runs")
        return None
    print(f"live model: {model}")
    return stack.enter_context(open_backend("local", model=model, max_tokens=max_tokens))
