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
# > **Finding type:** a property of the simulator's knobs (true by construction). The pipeline's part is
# > measured — whether the controller prompt states the budget — but the *reaction* to a stated budget is
# > the simulated LLM's `budget_anchoring` knob (set to 0.6 here), which fires only when its prompt states
# > one. So disclosure adding rounds is built into the simulator; what this notebook measures is how much,
# > where, and what the pipeline's other guards (the cap, the zero-yield stop, the router) leave of it.
#
# Should the controller be told its budget? **BudgetDisclosure** decides whether the controller prompt
# states the cap ("You may run at most N searches in total") or only asks it to "use as few searches as
# possible". Either way the cap itself is enforced in code (notebook 01).

# %% [markdown]
# ## The story
#
# The agent reasoning & planning article (the DocMind agentic loop) reports a behavioural finding from
# its traces. Its system prompt once told the model "you may call tools at most 4 times", and the traces
# showed simple factual questions running all four rounds: with budget left, the model kept searching
# "just in case". The fix was one sentence — "use as few rounds as possible" — while the hard limit of
# four stayed in the code's loop, invisible to the model. The average went from 3.2 to 1.8 iterations per
# question, about 44% fewer LLM calls, and the saving came mostly from simple questions (complex ones
# needed their rounds anyway). The article's lesson: a prompt is a soft constraint, and telling a model
# its budget can *anchor* it to spend the budget; keep the limit in code and keep it out of the prompt.
#
# Those numbers were a real model's behaviour. The simulated LLM has a documented knob for it, so this
# notebook shows how to measure the effect — and a real backend would show whether your model has it.

# %% [markdown]
# ## The policy, as implemented
#
# `rag_lab.pipeline.policies.BudgetDisclosure` has one field, `disclosed` (sweep key
# `disclosure.disclosed`, default `False`). `rag_lab.llm.prompts.controller_prompt` writes either
# sentence into the controller's system message; nothing else in the pipeline reads the flag. On the
# simulator's side (`rag_lab/llm/sim/controller.py`), `budget_anchoring` fires only when a regex finds a
# stated budget in the prompt and fewer searches than that have run: instead of stopping, the controller
# searches again with a paraphrase. Its documented opposite, `budget_thrift` (0.15 in `typical`), makes a
# controller that knows its budget skip a paraphrase re-search. The simulator never sees the config — only
# the prompt.

# %%
from rag_lab.experiments import FindingFamily, contrasts, paired_finding, robustness
from rag_lab.figures import cost_quality_figure, cost_quality_info, trace_timeline_figure, trace_timeline_info
from rag_lab.llm import prompts
from rag_lab.pipeline import PipelineConfig
from rag_lab.pipeline.policies import BudgetDisclosure
from rag_lab.widgets import PolicyExplorer, TraceViewer, lesson_sweep, setup_notebook

setup_notebook(BudgetDisclosure, colwidth=80)
for disclosed in (False, True):
    system = prompts.controller_prompt("(question)", [], ["(first search)"], 4, disclosed)[0].content
    print(f"disclosed={disclosed}:", next(s.strip() + "." for s in system.split(".") if "searches" in s))

# %% [markdown]
# ## The sweep
#
# 80 questions (the first 10 test questions of each type), disclosed or hidden, with caps of 2 and 4
# rounds (4 is the article's limit). The simulator runs the `typical` profile and
# one knob raised: `budget_anchoring` from 0.2 to 0.6, so that the effect is visible on 80 questions. The
# Pareto front is computed on the plotted axes: LLM calls per question against strict answer containment.

# %%
COST, QUALITY, KNOBS = "cost_llm_calls", "quality_answer_containment_strict", {"budget_anchoring": 0.6}
spec = {"name": "nb02_budget_disclosure", "dataset": "world", "split": "test", "per_type": 10,
        "backend": {"kind": "sim", "profile": "typical", "knobs": KNOBS},
        "grid": {"disclosure.disclosed": [False, True], "round_cap.max_rounds": [2, 4]}}
result = lesson_sweep(spec, pareto=(COST, QUALITY))
ARM = {(shown, cap): {"disclosure.disclosed": shown, "round_cap.max_rounds": cap} for shown in (False, True) for cap in (2, 4)}
D4, H4 = ARM[True, 4], ARM[False, 4]  # disclosed and hidden, at a cap of 4
table = contrasts.labelled_table(result, ["param_round_cap.max_rounds", f"{QUALITY}±", "quality_abstention_accuracy",
                                          "cost_rounds", COST, "cost_tokens", "is_pareto"])
table

# %%
cost_quality_figure(cost_quality_info(table, COST, QUALITY, color_by="param_round_cap.max_rounds", text_col="label"))

# %% [markdown]
# Rounds per question by type at a cap of 4, hidden against disclosed, with the share of each type's
# questions the router sent into the controller loop (`COMPLEX`; `SIMPLE` questions take one-shot
# retrieval and never read the controller prompt):

# %%
AT4 = contrasts.named(result, {"hidden": H4, "disclosed": D4})
routed = contrasts.group_share(result, H4, "route", "COMPLEX")
contrasts.group_means(result, "cost_rounds", AT4).add_prefix("rounds, ").assign(**{"share routed COMPLEX": routed}).round(2)

# %% [markdown]
# How often the knob had the opportunity and fired, read from the disclosed run's traces (with the budget
# hidden it never has an opportunity):

# %%
contrasts.knob_table(result, AT4, ["budget_anchoring", "budget_thrift", "synonym_spinning"])

# %% [markdown]
# ## The mechanism in one trace
#
# The question on which the disclosed and the hidden budget (cap 4) differ most in LLM calls (ties: the
# first in question order). Read the controller steps of the disclosed run: the knobs that fired on each
# call, and the paraphrase searches they led to.

# %%
qid = contrasts.contrast_question(result, D4, H4, COST)
contrasts.trace_contrast(result, AT4, qid, steps=["controller", "retrieve"])

# %%
trace_timeline_figure(trace_timeline_info(result.traces(AT4["disclosed"])[qid]))

# %%
TraceViewer(result).select(candidate_id=AT4["disclosed"], qid=qid)

# %% [markdown]
# ## Try it yourself
#
# The explorer runs the full pipeline on the first 12 `comparison` test questions (every one enters the
# controller loop) with the same simulator knobs, a cap of 4 to start from. Tick `disclosure.disclosed`
# and move the cap; each configuration adds a point. Run headless, the cell below runs the starting
# configuration (budget hidden) once.

# %%
explorer = PolicyExplorer(dataset="world", params=["disclosure.disclosed", "round_cap.max_rounds"], split="test",
                          types=["comparison"], limit=12, base=PipelineConfig().with_params(H4), knobs=KNOBS)
explorer

# %%
explorer.run(wait=True)  # the budget hidden, cap 4, on the comparison questions: LLM calls and rounds per question

# %% [markdown]
# ## The finding
#
# At the article's cap of 4, the disclosed budget against the hidden one, paired on the same 80 questions:
# the claim is that disclosure raises LLM calls per question. If `controller_prompt` ignored the flag (the
# same sentence either way), the simulator could not tell the two apart and the Δ would be 0.

# %%
FINDINGS = FindingFamily(size=2, name="02_budget_disclosure")   # Holm over this notebook's two claims
control = lesson_sweep(spec, name="nb02_control", grid={"disclosure.disclosed": [False, True], "round_cap.max_rounds": [4]},
                       backend={**spec["backend"], "knobs": {**KNOBS, "budget_anchoring": 0.0, "budget_thrift": 0.0}})
finding = paired_finding(result, COST, candidate=D4, reference=H4, direction="above", kind="by_construction", control=control,
                         family=FINDINGS, claim="stating the budget in the controller prompt raises LLM calls (budget anchoring)")
answers = paired_finding(result, QUALITY, candidate=D4, reference=H4, direction="none", margin=0.1, kind="measured",
                         family=FINDINGS, claim="the anchored rounds buy no answers (strict containment within ±0.1)")
assert finding.holds, finding.message
assert answers.holds, answers.message
contrasts.findings_table(finding, answers)

# %%
gaps = contrasts.paired_blocks(result, ["cost_rounds", COST, QUALITY],
                              {f"cap {c}": (ARM[True, c], ARM[False, c]) for c in [2, 4]})
stops = contrasts.value_counts(result, "stop_reason", AT4)  # how the runs ended at a cap of 4
# what the prose below reads off the numbers: a cap of 2 leaves less room to anchor than a cap of 4; the gap is
# smaller than the article's 3.2 -> 1.8 rounds; single-hop questions enter the loop too; more empty-round stops
assert gaps.loc[("cap 2", "cost_rounds"), "delta"] < gaps.loc[("cap 4", "cost_rounds"), "delta"] < 3.2 - 1.8, gaps
assert routed["single"] > 0.5 and stops.loc["empty_round", "disclosed"] > stops.loc["empty_round", "hidden"], stops
display(gaps, stops)  # noqa: F821

# %% [markdown]
# ## What was measured
#
# The tables above give, for each cap, the mean rounds, LLM calls and strict containment with the budget
# hidden and disclosed and their paired differences; then how the runs ended. Read three things: the size
# of the gap at each cap (a cap of 2 leaves room for only one anchored round: asserted smaller than at 4),
# whether the extra rounds buy any answers (the containment rows), and how far the gap is from the
# article's 3.2 → 1.8 rounds. It is smaller here (asserted), and not because simple questions skip the
# controller (the article's savings came mostly from simple questions): on the world the router sends the
# single-hop questions into the loop too (asserted: most are routed COMPLEX), where they read the stated
# budget like the rest. The gap is smaller because an anchored paraphrase search often brings back only
# chunks already seen, so the zero-yield stop (notebook 03) ends the run there — the disclosed runs end on
# an empty round more often (asserted; the stop-reason table).
#
# **Caveat.** The anchoring is the simulator's `budget_anchoring` knob at 0.6 — a setting, not a
# measurement of any language model; the size of the gap follows from it (and from `budget_thrift`, which
# pushes the other way). Run the same sweep with a real model (`backend: {kind: openai}` or `{kind: local}`)
# to learn whether your model anchors.

# %% [markdown]
# ## Try this
#
# 1. Set `budget_anchoring` to 0 in `KNOBS` and re-run: the disclosure gap in LLM calls closes. Does it
#    change sign? (`budget_thrift` still fires on a disclosed budget.)
# 2. Add `"zero_yield.enabled": False` to the spec's `base`: how many rounds does an anchored controller
#    run now, at caps 2 and 4?
# 3. Add `"router.enabled": False` to `base` so every question enters the controller loop, as in the
#    article: which question types pay most for a disclosed budget now?
# 4. Set `budget_anchoring` to 1.0 and the cap to 10: how close does the disclosed run get to using the
#    whole budget on every question?

# %% [markdown]
# ## Where this finding holds
#
# The same claim re-run by `rag-lab robustness` on the world, on the first 60 questions of the HotpotQA and
# MuSiQue samples, with two simulator seeds (paired Δ, interval, exact p, Holm over the whole table; the
# table ships in `data/robustness.md` and the test suite fails when it is older than the simulator). A
# finding that holds only on the world is a property of the world and this simulated model, not of the
# policy: read the verdicts below before quoting the notebook's number.

# %%
print(robustness.quote("disclosure_calls"))

# %% [markdown]
# [← previous](01_round_cap.ipynb) · [next →](03_zero_yield_stop.ipynb)
