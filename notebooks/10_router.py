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
# # 10 · Router: SIMPLE vs COMPLEX, and the comparison upgrade
#
# > **Finding type:** a property of the simulator's knob `comparison_underrate` (by construction) for *how
# > often* the upgrade fires; measured through the pipeline for *what it buys*. The upgrade only has work
# > to do when the router calls a comparison SIMPLE, and here the knob makes the simulated router do that
# > for every comparison it sees (rate 1.0; at 0 the upgrade never fires on the world). What the upgraded
# > questions then gain — a controller, a second round, the other side's evidence, the answer — comes from
# > the loop running real retrieval on the world.
# >
# > **Where it holds:** (✓ holds, ~ sign agrees but not shown, · no question differs, ✗ sign disagrees, ∅ undefined,
# > ? not recorded, – not applicable, blank: not run there; every cell in `data/robustness.md`) world ~~, HotpotQA
# > ··, MuSiQue ··; Qwen2.5-Coder-1.5B: HotpotQA v1 –, HotpotQA v2 –, MuSiQue v2 –, world v2 –, HotpotQA v3 –,
# > MuSiQue v3 – — on the real samples no question's answer differs.
#
# A **router** sends each question down one of two paths: SIMPLE questions get one-shot retrieval and an
# answer, no controller; COMPLEX ones enter the controller loop, which may search again. The LLM
# classifies. A deterministic rule then **upgrades** SIMPLE to COMPLEX when the question uses comparison
# wording ("vs", "compare", "difference between", "respectively", "both"), because small models
# under-rate comparisons. This notebook measures what the upgrade buys when the router gets comparisons
# wrong, and what the router itself costs.

# %% [markdown]
# ## The story
#
# The agent reasoning and planning article (a document-search agent, "DocMind") describes three failure
# modes found by reading traces. One is a *premature stop on a comparison*: a user asked for the difference
# between Redis and Memcached; the agent searched "Redis" once and answered. The trace showed one round: the
# query-understanding step had classified the question SIMPLE, so it took the one-shot path and never got a
# second search. Even in the agentic loop a model may stop early because the first round returned
# *something*.
#
# The fix was not a better prompt — the article calls under-rating multi-focus questions a capability limit
# of the small classifier model, which prompt wording does not cure. A deterministic post-processing step
# upgrades any question with strong comparison signals ("compare", "respectively", "vs", "difference") so
# it always reaches the agentic loop, where the prompt asks the model to search each side separately. The
# pattern is deliberately conservative: only high-certainty words, to avoid upgrading questions that do
# not need it. The router itself stays coarse — SIMPLE or COMPLEX, nothing finer — and the loop decides at
# run time how to decompose.

# %% [markdown]
# ## The policy, as implemented
#
# `rag_lab.pipeline.policies.Router`: `enabled` (default on; off sends every question to the loop with no
# route call), `comparison_upgrade` (default on) and `comparison_words` (the word list, matched on word
# boundaries, case-insensitive); sweep keys `router.enabled`, `router.comparison_upgrade`,
# `router.comparison_words`. The route step is `_OneQuestion._route` in `rag_lab/pipeline/pipeline.py`: one
# `route` LLM call (an invalid output falls back to COMPLEX), then the upgrade, recorded as an intervention
# ("comparison wording: route upgraded SIMPLE → COMPLEX"). A SIMPLE route skips the controller loop after
# round 1.

# %%
import pandas as pd

from lessons import FindingFamily, contrasts, findings_markdown, lesson_sweep, paired_finding, robustness, settings, setup_notebook
from rag_lab.figures import cost_quality_figure, cost_quality_info, trace_timeline_figure, trace_timeline_info
from rag_lab.loaders import load_dataset
from rag_lab.pipeline import Intervention, PipelineConfig
from rag_lab.pipeline.policies import Router
from rag_lab.widgets import PolicyExplorer, TraceViewer

setup_notebook(Router)

# %% [markdown]
# ## The questions
#
# The world's 30 `comparison` test questions compare two services (replicas, language, launch year), and
# each needs two documents (`min_hops` 2). Which test questions the rule can reach at all, by type — it
# needs no pipeline run, only the word list:

# %%
world, router = load_dataset("world"), Router()  # the pipeline's own rule: Router.has_comparison_wording
reach = pd.DataFrame([{"qid": q.qid, "type": q.type, "question": q.text, "comparison wording":
                       router.has_comparison_wording(q.text)} for q in world.evalset.select(split="test")])
reach.groupby("type")["comparison wording"].agg(**{"with wording": "sum", "questions": "count"})

# %% [markdown]
# Only comparison questions use the words, so the upgrade cannot touch any other type on the world; and
# the rule is conservative — some comparisons are phrased without any of its words:

# %%
reach[reach["type"] == "comparison"].groupby("comparison wording").head(3)[["question", "comparison wording"]]

# %% [markdown]
# ## The sweep
#
# The 30 comparison test questions (the only ones the rule can reach, above). Three configurations: the
# router with the upgrade (the default), the router without it, and no router (every question enters the
# loop). Two settings make the mechanism visible, and the notebook says so rather than
# hiding them:
#
# * the simulator's `comparison_underrate` knob at 1.0 — the simulated router calls *every* comparison
#   SIMPLE (the `typical` profile's rate is 0.2, which leaves only a handful of opportunities in 30
#   questions);
# * `retrieval.top_k` = 2 — one round of two chunks rarely covers both sides of a comparison, so one-shot
#   retrieval is not enough (with the default 5 chunks one round often covers both: try it below).
#
# The simulated LLM otherwise runs the `typical` profile. The Pareto front is computed
# on the plotted axes: LLM calls per question against strict answer containment.

# %%
S = settings.ROUTER  # the lesson's setting (comparison_underrate 1.0, top k 2, the 30 comparisons): its robustness row reads it too
COST, QUALITY, KNOBS = "cost_llm_calls", "quality_answer_containment_strict", dict(S.knobs)
spec = S.sweep("nb10_router", [{"router.enabled": [True], "router.comparison_upgrade": [True, False]}, {"router.enabled": [False]}])
result = lesson_sweep(spec, pareto=(COST, QUALITY))
UPGRADE, NO_UPGRADE = S.candidate, S.reference  # the router with and without the comparison upgrade
NAMES = contrasts.named(result, {"router + upgrade": UPGRADE, "router, no upgrade": NO_UPGRADE,
                                 "no router": {"router.enabled": False}})
table = contrasts.labelled_table(result, [f"{QUALITY}±", "quality_rounds_at_least_hops", "quality_evidence_recall",
                                          "cost_rounds", COST, "cost_tokens", "is_pareto"], NAMES)
table

# %%
cost_quality_figure(cost_quality_info(table, COST, QUALITY, text_col="label"))

# %% [markdown]
# Routes taken by configuration, and the means split by whether the question uses the rule's words: the
# upgrade can only change the questions that do.

# %%
print("routes upgraded (by code):", len(contrasts.with_intervention(result, UPGRADE, Intervention.COMPARISON_UPGRADE, "route")))
contrasts.value_counts(result, "route", NAMES)

# %%
contrasts.group_means(result, [QUALITY, "quality_rounds_at_least_hops", COST], NAMES,
                      by=reach.set_index("qid")["comparison wording"].to_dict()).rename_axis(index="comparison wording").round(3)

# %% [markdown]
# ## The mechanism in one trace
#
# The first comparison question (in question order) whose strict containment differs between the router
# with and without the upgrade, step by step under both: the same SIMPLE verdict from the router, then
# one-shot retrieval without the upgrade, and the loop with it (the timeline below is the upgraded run).

# %%
qid = contrasts.contrast_question(result, UPGRADE, NO_UPGRADE, QUALITY)  # the first that differs (or the first)
print(f"{len(contrasts.differing(result, UPGRADE, NO_UPGRADE, QUALITY))} differ; shown {qid}: {world.evalset[qid].text}")
contrasts.trace_contrast(result, {k: NAMES[k] for k in ("router, no upgrade", "router + upgrade")}, qid)

# %%
trace_timeline_figure(trace_timeline_info(result.traces(NAMES["router + upgrade"])[qid]))

# %% [markdown]
# Any question and configuration, in the trace viewer:

# %%
TraceViewer(result).select(candidate_id=NAMES["router + upgrade"], qid=qid)

# %% [markdown]
# ## Try the router yourself
#
# The explorer runs the full pipeline on the first 12 comparison test questions with the same settings
# (under-rating router, two chunks per search), starting without the upgrade. Switch `comparison_upgrade`
# on, or the router off, and compare the points; headless, the cell below runs the starting configuration
# once.

# %%
explorer = PolicyExplorer(dataset="world", params=["router.enabled", "router.comparison_upgrade"], split="test",
                          types=["comparison"], limit=12, knobs=KNOBS,
                          base=PipelineConfig().with_params({"retrieval.top_k": 2, "router.comparison_upgrade": False}))
explorer

# %%
explorer.run(wait=True)  # the starting point: no upgrade, on the comparison questions

# %% [markdown]
# ## The finding
#
# The router with the upgrade against the router without it, paired on the same 30 questions: the claim
# is that upgrading comparison wording to COMPLEX answers more questions (the paired Δ of strict
# containment lies above 0). If the upgrade rule were a no-op, the two configurations would route, retrieve
# and answer identically and the Δ would be 0.

# %%
FINDINGS = FindingFamily(size=1, name="10_router")
control = lesson_sweep(spec, name="nb10_control", grid={"router.enabled": [True], "router.comparison_upgrade": [True, False]},
                       backend={**spec["backend"], "knobs": {**KNOBS, "comparison_underrate": 0.0}})  # no under-rating
finding = paired_finding(result, QUALITY, candidate=UPGRADE, reference=NO_UPGRADE, direction="above",
                         kind="by_construction", control=control, family=FINDINGS,
                         claim=robustness.claim("router_upgrade"))
assert finding.holds, finding.message
findings_markdown(finding, where=["router_upgrade"])

# %%
contrasts.paired_summary(result, [QUALITY, "quality_rounds_at_least_hops", COST, "cost_tokens"], UPGRADE, NO_UPGRADE)

# %%
contrasts.interval_table(result, [QUALITY, COST, "cost_tokens"], reference={"router.enabled": False})

# %% [markdown]
# ## What was measured
#
# The configuration table gives each configuration's strict containment, share of questions given at least
# their minimum hops, and cost; the two tables above give the paired differences (the upgrade against no
# upgrade: both means, Δ [lo, hi], questions better and worse, p; then every configuration against no
# router). Read the upgrade rows together: the containment
# gain (asserted), the rounds gain that explains it (the upgraded comparisons got a controller, which asked
# for the other side), and the calls it costs (one controller call or more on each upgraded question).
# The wording table shows that the gain and the cost sit on the questions the rule's words reach.
#
# Then the router rows, which are about the router itself rather than the upgrade: on these questions a
# route call is one LLM call on *every* question, while the loop it saves on a SIMPLE question is often
# one controller call that answers at once — so read whether routing saves calls at all here, and whether
# the no-router configuration loses any answers. The router pays for itself where the loop is expensive
# and SIMPLE questions are common; on this mix, measure before assuming it does.
#
# **Caveat.** How often the router under-rates a comparison is a simulator knob, set here to its worst case;
# a real small model under-rates some comparisons, not all. Run the same sweep with `backend: {kind: openai}`
# or `{kind: local}` and read how many routes the rule upgrades (the `routes` table) before reading the gain.

# %% [markdown]
# ## Try this
#
# Each exercise says what to expect; unfold its worked answer after trying it (the code runs in a
# cell added below the notebook's own, after the notebook has run).
#
# 1. Set `comparison_underrate` in `KNOBS` to 0.2 (the `typical` rate) and re-run: how many questions does the rule upgrade now, and does the containment interval still exclude 0?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** far fewer upgrades (the router under-rates a comparison one time in five), so the paired interval likely includes 0 on 30 questions.
#
# ```python
# typical = lesson_sweep(spec, pareto=(COST, QUALITY), name="nb10_typical", backend={**spec["backend"], "knobs": {**KNOBS, "comparison_underrate": 0.2}})
# contrasts.interval_table(typical, [QUALITY, COST], reference=NO_UPGRADE)
# ```
#
# Read the upgrade row's interval; the share of questions that differ is the number of upgrades that changed anything.
#
# </details>
#
# 2. Remove `"retrieval.top_k": 2` from `base` (back to 5 chunks per search): does the upgrade still buy answers when one round already covers both sides? What does it still cost?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** a smaller gain (one-shot retrieval with 5 chunks often finds both sides) at the same price: the upgraded questions still pay for the controller loop.
#
# ```python
# wide = lesson_sweep(spec, pareto=(COST, QUALITY), name="nb10_top_k5", base={k: v for k, v in spec["base"].items() if k != "retrieval.top_k"})
# contrasts.interval_table(wide, [QUALITY, COST], reference=NO_UPGRADE)
# ```
#
# Compare the upgrade row with the notebook's interval table.
#
# </details>
#
# 3. Widen the rule: add `"router.comparison_words"` to `base` with the default words plus `"between"` and `"first"`. How many more comparisons are upgraded — and, with `"types"` extended to all eight types, how many non-comparisons are upgraded by mistake?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** a few more comparisons caught, and some non-comparisons (any question with "first" in it) upgraded for nothing: they pay the loop and gain no answer.
#
# ```python
# from rag_lab.pipeline.policies import Router
# words = [*Router().comparison_words, "between", "first"]
# wider = lesson_sweep(spec, pareto=(COST, QUALITY), name="nb10_words", types=None, per_type=10, base={**spec["base"], "router.comparison_words": words})
# contrasts.labelled_table(wider, [QUALITY, COST])
# ```
#
# Count the upgrades by type in the trace viewer (the router step records the upgrade).
#
# </details>
#
# 4. Swap the cost axis for `cost_tokens` in `cost_quality_info`: does the no-router configuration still look cheapest when a controller prompt costs more tokens than a route prompt?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** the order of the points can change: every question without a router enters the controller loop, whose prompts are longer than the route prompt.
#
# ```python
# cost_quality_figure(cost_quality_info(contrasts.labelled_table(result, [QUALITY, "cost_tokens"]), "cost_tokens", QUALITY, text_col="label"))
# ```
#
# Compare the horizontal order of the points with the calls plot.
#
# </details>

# %% [markdown]
# [← previous](09_judge_input.ipynb) · [next →](11_source_contract.ipynb)
