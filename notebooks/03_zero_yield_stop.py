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
# # 03 · Zero-yield stop
#
# "Synonym spinning": a controller re-searches the same source with a paraphrase, and gets the same
# chunks back. **ZeroYieldStop** measures each round's yield — the number of *new* unique chunk ids —
# and stops early when `round_yield == 0 and chunks_seen > 0` (stop reason `empty_round`). When nothing
# was ever found (`chunks_seen == 0`) it keeps trying until the cap, then falls back to one-shot retrieval.

# %% [markdown]
# ## The policy, as implemented
#
# `rag_lab.pipeline.policies.ZeroYieldStop` (`zero_yield.enabled`); the per-round yield is recorded in
# every trace step of kind `retrieve` (`Trace.yields()`).

# %%
import tempfile

import pandas as pd
import plotly.express as px

from rag_lab.experiments import run_sweep

pd.set_option("display.width", 200)
pd.set_option("display.max_columns", 20)
pd.set_option("display.max_colwidth", 80)

# %%
from rag_lab.pipeline.policies import ZeroYieldStop

print(ZeroYieldStop.__doc__)
ZeroYieldStop.model_fields

# %% [markdown]
# ## The sweep
#
# 32 questions (4 per type), a cap of 4 rounds so that spinning has room, and the `typical` profile with
# `synonym_spinning` raised to 0.6 (the probability that the controller asks for a paraphrase search
# although its evidence already suffices).

# %%
spec = {
    "name": "nb03_zero_yield",
    "dataset": "world",
    "split": "test",
    "per_type": 4,
    "base": {"round_cap.max_rounds": 4},
    "backend": {"kind": "sim", "profile": "typical", "knobs": {"synonym_spinning": 0.6}},
    "grid": {"zero_yield.enabled": [True, False]},
}
result = run_sweep(spec, tempfile.mkdtemp(prefix="nb03_"), progress="quiet")
columns = result.param_columns + ["quality_answer_containment_strict", "quality_answer_containment_strict_lo",
                                  "quality_answer_containment_strict_hi", "quality_answer_containment", "quality_abstention_accuracy",
                                  "cost_rounds", "cost_llm_calls", "cost_tokens", "is_pareto"]
result.table[columns]

# %%
table = result.table.copy()
table["candidate"] = table[result.param_columns].map(str).agg(", ".join, axis=1)
fig = px.scatter(
    table, x="cost_tokens", y="quality_answer_containment_strict", color="candidate", symbol="is_pareto",
    error_y=table["quality_answer_containment_strict_hi"] - table["quality_answer_containment_strict"],
    error_y_minus=table["quality_answer_containment_strict"] - table["quality_answer_containment_strict_lo"],
    title="Zero-yield stop: tokens vs strict answer containment",
    labels={"cost_tokens": "cost_tokens (mean per question)",
            "quality_answer_containment_strict": "quality_answer_containment_strict (95% CI)"},
)
fig

# %%
ids = result.table.set_index("param_zero_yield.enabled")["candidate_id"]
on, off = result.rows(ids[True]), result.rows(ids[False])
pd.DataFrame({"stop enabled": on["stop_reason"].value_counts(), "stop disabled": off["stop_reason"].value_counts()}
             ).fillna(0).astype(int)

# %% [markdown]
# ## One question: an `empty_round` stop
#
# The question where the stop saved the most LLM calls: its round yields end in a 0, the retrieve step
# of that round found nothing new, and the loop ended with reason `empty_round`. Without the policy the
# same question keeps searching (its stop reason and yields are printed next to it).

# %%
saved = off["cost_llm_calls"] - on["cost_llm_calls"]  # rows are in the same question order
qid = on.loc[(on["stop_reason"] == "empty_round") & (saved == saved.max()), "qid"].iloc[0]
trace = result.traces(ids[True])[qid]
spinning = result.traces(ids[False])[qid]
print(qid, "|", trace.question)
print("with the stop:   ", trace.stop_reason, "yields", trace.yields())
print("without the stop:", spinning.stop_reason, "yields", spinning.yields())
pd.DataFrame([
    {"kind": s.kind, "round": s.round, "queries": " | ".join(s.queries), "new": len(s.new), "yield": s.round_yield,
     "action": (s.decision or {}).get("action"), "interventions": "; ".join(s.interventions)}
    for s in trace.steps
])

# %%
assert trace.stop_reason == "empty_round" and trace.yields()[-1] == 0
t = result.table.set_index("param_zero_yield.enabled")
n_empty = int((on["stop_reason"] == "empty_round").sum())
print(f"{n_empty} of {len(on)} questions stopped on an empty round.")
for col in ("cost_rounds", "cost_llm_calls", "cost_tokens"):
    print(f"{col}: {t.loc[False, col]:.2f} without the stop -> {t.loc[True, col]:.2f} with it "
          f"({(t.loc[True, col] - t.loc[False, col]) / t.loc[False, col]:+.0%})")
print(f"strict answer containment: {t.loc[False, 'quality_answer_containment_strict']:.3f} without -> "
      f"{t.loc[True, 'quality_answer_containment_strict']:.3f} with")

# %% [markdown]
# ## What was measured
#
# The cell above prints how many questions the policy stopped on an empty round, and what the stop saved
# in rounds, LLM calls and tokens per question, next to strict answer containment with and without it. A
# paraphrase search that returns only chunks already seen cannot change the final context, so the saving
# should come at no loss in quality; the containment line checks that on this sample. The spinning itself is produced by the `synonym_spinning` knob by construction; the stop's saving is measured.
#
# **Caveat.** The simulated LLM's behaviour knobs (`synonym_spinning=0.6`) are properties of the simulator, not facts about language models: this notebook shows how to *measure* the effect; running the same sweep with a real model (`backend: {kind: openai}` or `{kind: local}`) shows whether the effect is real. The question sample is small, so read the bootstrap intervals in the table before reading the means.
