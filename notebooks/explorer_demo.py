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
# # Policy explorer
#
# Steer two policies and watch cost vs quality move. `PolicyExplorer` builds one control per dotted
# policy parameter from the policy's field type and bounds (a slider for `round_cap.max_rounds`, a
# dropdown for `truncation.strategy`). Moving a control runs the real pipeline over the chosen questions
# (here the first 12 `bridge` test questions of the shipped world, two-hop, so the round cap binds;
# the cached `typical` simulator) and adds that configuration's point to the cost-vs-quality plot: mean
# LLM calls per question against strict answer containment, with its 95% interval, the Pareto front, and the
# latest run ringed.
#
# The same actions are plain methods (`run`, `with_params`, `wait`), so this notebook also runs headless
# (nbmake); `tests/browser/test_policy_explorer_browser.py` opens it in JupyterLab and moves the slider.

# %%
from rag_lab.widgets import PolicyExplorer

explorer = PolicyExplorer(dataset="world", params=["round_cap.max_rounds", "truncation.strategy"], split="test",
                          types=["bridge"], limit=12)
explorer

# %% [markdown]
# Run the configuration the controls show (the defaults): its point appears above.

# %%
point = explorer.run(wait=True)
assert point["n_questions"] == 12 and explorer.runs_completed == 1 and len(explorer.points) == 1, explorer.points
print(f"{point['n_questions']} questions in {point['seconds']:.2f} s: "
      f"containment={point['quality_answer_containment_strict']:.3f}, LLM calls={point['cost_llm_calls']:.2f} per question")

# %%
columns = ["param_round_cap.max_rounds", "param_truncation.strategy", "quality_answer_containment_strict",
           "quality_answer_containment_strict_lo", "quality_answer_containment_strict_hi", "quality_answer_containment", "cost_llm_calls", "cost_tokens", "is_pareto"]
explorer.points[columns]

# %% [markdown]
# ## What was measured
#
# One run of the default configuration on 12 two-hop (`bridge`) test questions: mean strict answer containment
# (with its 95% interval) against mean LLM calls and tokens per question, and how long the run took.
# Moving a control above adds one point per new configuration; with 12 questions the interval is wide,
# so read a move on the plot as a direction to sweep properly (`rag_lab.experiments.run_sweep`), not as
# a result.
