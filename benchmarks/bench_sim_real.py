"""How well the simulated LLM reads and plans on real text: HotpotQA (tune / check), MuSiQue and the world.

Run by hand (not a timed test); nothing here is tuned on ``check.json``::

    source scripts/env.sh
    nice -n 10 python benchmarks/bench_sim_real.py --files tune musique world --limit-b 120 --out DIR
    # once, at the end, by the lead (a second look: check.json was read before, for sim-2 and sim-3):
    nice -n 10 python benchmarks/bench_sim_real.py --files check --limit-b 120 --out DIR_CHECK

Three experiments, per question type, for every file:

(a) **gold-only corpus** — the corpus is the union of the questions' supporting paragraphs (each
    question's context cut to its gold paragraphs; built in memory), profile ``ideal``,
    ``round_cap.max_rounds=2``: strict and lenient answer containment, refusal rate on answerable
    questions, fallback rate (any invalid structured output replaced by a fallback, or the
    pipeline's one-shot fallback);
(b) **full distractor corpus** — the file's whole corpus (every context paragraph), profile
    ``typical``, ``max_rounds`` 1 to 4: strict and lenient containment, evidence recall of
    everything retrieved over all rounds and of the final context, second-hop / later-hop recall
    (both ways), rounds, LLM calls, refusals; the differences r(k+1)−r(k) and r3−r1 with 95% paired
    bootstrap intervals (same questions, 2000 resamples, percentile intervals);
(c) **truncation** — the same corpus and profile at ``max_rounds=3``: ``rank_then_truncate`` (the
    default), ``round_slots`` (a place reserved for every round's best chunk) and
    ``append_then_truncate``, each paired with the default on strict containment and on later-hop
    evidence kept in the final context.

**Second hop** (HotpotQA has no hop order): for a bridge question with two gold paragraphs, the
gold paragraph ranked *lower* for the original question by the pipeline's own round-1 retriever
(hybrid dense + BM25, ranks up to 100; a paragraph absent from the top 100 ranks last; ties go to
the title that appears later in the file). For world bridge questions it is the gold document the
same rule picks. Second-hop recall = the share of bridge questions whose second-hop paragraph was
retrieved (all rounds) or is in the final context.

**MuSiQue** (``--files musique``: ``musique/slice.jsonl``, 200 answerable questions of 2, 3 and 4 hops,
20 paragraphs each) gives the hop order, so its types are the hop counts (``2hop``/``3hop``/``4hop``)
and its later-hop recall covers every hop after the first.

Output: a markdown table (printed and written to ``OUT/bench_sim_real.md``) and the raw numbers
(``OUT/bench_sim_real.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rag_lab.evaluation.metric_table import question_metrics  # noqa: E402
from rag_lab.llm.simulator import SimulatedBackend  # noqa: E402
from rag_lab.loaders import load_dataset  # noqa: E402
from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig  # noqa: E402
from rag_lab.records import Corpus, Dataset, EvalSet  # noqa: E402

DATA = Path(os.environ.get("RAG_LAB_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
FILES = {"tune": "hotpotqa/tune.json", "check": "hotpotqa/check.json", "musique": "musique/slice.jsonl"}
ROUNDS = (1, 2, 3, 4)
ROUNDS_BY_FILE: dict[str, tuple[int, ...]] = {}
#: Experiment (c): truncation strategies at max_rounds=3, each paired with rank_then_truncate (the default).
TRUNCATIONS = ("rank_then_truncate", "round_slots", "append_then_truncate")
TRUNCATION_ROUNDS = 3


def load(name: str, limit: int | None) -> Dataset:
    if name == "world":
        ds = load_dataset("world")
        return Dataset(ds.corpus, ds.evalset.select(split="test", limit=limit), name="world-test")
    if name == "musique_sample":  # the shipped 100-question sample of the slice (1,787 paragraphs: a cheaper run)
        ds = load_dataset("musique_sample")
    else:
        path = DATA / FILES[name]
        if not path.is_file():
            sys.exit(f"{path} not found: set RAG_LAB_SHARED_DATA to the folder holding {FILES[name]}")
        ds = load_dataset(path)
    questions = list(ds.evalset.select(limit=limit))
    if name.startswith("musique"):  # its types name the composition ("3hop1"); the benchmark groups by hop count
        questions = [q.model_copy(update={"type": f"{len(q.hop_doc_ids)}hop"}) for q in questions]
    return Dataset(ds.corpus, EvalSet(questions, name=name), name=name)


def subset(ds: Dataset, n: int | None) -> Dataset:
    """``ds`` with ``n`` questions: the first ``n``, or for a set ordered by type an equal share of each type."""
    if n is None or n >= len(ds.evalset):
        return ds
    questions = list(ds.evalset)
    types = sorted({q.type for q in questions})
    if len(types) > 2:
        share = -(-n // len(types))
        questions = [q for t in types for q in [q for q in questions if q.type == t][:share]]
    return Dataset(ds.corpus, EvalSet(questions[:n] if len(types) <= 2 else questions, name=ds.evalset.name),
                   name=ds.name)


def gold_corpus(ds: Dataset) -> Corpus:
    """The union of the questions' gold paragraphs."""
    gold = {d for q in ds.evalset for d in q.gold_doc_ids}
    return Corpus([doc for doc in ds.corpus if doc.doc_id in gold], name=f"{ds.name}-gold")


def second_hops(ds: Dataset, res: CorpusResources) -> dict[str, list[str]]:
    """qid → the later-hop gold documents of each multi-hop question: every hop after the first when
    the dataset gives the hop order (MuSiQue), else the second-hop document of each two-document
    bridge question (module doc)."""
    out: dict[str, list[str]] = {}
    if any(q.hop_doc_ids for q in ds.evalset):
        return {q.qid: list(q.hop_doc_ids[1:]) for q in ds.evalset if len(q.hop_doc_ids) >= 2}
    order = {d: i for i, d in enumerate(ds.corpus.doc_ids)}
    for q in ds.evalset:
        gold = list(dict.fromkeys(q.gold_doc_ids))
        if q.type != "bridge" or len(gold) != 2:
            continue
        hits = [res.doc_of(c) for c, _ in res.search("hybrid", q.text, 100)]
        ranks = {d: (hits.index(d) if d in hits else 10**6, order.get(d, 0)) for d in gold}
        out[q.qid] = [max(gold, key=lambda d: ranks[d])]
    return out


def run(ds: Dataset, corpus: Corpus, profile: str, max_rounds: int, res: CorpusResources | None = None,
        backend: SimulatedBackend | None = None, truncation: str = "rank_then_truncate",
        ) -> tuple[list[dict[str, Any]], CorpusResources]:
    res = res if res is not None else CorpusResources(corpus)
    backend = backend if backend is not None else SimulatedBackend(profile)
    pipe = Pipeline(PipelineConfig().with_params({"round_cap.max_rounds": max_rounds, "truncation.strategy": truncation}),
                    res, backend)
    rows = []
    for q in ds.evalset:
        result, trace = pipe.run(q)
        row = question_metrics(q, result, trace)
        retrieved = {res.doc_of(c) for s in trace.steps if s.kind == "retrieve" for c in s.retrieved}
        gold = set(q.gold_doc_ids)
        row["retrieved_docs"] = sorted(retrieved)
        row["context_docs"] = sorted({c.doc_id for c in result.context})
        row["recall_all_rounds"] = len(gold & retrieved) / len(gold) if gold else None
        row["fired_knobs"] = [k for s in trace.steps for k in s.knobs]
        rows.append(row)
    return rows, res


def mean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def paired(a: list[float], b: list[float], seed: int = 0, n: int = 2000) -> dict[str, float]:
    """Mean of b − a with a 95% percentile bootstrap interval over the paired questions."""
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if len(d) == 0:
        return {"diff": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": 0}
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), size=(n, len(d)))].mean(axis=1)
    return {"diff": float(d.mean()), "lo": float(np.percentile(means, 2.5)), "hi": float(np.percentile(means, 97.5)),
            "n": int(len(d))}


def summarise_a(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for t in ["all", *sorted({r["type"] for r in rows})]:
        part = [r for r in rows if t == "all" or r["type"] == t]
        answerable = [r for r in part if r["answerable"]]
        out[t] = {"n": len(part),
                  "strict": mean([r["quality_answer_containment_strict"] for r in part]),
                  "containment": mean([r["quality_answer_containment"] for r in part]),
                  "refused_answerable": mean([1.0 if r["status"] == "refused" else 0.0 for r in answerable]),
                  "fallback": mean([r["quality_fallback"] for r in part]),
                  "recall_final": mean([r["quality_evidence_recall"] for r in part])}
    return out


def _share(docs: list[str] | None, found: list[str]) -> float | None:
    return None if not docs else sum(d in found for d in docs) / len(docs)


def per_question_b(rows: list[dict[str, Any]], hops: dict[str, list[str]]) -> dict[str, dict[str, float | None]]:
    out = {}
    for r in rows:
        hop = hops.get(r["qid"])
        out[r["qid"]] = {
            "type": r["type"],
            "strict": r["quality_answer_containment_strict"],
            "containment": r["quality_answer_containment"],
            "recall_all": r["recall_all_rounds"],
            "recall_final": r["quality_evidence_recall"],
            "hop2_all": _share(hop, r["retrieved_docs"]),
            "hop2_final": _share(hop, r["context_docs"]),
            "rounds": float(r["cost_rounds"]),
            "llm_calls": float(r["cost_llm_calls"]),
            "refused": 1.0 if r["status"] == "refused" else 0.0,
        }
    return out


B_METRICS = ("strict", "containment", "recall_all", "recall_final", "hop2_all", "hop2_final", "rounds", "llm_calls", "refused")


def summarise_b(per_round: dict[int, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    rounds = sorted(per_round)
    types = sorted({v["type"] for v in per_round[rounds[0]].values()})
    out: dict[str, Any] = {}
    for t in ["all", *types]:
        qids = [q for q, v in per_round[rounds[0]].items() if t == "all" or v["type"] == t]
        block: dict[str, Any] = {"n": len(qids), "rounds": rounds}
        for k in rounds:
            block[f"r{k}"] = {m: mean([per_round[k][q][m] for q in qids]) for m in B_METRICS}
        steps = list(zip(rounds, rounds[1:], strict=False))
        if len(rounds) > 2:
            steps.append((rounds[0], TRUNCATION_ROUNDS))  # cap 1 vs cap 3, the quickstart's comparison
        for lo, hi in steps:
            diffs = {}
            for m in B_METRICS:
                pairs = [(per_round[lo][q][m], per_round[hi][q][m]) for q in qids
                         if per_round[lo][q][m] is not None and per_round[hi][q][m] is not None]
                diffs[m] = paired([a for a, _ in pairs], [b for _, b in pairs])
            block[f"d{hi}-{lo}"] = diffs
        out[t] = block
    return out


C_METRICS = ("strict", "containment", "recall_final", "hop2_final", "refused")


def summarise_c(per_strategy: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """Each truncation strategy's means and its paired difference with ``rank_then_truncate``."""
    ref = TRUNCATIONS[0]
    types = sorted({v["type"] for v in per_strategy[ref].values()})
    out: dict[str, Any] = {}
    for t in ["all", *types]:
        qids = [q for q, v in per_strategy[ref].items() if t == "all" or v["type"] == t]
        block: dict[str, Any] = {"n": len(qids)}
        for s, rows in per_strategy.items():
            block[s] = {m: mean([rows[q][m] for q in qids]) for m in C_METRICS}
            if s != ref:
                block[f"d-{s}"] = {m: paired([per_strategy[ref][q][m] for q in qids if rows[q][m] is not None
                                              and per_strategy[ref][q][m] is not None],
                                             [rows[q][m] for q in qids if rows[q][m] is not None
                                              and per_strategy[ref][q][m] is not None]) for m in C_METRICS}
        out[t] = block
    return out


def fmt(v: float | None, digits: int = 3) -> str:
    return "–" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.{digits}f}"


def ci(d: dict[str, float]) -> str:
    return f"{d['diff']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]" if d["n"] else "–"


def markdown(results: dict[str, Any]) -> str:
    lines = ["# Simulator on real text (bench_sim_real.py)", ""]
    lines += ["## (a) gold-only corpus, `ideal`, max_rounds=2", "",
              "| file | type | n | strict containment | lenient containment | refused (answerable) | fallback | "
              "final-context recall |",
              "|---|---|---|---|---|---|---|---|"]
    for name, res in results.items():
        for t, v in res["a"].items():
            lines.append(f"| {name} | {t} | {v['n']} | {fmt(v.get('strict'))} | {fmt(v['containment'])} | "
                         f"{fmt(v['refused_answerable'])} | {fmt(v['fallback'])} | {fmt(v['recall_final'])} |")
    lines += ["", "## (b) full distractor corpus, `typical`, by round cap", "",
              "Cells: mean at each `max_rounds` (r1, r2, …), then each step's paired difference with its 95% interval.", "",
              "| file | type | n | metric | means r1 / r2 / … | steps r(k+1)−r(k) [95% paired CI] |",
              "|---|---|---|---|---|---|"]
    for name, res in results.items():
        for t, v in res["b"].items():
            rounds = v.get("rounds", list(ROUNDS))
            for m in B_METRICS:
                if all(v[f"r{k}"][m] is None for k in rounds):
                    continue
                pairs = [*zip(rounds, rounds[1:], strict=False), *([(rounds[0], TRUNCATION_ROUNDS)]
                                                                     if f"d{TRUNCATION_ROUNDS}-{rounds[0]}" in v else [])]
                steps = "; ".join(f"r{hi}−r{lo} {ci(v[f'd{hi}-{lo}'][m])}" for lo, hi in pairs)
                lines.append(f"| {name} | {t} | {v['n']} | {m} | " + " / ".join(fmt(v[f"r{k}"][m]) for k in rounds)
                             + f" | {steps} |")
    lines += ["", f"## (c) truncation, full distractor corpus, `typical`, max_rounds={TRUNCATION_ROUNDS}", "",
              f"Cells: mean per strategy; Δ = strategy − {TRUNCATIONS[0]} on the same questions, 95% paired interval.",
              "", "| file | type | n | metric | " + " | ".join(TRUNCATIONS) + " | "
              + " | ".join(f"Δ {s}" for s in TRUNCATIONS[1:]) + " |",
              "|---|---|---|---|" + "---|" * (2 * len(TRUNCATIONS) - 1)]
    for name, res in results.items():
        for t, v in res.get("c", {}).items():
            for m in C_METRICS:
                if all(v[s][m] is None for s in TRUNCATIONS):
                    continue
                lines.append(f"| {name} | {t} | {v['n']} | {m} | " + " | ".join(fmt(v[s][m]) for s in TRUNCATIONS)
                             + " | " + " | ".join(ci(v[f"d-{s}"][m]) for s in TRUNCATIONS[1:]) + " |")
    lines += ["", "Metrics: strict = a normalised gold answer appears in a short answer (the sweeps' default axis); "
              "containment (lenient) = a normalised gold answer appears in the answer; recall_all = gold "
              "paragraphs among everything retrieved over all rounds; recall_final = gold paragraphs in the final "
              "context (a refusal empties it); hop2_* = the same for the second-hop paragraph of bridge questions "
              "(the gold paragraph the round-1 retriever ranks lower for the original question; for MuSiQue, the share of "
              "every hop after the first, in the dataset's hop order); rounds, llm_calls "
              "per question; refused = share refused.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", nargs="+", default=["tune"], choices=["tune", "check", "world", "musique", "musique_sample"])
    parser.add_argument("--limit", type=int, default=None, help="first N questions of each file")
    parser.add_argument("--limit-b", type=int, default=None,
                        help="experiment (b) on N questions of each file only (HotpotQA: the first N; world: an "
                             "equal share of each type, in order)")
    parser.add_argument("--skip-b", action="store_true", help="only experiment (a)")
    parser.add_argument("--out", type=Path, default=None, help="folder for bench_sim_real.md / .json")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    for name in args.files:
        start = time.perf_counter()
        ds = load(name, args.limit)
        rows_a, _ = run(ds, gold_corpus(ds), "ideal", 2)
        entry: dict[str, Any] = {"a": summarise_a(rows_a)}
        print(f"{name} (a): {json.dumps(entry['a'])}", file=sys.stderr, flush=True)
        if not args.skip_b:
            ds = subset(ds, args.limit_b)
            res = CorpusResources(ds.corpus)
            hops = second_hops(ds, res)
            backend = SimulatedBackend("typical")
            per_round = {}
            for k in ROUNDS_BY_FILE.get(name, ROUNDS):
                rows_b, res = run(ds, ds.corpus, "typical", k, res=res, backend=backend)
                per_round[k] = per_question_b(rows_b, hops)
                print(f"{name} (b) max_rounds={k}: " + json.dumps({m: mean([v[m] for v in per_round[k].values()])
                                                                 for m in B_METRICS}), file=sys.stderr, flush=True)
            entry["b"] = summarise_b(per_round)
            per_strategy = {TRUNCATIONS[0]: per_round[TRUNCATION_ROUNDS]}
            for s in TRUNCATIONS[1:]:
                rows_c, res = run(ds, ds.corpus, "typical", TRUNCATION_ROUNDS, res=res, backend=backend, truncation=s)
                per_strategy[s] = per_question_b(rows_c, hops)
                print(f"{name} (c) {s}: " + json.dumps({m: mean([v[m] for v in per_strategy[s].values()])
                                                       for m in C_METRICS}), file=sys.stderr, flush=True)
            entry["c"] = summarise_c(per_strategy)
            entry["second_hops"] = hops
        else:
            entry["b"] = {}
        entry["seconds"] = round(time.perf_counter() - start, 1)
        results[name] = entry
        print(f"{name}: {entry['seconds']} s", file=sys.stderr)
    text = markdown(results)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_sim_real.md").write_text(text, encoding="utf-8")
        (args.out / "bench_sim_real.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
