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
# # 08 · Citation guard
#
# The last word on an answer is deterministic code, not the LLM. The **citation guard** keeps only
# citations `[n]` that point into the final context (a whitelist), at most `max_citations` of them, and
# turns the answer into an explicit refusal when the best relevance score of the final context is below
# `refusal_threshold` — no evidence, no answer, never a guess from the model's memory. An answer left with
# no valid citation is refused too.
#
# The fact behind it (DESIGN.md §2): one design allows at most 10 citations; the refusal threshold, like
# CRAG's, is a calibration on the relevance scale of the corpus at hand.

# %% [markdown]
# ## The policy, as implemented
#
# `rag_lab.pipeline.policies.CitationGuard` (`citations.max_citations`, `citations.refusal_threshold`),
# applied by the pipeline's guard step (`Pipeline._guard`), which records every removal and refusal
# among the trace's interventions.

# %%
import tempfile

import pandas as pd
import plotly.express as px

from rag_lab.experiments import run_sweep

pd.set_option("display.width", 200)
pd.set_option("display.max_columns", 20)
pd.set_option("display.max_colwidth", 80)

# %%
from rag_lab.pipeline.policies import CitationGuard

print(CitationGuard.__doc__)
CitationGuard.model_fields

# %% [markdown]
# ## The sweep
#
# 32 questions (4 per type, `unanswerable` included), the `typical` profile, the refusal threshold from 0
# to 0.5 on the cosine scale, and a cap of 1 or 10 citations.

# %%
spec = {
    "name": "nb08_citation_guard",
    "dataset": "world",
    "split": "test",
    "per_type": 4,
    "backend": {"kind": "sim", "profile": "typical"},
    "grid": {"citations.refusal_threshold": [0.0, 0.2, 0.3, 0.4, 0.5], "citations.max_citations": [1, 10]},
}
result = run_sweep(spec, tempfile.mkdtemp(prefix="nb08_"), progress="quiet",
                   pareto=("cost_tokens", "quality_abstention_accuracy"))
columns = result.param_columns + ["quality_abstention_accuracy", "quality_abstention_accuracy_lo",
                                  "quality_abstention_accuracy_hi", "quality_answer_containment", "quality_refused",
                                  "quality_citation_precision", "quality_citation_validity", "cost_tokens", "is_pareto"]
result.table[columns]

# %%
table = result.table.copy()
table["candidate"] = table[result.param_columns].map(str).agg(", ".join, axis=1)
fig = px.scatter(
    table, x="cost_tokens", y="quality_abstention_accuracy", color="candidate", symbol="is_pareto",
    error_y=table["quality_abstention_accuracy_hi"] - table["quality_abstention_accuracy"],
    error_y_minus=table["quality_abstention_accuracy"] - table["quality_abstention_accuracy_lo"],
    title="Citation guard: tokens vs abstention accuracy",
    labels={"cost_tokens": "cost_tokens (mean per question)",
            "quality_abstention_accuracy": "quality_abstention_accuracy (95% CI)"},
)
fig

# %% [markdown]
# ## Two questions: a threshold refusal and a removed citation
#
# First, a question answered with the threshold at 0 and refused at 0.5: the guard step of each run.
# Second, an answer whose extra citations the guard removed under `max_citations=1`.

# %%
t = result.table.set_index(["param_citations.refusal_threshold", "param_citations.max_citations"])
open_id, strict_id = t.loc[(0.0, 10), "candidate_id"], t.loc[(0.5, 10), "candidate_id"]
capped_id = t.loc[(0.0, 1), "candidate_id"]
a, b = result.rows(open_id), result.rows(strict_id)
qid = a.loc[(a["status"] == "answered") & (b["status"] != "answered"), "qid"].iloc[0]
print(qid, "|", result.traces(open_id)[qid].question)
for name, cid in (("threshold 0.0", open_id), ("threshold 0.5", strict_id)):
    guard = next(s for s in result.traces(cid)[qid].steps if s.kind == "guard")
    print(f"{name}: status={result.result(cid, qid).status} interventions={guard.interventions}")
    print("   answer:", result.result(cid, qid).answer[:200])


# %%
def removals(cid):
    return {q: s.interventions for q, tr in result.traces(cid).items() for s in tr.steps
            if s.kind == "guard" and any(i.startswith("removed") for i in s.interventions)}

capped = removals(capped_id)
qid2 = next(iter(capped))
print(qid2, "| max_citations=10:", result.result(open_id, qid2).answer[:200])
print(qid2, "| max_citations=1: ", result.result(capped_id, qid2).answer[:200])
print("guard:", capped[qid2])

# %%
assert capped and not removals(open_id)  # with 10 allowed, every citation pointed into the context
n_removed = len(capped)
print(f"abstention accuracy by refusal threshold (10 citations): "
      f"{t.xs(10, level=1)['quality_abstention_accuracy'].round(3).to_dict()}")
print(f"answer containment by refusal threshold (10 citations): "
      f"{t.xs(10, level=1)['quality_answer_containment'].round(3).to_dict()}")
print(f"refusal rate by refusal threshold (10 citations): {t.xs(10, level=1)['quality_refused'].round(3).to_dict()}")
print(f"citation validity, 1 vs 10 citations (threshold 0): {t.loc[(0.0, 1), 'quality_citation_validity']:.3f} vs "
      f"{t.loc[(0.0, 10), 'quality_citation_validity']:.3f}; {n_removed} answers had citations removed by the cap of 1")
print(f"tokens per question range from {result.table['cost_tokens'].min():.0f} to {result.table['cost_tokens'].max():.0f}")

# %% [markdown]
# ## What was measured
#
# The cell above prints, for each refusal threshold, abstention accuracy, answer containment and the
# refusal rate, and, for the citation cap, the share of citations kept (citation validity counts the
# ones the guard removed as invalid) and how many answers lost citations. The guard acts after
# generation, so the token cost barely moves: a refusal by threshold saves no LLM call, it only decides
# what the user is shown. Where the threshold starts refusing answerable questions is a calibration
# for this corpus and embedding model, read from the refusal and containment lines together.
#
# **Caveat.** The simulated LLM's behaviour knobs (`typical`) are properties of the simulator, not facts about language models: this notebook shows how to *measure* the effect; running the same sweep with a real model (`backend: {kind: openai}` or `{kind: local}`) shows whether the effect is real. The question sample is small, so read the bootstrap intervals in the table before reading the means.
