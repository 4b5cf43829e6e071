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
# # 02 · Budget disclosure
#
# Should the controller be told its budget? **BudgetDisclosure** decides whether the controller prompt
# states the cap ("You may run at most N searches") or only asks it to "use as few searches as
# possible". The cap is enforced in code either way (notebook 01).
#
# The fact behind it (DESIGN.md §2): telling a model its budget anchored it to use all of it — hiding
# it took the average from 3.2 to 1.8 rounds and about 44% fewer LLM calls, mostly on simple questions.

# %% [markdown]
# ## The policy, as implemented
#
# `rag_lab.pipeline.policies.BudgetDisclosure` (`disclosure.disclosed`). The prompt text is built in
# `rag_lab.llm.prompts` (the controller prompt). The simulator's `budget_anchoring` knob fires only
# when the prompt it receives states a budget — it never sees the config — so the effect can only come
# from the prompt.

# %%
import tempfile

import pandas as pd
import plotly.express as px

from rag_lab.experiments import run_sweep

pd.set_option("display.width", 200)
pd.set_option("display.max_columns", 20)
pd.set_option("display.max_colwidth", 80)

# %%
from rag_lab.pipeline.policies import BudgetDisclosure

print(BudgetDisclosure.__doc__)
BudgetDisclosure.model_fields

# %% [markdown]
# ## The sweep
#
# 32 questions (4 per type), caps of 2 and 4 rounds, disclosed or not. The `typical` profile anchors
# rarely (`budget_anchoring=0.2`), so the backend overrides that one knob to 0.6 to make the effect
# visible on a small sample; everything else is `typical`.

# %%
spec = {
    "name": "nb02_budget_disclosure",
    "dataset": "world",
    "split": "test",
    "per_type": 4,
    "backend": {"kind": "sim", "profile": "typical", "knobs": {"budget_anchoring": 0.6}},
    "grid": {"disclosure.disclosed": [False, True], "round_cap.max_rounds": [2, 4]},
}
result = run_sweep(spec, tempfile.mkdtemp(prefix="nb02_"), progress="quiet")
columns = result.param_columns + ["quality_answer_containment_strict", "quality_answer_containment_strict_lo",
                                  "quality_answer_containment_strict_hi", "quality_answer_containment", "quality_abstention_accuracy",
                                  "cost_rounds", "cost_llm_calls", "cost_tokens", "is_pareto"]
result.table[columns]

# %%
table = result.table.copy()
table["candidate"] = table[result.param_columns].map(str).agg(", ".join, axis=1)
fig = px.scatter(
    table, x="cost_llm_calls", y="quality_answer_containment_strict", color="candidate", symbol="is_pareto",
    error_y=table["quality_answer_containment_strict_hi"] - table["quality_answer_containment_strict"],
    error_y_minus=table["quality_answer_containment_strict"] - table["quality_answer_containment_strict_lo"],
    title="Budget disclosure: LLM calls vs strict answer containment",
    labels={"cost_llm_calls": "cost_llm_calls (mean per question)",
            "quality_answer_containment_strict": "quality_answer_containment_strict (95% CI)"},
)
fig

# %% [markdown]
# Rounds per question by type, cap 4, hidden vs disclosed:

# %%
ids = result.table.set_index(["param_disclosure.disclosed", "param_round_cap.max_rounds"])["candidate_id"]
hidden, shown = result.rows(ids[(False, 4)]), result.rows(ids[(True, 4)])
pd.DataFrame({"hidden": hidden.groupby("type")["cost_rounds"].mean(),
              "disclosed": shown.groupby("type")["cost_rounds"].mean()})

# %% [markdown]
# ## One question: anchoring in the trace
#
# A question that took more rounds when the budget was disclosed. The controller's prompt states the
# budget, and the controller keeps searching with paraphrases although the evidence was already there.

# %%
merged = hidden.merge(shown, on="qid", suffixes=("_hidden", "_disclosed"))
qid = merged.loc[merged["cost_rounds_disclosed"] > merged["cost_rounds_hidden"], "qid"].iloc[0]
trace = result.traces(ids[(True, 4)])[qid]
controller_prompt = next(c for c in trace.llm_calls() if c.role == "controller").messages[0]["content"]  # the system message
print(qid, "|", trace.question)
print("budget sentence in the controller prompt:", [s for s in controller_prompt.split(". ") if "searches" in s])
print("stop reason:", trace.stop_reason, "| rounds used:", trace.rounds_used, "| yields:", trace.yields())
pd.DataFrame([
    {"kind": s.kind, "round": s.round, "queries": " | ".join(s.queries), "new": len(s.new), "yield": s.round_yield,
     "action": (s.decision or {}).get("action"), "interventions": "; ".join(s.interventions)}
    for s in trace.steps
])

# %%
hidden_prompt = next(c for c in result.traces(ids[(False, 4)])[qid].llm_calls() if c.role == "controller")
assert "at most" in controller_prompt and "at most" not in hidden_prompt.messages[0]["content"]
t = result.table.set_index(["param_disclosure.disclosed", "param_round_cap.max_rounds"])
for cap in (2, 4):
    h, d = t.loc[(False, cap)], t.loc[(True, cap)]
    print(f"cap {cap}: rounds {h['cost_rounds']:.2f} hidden -> {d['cost_rounds']:.2f} disclosed; "
          f"LLM calls {h['cost_llm_calls']:.2f} -> {d['cost_llm_calls']:.2f} "
          f"({(h['cost_llm_calls'] - d['cost_llm_calls']) / d['cost_llm_calls']:+.0%} when hidden); "
          f"strict answer containment {h['quality_answer_containment_strict']:.3f} -> {d['quality_answer_containment_strict']:.3f}")

# %% [markdown]
# ## What was measured
#
# The cell above prints, for each cap, the mean rounds and LLM calls per question with the budget hidden
# and disclosed, the relative change in LLM calls from hiding it, and strict answer containment for both. The
# by-type table shows where the extra rounds go. With a simulated controller the anchoring comes from the
# `budget_anchoring` knob reading the prompt, so the size of the gap is set by that knob (0.6 here);
# the published 3.2 → 1.8 rounds was a real model's behaviour. The simulator also has the opposite knob, `budget_thrift` (`typical`: 0.15; a model that knows its budget stops once the evidence suffices), so the sign of the gap comes from the two rates — this effect is produced by the knobs by construction.
#
# **Caveat.** The simulated LLM's behaviour knobs (`budget_anchoring=0.6`) are properties of the simulator, not facts about language models: this notebook shows how to *measure* the effect; running the same sweep with a real model (`backend: {kind: openai}` or `{kind: local}`) shows whether the effect is real. The question sample is small, so read the bootstrap intervals in the table before reading the means.
