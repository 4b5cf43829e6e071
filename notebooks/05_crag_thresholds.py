# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 · CRAG thresholds
#
# **CRAG** (Corrective RAG) grades the final candidates: each chunk gets a relevance score in [-1, 1];
# the bundle is **Correct** if any score ≥ `upper`, **Incorrect** if all are < `lower`, else
# **Ambiguous**. Correct → the standard answer template; Ambiguous → the low-confidence template;
# Incorrect → the evidence is discarded and the answer is a refusal.
#
# The fact behind it: the original paper's thresholds are per dataset (e.g. 0.59 / −0.99 on its
# scale) — they must be calibrated, so sweeping them is the point.

# %% [markdown]
# ## The policy, as implemented
#
# `rag_lab.pipeline.policies.CRAG` (`crag.upper`, `crag.lower`, `crag.evaluator`); the grade function is
# `rag_lab.pipeline.finalize.crag_grade`. With the default `embedding` evaluator a chunk's score is its
# cosine similarity (MiniLM) to the question or a refined query — the same scale as reranking.

# %%
import tempfile

import pandas as pd
import plotly.express as px

from rag_lab.experiments import run_sweep

pd.set_option("display.width", 200)
pd.set_option("display.max_columns", 20)
pd.set_option("display.max_colwidth", 80)

# %%
from rag_lab.pipeline.finalize import crag_grade
from rag_lab.pipeline.policies import CRAG

print(CRAG.__doc__)
print(crag_grade([0.62, 0.1], upper=0.5, lower=0.2), crag_grade([0.3, 0.1], upper=0.5, lower=0.2),
      crag_grade([0.1, 0.05], upper=0.5, lower=0.2))

# %% [markdown]
# ## The sweep
#
# All 8 types, 4 questions each (the `unanswerable` ones are where refusing is right). A conditional grid
# keeps `lower ≤ upper`: `lower` in {0.1, 0.3, 0.5}, `upper` in {0.3, 0.5, 0.7}. Finalize-stage parameters
# do not change the retrieval loop, so candidates share most LLM work through the response cache.

# %%
spec = {
    "name": "nb05_crag",
    "dataset": "world",
    "split": "test",
    "per_type": 4,
    "backend": {"kind": "sim", "profile": "typical"},
    "grid": [{"crag.lower": [0.1], "crag.upper": [0.3, 0.5, 0.7]},
             {"crag.lower": [0.3], "crag.upper": [0.3, 0.5, 0.7]},
             {"crag.lower": [0.5], "crag.upper": [0.5, 0.7]}],
}
result = run_sweep(spec, tempfile.mkdtemp(prefix="nb05_"), progress="quiet",
                   pareto=("cost_tokens", "quality_abstention_accuracy"))
columns = result.param_columns + ["quality_abstention_accuracy", "quality_abstention_accuracy_lo",
                                  "quality_abstention_accuracy_hi", "quality_answer_containment", "quality_refused",
                                  "cost_llm_calls", "cost_tokens", "is_pareto"]
result.table[columns]

# %%
table = result.table.copy()
table["candidate"] = table[result.param_columns].map(str).agg(", ".join, axis=1)
fig = px.scatter(
    table, x="cost_tokens", y="quality_abstention_accuracy", color="candidate", symbol="is_pareto",
    error_y=table["quality_abstention_accuracy_hi"] - table["quality_abstention_accuracy"],
    error_y_minus=table["quality_abstention_accuracy"] - table["quality_abstention_accuracy_lo"],
    title="CRAG thresholds: tokens vs abstention accuracy",
    labels={"cost_tokens": "cost_tokens (mean per question)",
            "quality_abstention_accuracy": "quality_abstention_accuracy (95% CI)"},
)
fig

# %% [markdown]
# Abstention accuracy over the threshold grid, and how the grades split for each pair:

# %%
t = result.table
heat = t.pivot(index="param_crag.lower", columns="param_crag.upper", values="quality_abstention_accuracy")
px.imshow(heat, text_auto=".2f", origin="lower", labels={"color": "abstention accuracy"},
          title="Abstention accuracy by CRAG thresholds (blank: lower > upper)")

# %%
grades = {(r["param_crag.lower"], r["param_crag.upper"]): result.rows(r["candidate_id"])["crag_grade"].value_counts()
          for _, r in t.iterrows()}
pd.DataFrame(grades).fillna(0).astype(int).T.rename_axis(["lower", "upper"])

# %% [markdown]
# ## One question: the grade and its template
#
# An answerable question graded differently by a lenient and a strict threshold pair: the finalize
# step's per-chunk scores, the grade, and the answer template each grade selects.

# %%
lenient = t.loc[(t["param_crag.lower"] == 0.1) & (t["param_crag.upper"] == 0.3), "candidate_id"].iloc[0]
strict = t.loc[(t["param_crag.lower"] == 0.5) & (t["param_crag.upper"] == 0.7), "candidate_id"].iloc[0]
a, b = result.rows(lenient), result.rows(strict)
qid = a.loc[(a["crag_grade"] != b["crag_grade"]) & a["answerable"], "qid"].iloc[0]
for name, cid in (("lenient 0.1/0.3", lenient), ("strict 0.5/0.7", strict)):
    trace = result.traces(cid)[qid]
    fin = next(s for s in trace.steps if s.kind == "finalize")
    gen = next((s for s in trace.steps if s.kind == "generate"), None)
    print(f"{name}: grade={fin.detail.get('crag_grade')} template={gen.detail['template'] if gen else None} "
          f"stop={trace.stop_reason} interventions={fin.interventions}")
print(qid, "|", trace.question)
print("chunk scores:", fin.detail.get("crag_scores"))
print("answer (strict):", result.result(strict, qid).answer[:300])

# %%
best = t.loc[t["quality_abstention_accuracy"].idxmax()]
print(f"abstention accuracy ranges from {t['quality_abstention_accuracy'].min():.3f} to "
      f"{t['quality_abstention_accuracy'].max():.3f}; best at lower={best['param_crag.lower']}, upper={best['param_crag.upper']}")
print(f"refusal rate ranges from {t['quality_refused'].min():.3f} to {t['quality_refused'].max():.3f}")
print(f"answer containment ranges from {t['quality_answer_containment'].min():.3f} to "
      f"{t['quality_answer_containment'].max():.3f}")
print(f"tokens per question range from {t['cost_tokens'].min():.0f} to {t['cost_tokens'].max():.0f}")

# %% [markdown]
# ## What was measured
#
# The cell above prints the range of abstention accuracy (refuse on unanswerable, answer on answerable),
# refusal rate and answer containment over the threshold grid, the pair with the best abstention
# accuracy, and the (small) range of token cost — the thresholds act after retrieval, so they move
# quality, not the cost of the loop. The heat-map and the grade table show where `lower` starts
# discarding evidence: that is a calibration for *this* corpus, this embedding model and this sample,
# not a universal setting.
#
# **Caveat.** The simulated LLM's behaviour knobs (`typical`) are properties of the simulator, not facts about language models: this notebook shows how to *measure* the effect; running the same sweep with a real model (`backend: {kind: openai}` or `{kind: local}`) shows whether the effect is real. The question sample is small, so read the bootstrap intervals in the table before reading the means.
