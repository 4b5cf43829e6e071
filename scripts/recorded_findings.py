#!/usr/bin/env python
"""Write what a recorded real-model sweep shows, from its cassette alone (offline, a minute or two):

1. the replayed sweep's reproducible table (``data/recorded/<sweep>_table.csv``; the replay test compares it
   byte for byte);
2. the simulator twin (the same sweep with the ``typical`` profile: same configs, same questions), the sign of
   every contrast on both, and Kendall's τ between their rankings (``rag_lab.experiments.calibration.verify.compare``);
3. a simulator profile fitted to the recorded traces (``rag-lab calibrate``'s fit:
   ``data/recorded/<model>_profile.yaml``), the twin again with it, and the same agreement after fitting;
4. ``data/recorded/<sweep>.md``: all of it, with the cassette's size and provenance;
5. ``data/recorded/<sweep>_claims.json``: its declared claims (``rag_lab.experiments.study``), which the docs'
   study tables are rendered from (``scripts/study_docs.py``).

    source scripts/env.sh
    python scripts/recorded_findings.py sweeps/real_qwen_hotpotqa.yaml
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from rag_lab.experiments import run_sweep
from rag_lab.experiments.calibration.calibrate import calibrate, read_run
from rag_lab.experiments.calibration.sim_vs_real import agreement_summary, contrast_agreement
from rag_lab.experiments.calibration.verify import compare, tau_text
from rag_lab.experiments.engine.behaviour import decisions_by_round, loop_ends
from rag_lab.experiments.engine.findings import finding_line, sweep_findings
from rag_lab.experiments.engine.pairs import PairedHalves, stored_other_half
from rag_lab.experiments.engine.sweep_file import load_sweep_spec
from rag_lab.experiments.study import BLOCK_END, BLOCK_START, first_declared, part_claims, write_claims
from rag_lab.llm.cassette import describe
from rag_lab.paths import DATA_DIR
from rag_lab.stats.significance import p_text

STRICT, CALLS, TOKENS = "quality_answer_containment_strict", "cost_llm_calls", "cost_tokens"
METRICS = [STRICT, "quality_refused", "quality_refused_model", "quality_refused_pipeline", "quality_no_to_open",
           "quality_right", "quality_confident_error", "quality_right_among_answered", CALLS, TOKENS,
           "cost_modelled_latency_s"]


def _table(frame) -> str:
    """A markdown table; a p-value column (``*_p``, ``*_holm``) as p-values are printed everywhere (``<0.0001``,
    never a rounded 0)."""
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(_cell(col, v) for col, v in zip(cols, row, strict=True)) + " |")
    return "\n".join(lines)


def _cell(column: str, value) -> str:
    if isinstance(value, float) and column.endswith(("_p", "_holm")):
        return p_text(value)
    return f"{value:.3g}" if isinstance(value, float) else str(value).replace("|", "\\|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", type=Path)
    parser.add_argument("--out-dir", type=Path, default=DATA_DIR / "recorded")
    parser.add_argument("--profile", default=None, help="the fitted profile's file name in --out-dir (default: "
                        "<model>_profile.yaml; give another for a second sweep of the same model, e.g. another "
                        "prompt set, so that one fit does not overwrite the other)")
    args = parser.parse_args()
    started = time.perf_counter()
    spec = load_sweep_spec(args.sweep)
    work = Path(tempfile.mkdtemp(prefix=f"{spec.name}_"))
    real = run_sweep(spec, work / "real", progress="quiet", replay=True)
    if not real.complete:
        sys.exit(f"{args.sweep}: the replay is incomplete")
    table_path = real.write_reproducible_table(args.out_dir / f"{spec.name}_table.csv")
    # the simulator's twin runs this half alone, and tests no claim (a claim over pairs would need the other half)
    twin = spec.model_dump(exclude={"backend", "name", "pairs_with", "findings"})
    sim = run_sweep({**twin, "name": f"{spec.name}_sim", "backend": {"kind": "sim", "profile": "typical"}},
                    work / "sim", progress="quiet")
    fit = calibrate(read_run(work / "real"), base="typical", name=f"{spec.backend.model}-fitted"[:40])
    profile_path = fit.write(args.out_dir / (args.profile or f"{spec.backend.model}_profile.yaml"))
    fitted = run_sweep({**twin, "name": f"{spec.name}_fitted", "backend": {"kind": "sim", "profile": str(profile_path)}},
                       work / "fitted", progress="quiet")
    parts = [f"# {spec.name}: a recorded real model against the simulator",
             "",
             f"Made by `python scripts/recorded_findings.py {args.sweep}` from the cassette alone "
             f"({time.perf_counter() - started:.0f} s). The real model's sweep is replayed from its cassette; the "
             "simulator twin is the same sweep (same configs, same questions) with the `typical` profile, then with the "
             f"profile fitted to the recorded traces (`{profile_path.name}`).",
             ""]
    cassette = describe(spec.backend.cassette)
    prov = cassette["provenance"]
    parts += [f"Cassette `{Path(cassette['path']).name}`: {cassette['entries']} recorded calls "
              f"({', '.join(f'{k} {v}' for k, v in sorted(cassette['by_role'].items()))}) over {cassette['questions']} "
              f"questions, {cassette['bytes']:,} bytes; model `{prov.get('model_file')}` (sha256 "
              f"`{prov.get('model_sha256')}`), llama-cpp-python {prov.get('llama_cpp')}, {len(real.qids)} questions "
              f"in the sweep. How the calls were made (each entry's `made_with`; the header records the settings "
              "when the cassette was created): "
              + "; ".join(f"{label}: {count} calls" for label, count in cassette["made_with"].items()) + ".", ""]
    findings = sweep_findings(real)
    if findings:
        parts += ["## The declared findings", "",
                  f"Stated in `{args.sweep}` before its first call was recorded, tested in that order as one family "
                  "(fixed sequence: a finding counts only when every one before it does), on the questions recorded "
                  f"so far ({len(real.qids)})" + (f", but the {len(spec.pilot)} of the pilot the claims were planned "
                                                    "on" if spec.pilot else "") + ":", ""]
        parts += [f"{i}. {finding_line(f)}" for i, f in enumerate(findings, start=1)]
        parts += [""]
        whole = first_declared(real)
        if whole is not None:
            parts += _as_first_declared(whole, len(spec.pilot))
        write_claims(args.out_dir / f"{spec.name}_claims.json", part_claims(spec.name, findings, whole))
        if spec.family.study:
            parts += [f"### Every claim of the study {spec.family.study!r}, with Holm over the study", "",
                      "Written by `python scripts/study_docs.py` from every part's claims, once each part is replayed:",
                      "", BLOCK_START.format(name=spec.family.study), BLOCK_END.format(name=spec.family.study), ""]
    other = stored_other_half(real)
    if other is not None:
        parts += _pairs_section(real, other, spec.pairs_with)
    metrics = [m for m in METRICS if m in real.table.columns]
    # the answer quality the simulator is compared on: strict containment, or right answers where no question has a
    # gold answer (unanswerable twins: right means right from memory)
    quality = STRICT if real.table[STRICT].notna().any() else "quality_right"
    parts += ["## The real model, each configuration", "", _table(real.table[["candidate_id", *real.param_columns, *metrics]]
                                                              .round(3)), ""]
    for label, twin_result in (("the typical profile", sim), ("the fitted profile", fitted)):
        agreement = contrast_agreement(real, twin_result, [quality, CALLS, TOKENS])
        summary = agreement_summary(agreement)
        verification = compare(twin_result, real, by=quality)
        ranks = verification.ranks.set_index("metric")
        parts += [f"## Against the simulator with {label}", "",
                  f"Sign agreement: {summary['sign_agrees']} of {summary['contrasts']} contrasts; among the "
                  f"{summary['real_shown']} the real model shows (interval excludes 0, Holm p < 0.05 over the table), "
                  f"{summary['shown_and_agrees']} agree.", "",
                  _table(agreement.drop(columns=["real_delta", "sim_delta"]).round(4)), "",
                  "Kendall τ between the simulator's and the real model's ranking of the configurations (bootstrap "
                  "over questions): " + "; ".join(f"{m}: {tau_text(r)}" for m, r in ranks.iterrows()), ""]
    parts += _decisions_section(real)
    parts += ["## The fitted profile", "", "```", fit.table_text(), "```", ""]
    out = args.out_dir / f"{spec.name}.md"
    out.write_text("\n".join(parts), encoding="utf-8")
    print(f"wrote {table_path}, {profile_path}, {out} ({time.perf_counter() - started:.0f} s)")


def _as_first_declared(whole: list, pilot_size: int) -> list[str]:
    """The page's section of :func:`~rag_lab.experiments.study.first_declared`: shown beside the verdicts, never as one."""
    lines = ["### The same claims on all the questions, the pilot included (not a verdict)", "",
             f"The {pilot_size} pilot questions' outcomes were known when the claims were declared, so the verdicts "
             "above leave them out. As first declared, on all the questions (exploratory now):", ""]
    lines += [f"{i}. {finding_line(f)}" for i, f in enumerate(whole, start=1)]
    return lines + [""]


def _decisions_section(real) -> list[str]:
    """What the model did in each configuration (:mod:`rag_lab.experiments.engine.behaviour`)."""
    parts = ["## What the model did, each configuration", "",
             "Rounds run per question and why its loop ended (a count of questions):", "",
             _table(loop_ends(real).round(3)), ""]
    by_round = decisions_by_round(real)
    if len(by_round):
        parts += ["The controller's actions, by the rounds run when it was asked (a count of decisions; an invalid "
                  "output's deterministic fallback is counted under its action and again in the last column):", "",
                  _table(by_round), ""]
    return parts


def _pairs_section(real, other, other_file) -> list[str]:
    """What each guard buys and costs over the pairs (a question and its unanswerable twin), all pairs and the pairs
    the claims are tested on, and each candidate's break-even price of a wrong answer against the base."""
    pairs = PairedHalves(real, other)
    kept = pairs.claim_qids()
    columns = ["label", "pairs", "answerable_right", "answerable_wrong", "answerable_refused", "twins_right",
               "twins_wrong", "twins_refused", "coverage", "right_among_answered", "refusal_precision",
               "refusal_recall", "pair_score", "utility_c1"]
    parts = ["## Over the pairs: what each guard buys and costs", "",
             f"Each twin beside its question, run by `{Path(other_file).name}` (the answerable half) on the same "
             f"candidates: {len(pairs.qids)} pairs, of which {len(pairs.unflagged())} have an unflagged twin and "
             f"{len(kept)} are outside the pilot too (the pairs the claims are tested on). Right and wrong by the "
             "strict answer rule (on a twin, against its original's answer: from memory); a refusal is neither.", "",
             "All pairs:", "", _table(pairs.table()[columns].round(3)), "",
             "The pairs the claims are tested on:", "", _table(pairs.table(kept)[columns].round(3)), "",
             "Break-even price c of a wrong answer against the base (utility right − c·wrong, summed over both halves; "
             "paired bootstrap interval over the pairs the claims are tested on):", ""]
    labels = real.labels()
    base = real.reference()["candidate_id"]
    for candidate in real.table["candidate_id"]:
        if candidate != base:
            parts.append(f"- {labels[candidate]}: {pairs.break_even(candidate, qids=kept).text()}")
    return [*parts, ""]


if __name__ == "__main__":
    main()
