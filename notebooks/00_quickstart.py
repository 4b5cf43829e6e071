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
# # 00 · Quickstart: one question, every metric, one plot
#
# > **Finding type:** measured — a property of the pipeline on the shipped world. The finding (a second retrieval
# > round buys answers on two-hop questions, at a price in LLM calls) comes from the loop running real retrieval
# > over the world's corpus. The simulated model routes the question, decides when to ask for another round and
# > writes the answer that is scored — from the evidence retrieval found; it never sees the gold labels.
# >
# > **Where it holds:** measured here on the world's two-hop test questions (simulator seed 0). The same contrast on
# > bridge questions, notebook 01's robustness row (✓ holds, ~ sign agrees but not shown, · no question differs, ✗
# > sign disagrees, ∅ undefined, ? not recorded, – not applicable; every cell in `data/robustness.md`): world ✓✓,
# > HotpotQA ~~, MuSiQue ~~; Qwen2.5-Coder-1.5B: HotpotQA v1 ·, HotpotQA v2 ~, MuSiQue v2 ~, world v2 ·, HotpotQA v3
# > ~*, MuSiQue v3 ~* (* measured as max_rounds 1 vs 3).
#
# This notebook is the course's first page. It shows the data the lab ships with, runs **one question**
# through the full pipeline and reads its trace, defines **every metric** the course uses (quality and
# cost, incurred and spent), and ends with the plot every later notebook draws — cost against quality — and
# how to read it: error bars, the Pareto front, and the *paired* difference that decides whether two
# configurations really differ.

# %% [markdown]
# ## The story
#
# A retrieval loop that lets the model decide when to search again is flexible and dangerous: it can keep
# rewriting the query, burn calls, and — with no new evidence — grow more confident in a story it made up.
# A fully deterministic one-shot retrieval is cheap and stable but cannot follow a chain ("the chat channel of
# *the team Felix Larsen belongs to*"). The design article behind the controller of the mt_rag system takes
# the middle road: the LLM judges meaning, the **code** owns the budget — at most two retrieval rounds,
# structured decisions, a deterministic fallback, and guards that have the last word. The agent-reasoning
# article adds the failure modes such a loop shows in practice: anchoring on a disclosed budget, paraphrase
# searches that find nothing new. Every notebook after this one takes one such guardrail and measures what it
# costs and what it buys.

# %%
import tempfile

import pandas as pd

from lessons import FindingFamily, contrasts, findings_markdown, lesson_sweep, paired_finding, setup_notebook
from rag_lab.evaluation import label, question_metrics, steps_table
from rag_lab.figures import cost_quality_figure, cost_quality_info, forest_figure, forest_info, trace_timeline_figure
from rag_lab.figures import trace_timeline_info
from rag_lab.llm.factory import make_backend
from rag_lab.pipeline import Pipeline, PipelineConfig
from rag_lab.widgets import PolicyExplorer, shared_data, simulator_backend

setup_notebook()

# %% [markdown]
# ## The world
#
# The lab ships a synthetic company world (people, teams, projects, services, their documents) generated
# from a seed, with questions of eight types; each question knows its gold answer, its gold documents and
# the minimum number of retrieval hops it needs. Those labels are used **only** to score runs — the
# simulated model never reads them. Real questions (HotpotQA, MuSiQue, SciFact) ship too:
# notebook 15 runs the same experiment on them.

# %%
world, resources = shared_data("world")  # the world's corpus and evaluation set, and its indexes
print(f"{len(world.corpus)} documents, {len(world.evalset)} questions",
      {split: len(world.evalset.select(split=split)) for split in world.evalset.splits})
pd.DataFrame([{"type": t, "question": q.text, "gold answer": q.answer or "(unanswerable)",
               "gold documents": ", ".join(q.gold_doc_ids), "min hops": q.min_hops}
              for t in world.evalset.type_counts() for q in list(world.evalset.select(split="test", types=[t], limit=1))])

# %% [markdown]
# `single` needs one document; `bridge` two, the second found through an entity named in the first;
# `comparison` two, one per side; `alias` and `mismatch` ask in words the corpus does not use; `vague`
# under-specifies; `stale` has an outdated and a current document; `unanswerable` has no answer in the
# corpus — the right output is a refusal.

# %% [markdown]
# ## One question, end to end
#
# A pipeline is a configuration (one frozen, validated object per policy), the corpus resources
# (chunks, dense and BM25 indexes) and an LLM backend — here the simulated model with its `typical`
# profile (its one reader, the same on the world and on real text), behind the response cache.

# %%
question = next(iter(world.evalset.select(split="test", types=["bridge"], limit=1)))
pipeline = Pipeline(PipelineConfig(), resources, simulator_backend("typical"))  # cached
result, trace = pipeline.run(question)
print("question:", question.text, "\nanswer:  ", result.answer)
print("status:", result.status, "| stop reason:", trace.stop_reason, "| rounds:", trace.rounds_used, "| route:", result.route,
      "| CRAG grade:", result.crag_grade, "\ngold answer:", question.answer, "| gold documents:", question.gold_doc_ids)

# %% [markdown]
# The trace records every step: the route, each retrieval round with its queries and the *new* chunks it
# found (its yield), each controller decision, finalize, generate and the guard. Hover a step for its
# details.

# %%
trace_timeline_figure(trace_timeline_info(trace))

# %%
steps_table(trace)

# %% [markdown]
# ## Every metric, defined
#
# Each question run becomes one row of metrics. **Quality** (`quality_*`, in [0, 1], undefined where they
# do not apply, e.g. answer metrics on an unanswerable question):
#
# | column | meaning |
# |---|---|
# | `quality_answer_containment_strict` | **the headline metric**: the normalized gold answer appears in a *short* answer (two sentences at most, citations removed), in the answer's own words — runs copied from the question do not count. An echoed prompt or a pasted evidence block scores 0. |
# | `quality_answer_containment` | the lenient form: the gold answer anywhere in the answer (the usual metric for long answers; a parrot can beat it) |
# | `quality_exact_match`, `quality_f1` | SQuAD-style exact match and token F1 against the gold answer (and its aliases) |
# | `quality_has_answer_in_context` | the gold answer string is in the final context the generator saw (retrieval accuracy in the DPR sense) |
# | `quality_evidence_recall` / `_precision` | share of gold documents in the final context / share of the final context that is gold |
# | `quality_later_gold_retained` | of the gold documents first found in round 2 or later, the share that reached the final context |
# | `quality_citation_precision` / `_validity` | cited chunks that are gold or contain the answer / citations that pointed into the context |
# | `quality_abstention_accuracy` | refused an unanswerable question, or answered an answerable one |
# | `quality_refused`, `quality_echo`, `quality_fallback` | refusal rate; the echo guard rejected a parroted draft; any deterministic fallback was used |
# | `quality_rounds_at_least_hops` | the loop ran at least the question's minimum number of hops |
#
# **Cost** (`cost_*`, per question): retrieval rounds, LLM calls (and by role: `cost_calls_controller`, …),
# prompt and completion tokens, money from a price table, modelled LLM latency, retrieval and embedding calls.

# %%
pd.DataFrame([{"column": k, "what": label(k), "value": v} for k, v in question_metrics(question, result, trace).items()
              if k.startswith(("quality_", "cost_", "spent_"))])

# %% [markdown]
# ### Incurred vs spent
#
# `cost_*` counts every LLM call **as the policy incurred it**, whether or not the response cache answered
# it: the cost of a configuration must not depend on what ran before. `spent_*` counts only the calls the
# cache did not answer — what this run actually used. Run the same question again: the incurred cost is
# identical, the spend is zero.

# %%
# the same pipeline behind an empty response cache, for this demo
fresh = Pipeline(pipeline.config, resources, make_backend("sim", profile="typical", cache=f"{tempfile.mkdtemp()}/cache.sqlite"))
for attempt in ("first run", "second run"):
    m = question_metrics(question, *fresh.run(question))
    print(f"{attempt}: incurred {m['cost_llm_calls']} LLM calls ({m['cost_tokens']} tokens), spent {m['spent_llm_calls']}")

# %% [markdown]
# ## A sweep, and how to read its plot
#
# A sweep runs the full pipeline over an evaluation set for each configuration in a grid. Here: the 60
# two-hop test questions (`bridge` and `comparison`), with the round cap at 1 or 2 (2 is the default —
# the *base* configuration every other candidate is compared with).

# %%
COST, QUALITY = "cost_llm_calls", "quality_answer_containment_strict"
spec = {"name": "nb00_quickstart", "dataset": "world", "split": "test", "types": ["bridge", "comparison"],
        "backend": {"kind": "sim", "profile": "typical"}, "grid": {"round_cap.max_rounds": [1, 2]}}
result_sweep = lesson_sweep(spec, pareto=(COST, QUALITY))
contrasts.labelled_table(result_sweep, ["param_round_cap.max_rounds", f"{QUALITY}±", COST, "is_pareto"])

# %% [markdown]
# How to read it: each point is one configuration — x its mean cost per question, y its mean quality, the
# vertical bar a 95% bootstrap interval over questions. The line joins the **Pareto front**: the
# configurations no other one beats on both axes at once (computed on the axes shown). Hover a point for
# what it changes.

# %%
cost_quality_figure(cost_quality_info(result_sweep.table, COST, QUALITY, color_by="param_round_cap.max_rounds"))

# %% [markdown]
# Each configuration's own interval is wide because questions differ in difficulty. But both configurations
# answered the **same** questions, so the right question is: *on each question, what changed?* The paired
# difference (candidate − base, per question, then a bootstrap over questions) cancels the shared
# difficulty. The forest plot shows it for every candidate against the base (its legend says what each mark
# means). An interval that does not cross 0 is a difference worth a look, not yet a finding: the finding below is
# the claim stated up front and tested, and its verdict is the one to quote.

# %%
forest_figure(forest_info(result_sweep.compare(QUALITY)))

# %% [markdown]
# ## The finding
#
# The course states each finding as a claim, checks it with the paired difference and asserts it — so
# the notebook fails if the effect disappears (here: if the round cap stopped letting a second round run,
# both configurations would be the same and Δ would be 0).

# %%
FINDINGS = FindingFamily(size=2, name="00_quickstart")   # fixed-sequence correction over the two claims below (tested in the order stated)
TWO, ONE = {"round_cap.max_rounds": 2}, {"round_cap.max_rounds": 1}
finding = paired_finding(result_sweep, QUALITY, candidate=TWO, reference=ONE, direction="above", kind="measured",
                         family=FINDINGS, claim="a second retrieval round answers more two-hop questions")
cost = paired_finding(result_sweep, COST, candidate=TWO, reference=ONE, direction="above", kind="measured",
                      family=FINDINGS, claim="and it costs more LLM calls")
assert finding.holds, finding.message
assert cost.holds, cost.message
findings_markdown(finding, cost, where=["round_cap_bridge"])  # the numbers above, in words

# %% [markdown]
# ## Your turn: steer the pipeline
#
# `PolicyExplorer` builds one control per policy parameter from the policy's field type and bounds. Every
# change runs the **full** pipeline over the chosen questions (here 8 `bridge` test questions) and adds a
# point to the plot; the line under the controls shows the paired Δ of the current point against the first
# one. Move the slider.

# %%
explorer = PolicyExplorer(dataset="world", params=["round_cap.max_rounds", "truncation.strategy"], split="test",
                          types=["bridge"], limit=8)
explorer

# %%
explorer.run(wait=True)  # 8 bridge questions: seconds, strict containment, LLM calls per question

# %% [markdown]
# ## Try this
#
# Each exercise says what to expect; unfold its worked answer after trying it (the code runs in a
# cell added below the notebook's own, after the notebook has run).
#
# 1. Run the explorer at `round_cap.max_rounds` = 1, 2 and 3 (set the slider, or `explorer.with_params(**{"round_cap.max_rounds": 3}); explorer.run()`) and read the Δ line: where does the third round stop paying?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** three points on the plot; the step from 1 to 2 moves the point up and right, the step from 2 to 3 moves it mostly right (more calls) and little or not at all up.
#
# ```python
# for cap in (1, 2, 3):
#     explorer.with_params(**{"round_cap.max_rounds": cap})
#     print(cap, explorer.run(wait=True))
# ```
#
# Each printed point carries its mean LLM calls and strict containment; the status line's Δ is against the first point. A bridge question needs two hops, so a third round has nothing left to find unless round 2 missed the bridge entity.
#
# </details>
#
# 2. Change `types=["bridge"]` to `["single"]`: the round cap should cost nothing there. Does it?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** the cap-1 and cap-2 points at (nearly) the same quality: a single-hop question is answered from round 1's evidence, so a second round rarely runs and rarely adds an answer.
#
# ```python
# single = PolicyExplorer(dataset="world", params=["round_cap.max_rounds"], split="test", types=["single"], limit=8)
# single.run(wait=True)
# ```
#
# Move the slider to 2 in the new explorer and read the Δ line: a Δ interval that straddles 0 is the answer "it costs nothing here".
#
# </details>
#
# 3. Pick another question (`types=["comparison"]`) for the end-to-end run and find, in its trace, the controller decision that asked for a second round.
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** a `controller` step whose action is `retrieve_again`, with refined queries that name the side of the comparison round 1 did not find.
#
# ```python
# question = next(iter(world.evalset.select(split="test", types=["comparison"], limit=1)))
# result, trace = pipeline.run(question)
# steps_table(trace)
# ```
#
# Read the `controller` rows of the steps table: the action and its queries. If the router sent the question down the SIMPLE path there is no controller step at all (notebook 10).
#
# </details>
#
# 4. Swap the y axis in the explorer's axis picker to `gold evidence recall`: is the second round's gain a retrieval gain or an answering gain?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** the points move on recall the way they move on strict containment: the second round's gain starts in retrieval (it brings the second gold document), and the answer follows the evidence.
#
# Compare the Δ line on both axes at caps 1 and 2: if recall rose but containment did not, the evidence was found but not used; if both rose together, the gain is the retrieval's.
#
# </details>
#
# The whole course: [notebooks/README.md](README.md).
#
# [next →](01_round_cap.ipynb)
