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
# > **Finding type:** a property of the simulator's knobs (true by construction). The pipeline's part is measured
# > — whether the controller prompt states the budget — but the *reaction* to a stated budget is the simulated
# > model's: `budget_anchoring` (searching on instead of stopping) and `budget_thrift` (stopping instead of
# > searching), which fire only when the prompt states a budget. So the sign of each profile's effect is built
# > into the simulator (each asserted with its control, both knobs at 0); what is measured is its size, where it
# > falls, what the extra rounds buy in answers, and what the pipeline's other guards (the cap, the zero-yield
# > stop, the router) leave of it.
# >
# > **Where it holds:** (✓ holds, ~ sign agrees but not shown, · no question differs, ✗ sign disagrees, ∅ undefined,
# > ? not recorded, – not applicable; every cell in `data/robustness.md`) the anchored model's extra calls: world
# > ✓✓, HotpotQA ✓✓, MuSiQue ✓✓; Qwen2.5-Coder-1.5B: HotpotQA v1 –, HotpotQA v2 –, MuSiQue v2 –, world v2 –,
# > HotpotQA v3 –, MuSiQue v3 –. The thrifty model's saving: world ✓✓, HotpotQA ~~, MuSiQue ✓✓; Qwen2.5-Coder-1.5B:
# > HotpotQA v1 –, HotpotQA v2 –, MuSiQue v2 –, world v2 –, HotpotQA v3 –, MuSiQue v3 –. Both are the knobs' doing
# > wherever they hold. On the recorded model disclosure is no knob but a measured contrast, each with its study's
# > verdict. The like-for-like study (prompt set v4: the arms differ by the cap clause alone; HotpotQA, cap 4, the
# > zero-yield stop off): more rounds: Qwen2.5-Coder-1.5B: HotpotQA v4 ~; more LLM calls: Qwen2.5-Coder-1.5B:
# > HotpotQA v4 ~. The v3 study's claims (MuSiQue, cap 4, tested outside its pilot; the hidden arm's prompt also
# > asks for few rounds, so the arms differ by more than the budget): more rounds: Qwen2.5-Coder-1.5B: MuSiQue v3 ~;
# > more LLM calls: Qwen2.5-Coder-1.5B: MuSiQue v3 ~.
#
# Should the controller be told its budget? **BudgetDisclosure** decides whether the controller prompt
# states the cap ("You may run at most N rounds of searches in total") or only asks it to "use as few
# rounds of searches as possible". Either way the cap itself is enforced in code (notebook 01).

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
# Those numbers were a real model's behaviour, and the opposite reaction is just as plausible: a model that
# knows how many rounds it has left may economise them and answer as soon as the evidence will do. Which
# one a model is cannot be read off the prompt; it has to be measured. The simulated LLM has a documented
# knob for each reaction and a named profile for each (`anchored`, `thrifty`), so this notebook shows how
# to measure the sign and the size of the effect — and a real backend would show which kind your model is.

# %% [markdown]
# ## The policy, as implemented
#
# `rag_lab.pipeline.policies.BudgetDisclosure` has one field, `disclosed` (sweep key
# `disclosure.disclosed`, default `False`). `rag_lab.llm.prompts.budget_sentence` writes either sentence
# into the controller's system message (`controller_prompt`), in the unit the cap counts — rounds — and
# both arms state the rounds already run. Up to prompt set v3 the two prompts differ by the cap *and* by the hidden
# arm's thrift instruction ("use as few rounds of searches as possible"), which the disclosed arm drops: a contrast of
# the two measures both together. From prompt set v4 on (`prompts.version: v4`) the hidden arm states only the rounds
# run, so the arms differ by the cap clause alone. Nothing else in the pipeline reads the flag. On the simulator's side (`rag_lab/llm/sim/knobs.py`, `controller_knobs`) the
# budget is read from the prompt by a regex ("as few rounds as possible" is not a budget), and two knobs
# react to it, on disjoint opportunities:
#
# * `budget_anchoring` — the model would stop (answer, rerank, insufficient) with rounds left: it searches
#   again with a paraphrase instead;
# * `budget_thrift` — the model would search once more although the evidence already holds an answer it
#   would settle for (`settles`): knowing its budget, it answers now — fewer rounds, and sometimes the
#   answer the skipped search would have improved.
#
# The named profile `anchored` is `typical` with anchoring 0.9 and thrift 0.05; `thrifty` the reverse
# (0.05, 0.8); every other knob is `typical`'s. With the budget hidden neither knob has an opportunity, so
# the two profiles are the same model there. The simulator never sees the config — only the prompt.

# %%
from lessons import FindingFamily, budget_disclosure, contrasts, findings_markdown, lesson_sweep, paired_finding, real_model, robustness, settings, setup_notebook
from rag_lab.figures import cost_quality_figure, cost_quality_info, trace_timeline_figure, trace_timeline_info
from rag_lab.pipeline import PipelineConfig
from rag_lab.pipeline.policies import BudgetDisclosure
from rag_lab.widgets import PolicyExplorer, TraceViewer

setup_notebook(BudgetDisclosure, colwidth=80)

# %% [markdown]
# ## The sweep
#
# 80 questions (the first 10 test questions of each type), the budget disclosed or hidden, caps of 2 and 4
# rounds (4 is the article's limit), each on the two simulated models, `anchored` and `thrifty`
# (`backend.profile` is a grid key like any policy setting). The Pareto front is computed on the plotted
# axes: LLM calls per question against strict answer containment.

# %%
COST, ROUNDS, QUALITY, MODELS = "cost_llm_calls", "cost_rounds", "quality_answer_containment_strict", ["anchored", "thrifty"]
S, THRIFT = settings.BUDGET_DISCLOSURE, settings.BUDGET_THRIFT  # the lesson's settings: its robustness rows read them too
spec = S.sweep("nb02_budget_disclosure", {"disclosure.disclosed": [False, True], "round_cap.max_rounds": [2, 4],
                                          "backend.profile": MODELS})
result = lesson_sweep(spec, pareto=(COST, QUALITY))
ARM = contrasts.along(result, ["backend.profile", "disclosure.disclosed", "round_cap.max_rounds"])  # {(model, shown, cap): id}
# hidden, disclosed at a cap of 4: the anchored model (A0, A1), the thrifty one (T0, T1)
A0, A1, T0, T1 = ({"backend.profile": s.profile, **pick} for s in (S, THRIFT) for pick in (s.reference, s.candidate))
(table := contrasts.labelled_table(result, ["param_backend.profile", "param_round_cap.max_rounds", f"{QUALITY}±", ROUNDS, COST]))

# %%
cost_quality_figure(cost_quality_info(table, COST, QUALITY, color_by="param_backend.profile", text_col="label"))

# %% [markdown]
# Rounds per question by type at a cap of 4, hidden against disclosed for each model, with the share of
# each type's questions the router sent into the controller loop (`COMPLEX`; `SIMPLE` questions take
# one-shot retrieval and never read the controller prompt):

# %%
AT4 = contrasts.named(result, {"anchored hidden": A0, "anchored disclosed": A1, "thrifty hidden": T0, "thrifty disclosed": T1})
routed = contrasts.group_share(result, A0, "route", "COMPLEX")
contrasts.group_means(result, ROUNDS, AT4).assign(**{"share routed COMPLEX": routed}).round(2)

# %% [markdown]
# How often each knob had the opportunity and fired, read from the traces (with the budget hidden neither
# has an opportunity):

# %%
budget_disclosure.knob_table(result, AT4, ["budget_anchoring", "budget_thrift", "synonym_spinning"])

# %% [markdown]
# ## The mechanism in one trace
#
# The question on which the anchored model's disclosed and hidden runs (cap 4) differ most in LLM calls
# (ties: the first in question order), under all four runs. Read the controller steps: the knobs that
# fired on each call, the paraphrase searches anchoring led to, and — in the thrifty model's disclosed
# run — whether it answered where the others searched on.

# %%
qid = contrasts.contrast_question(result, A1, A0, COST)
contrasts.trace_contrast(result, AT4, qid, steps=["controller", "retrieve"])

# %%
trace_timeline_figure(trace_timeline_info(result.traces(AT4["anchored disclosed"])[qid]))

# %%
TraceViewer(result).select(candidate_id=AT4["anchored disclosed"], qid=qid)

# %% [markdown]
# ## Try it yourself
#
# The explorer runs the full pipeline on the first 12 `comparison` test questions (every one enters the
# controller loop) with the anchored model, a cap of 4 to start from. Tick `disclosure.disclosed` and move
# the cap; each configuration adds a point. Run headless, the cell below runs the starting configuration
# (budget hidden) once.

# %%
explorer = PolicyExplorer(dataset="world", params=["disclosure.disclosed", "round_cap.max_rounds"], split="test",
                          types=["comparison"], limit=12, profile="anchored",
                          base=PipelineConfig().with_params({"round_cap.max_rounds": 4}))
explorer

# %%
explorer.run(wait=True)  # the budget hidden, cap 4, on the comparison questions: LLM calls and rounds per question

# %% [markdown]
# ## The findings
#
# At the article's cap of 4, the disclosed budget against the hidden one, paired on the same 80 questions.
# The claims: disclosure raises the anchored model's LLM calls per question and lowers the thrifty model's
# — the sign of the effect belongs to the model, not to the policy — and the anchored model's extra rounds
# buy no answers. Each by-construction claim carries its control: the same sweep with both knobs at 0,
# where disclosure must change nothing. If `controller_prompt` ignored the flag (the same sentence either
# way), the simulator could not tell the arms apart and both Δ would be 0.

# %%
FINDINGS = FindingFamily(size=3, name="02_budget_disclosure")   # fixed-sequence correction over this notebook's three claims (tested in the order stated)
control = lesson_sweep(spec, name="nb02_control", grid={**spec["grid"], "round_cap.max_rounds": [4]},
                       backend={**spec["backend"], "knobs": {"budget_anchoring": 0.0, "budget_thrift": 0.0}})
anchors = paired_finding(result, COST, candidate=A1, reference=A0, direction="above", kind="by_construction", control=control,
                         family=FINDINGS, claim=robustness.claim("disclosure_calls"))
saves = paired_finding(result, COST, candidate=T1, reference=T0, direction="below", kind="by_construction", control=control,
                       family=FINDINGS, claim=robustness.claim("disclosure_thrift_calls"))
answers = paired_finding(result, QUALITY, candidate=A1, reference=A0, direction="none", margin=0.1, kind="measured",
                         family=FINDINGS, claim="the anchored rounds buy no answers (strict containment within ±0.1)")
assert anchors.holds, anchors.message
assert saves.holds, saves.message
assert answers.holds, answers.message
findings_markdown(anchors, saves, answers, where=["disclosure_calls", "disclosure_thrift_calls"])

# %%
gaps = contrasts.paired_blocks(result, [ROUNDS, COST, QUALITY],
                              {f"{m} cap {c}": (ARM[m, True, c], ARM[m, False, c]) for m in MODELS for c in [2, 4]})
stops = contrasts.value_counts(result, "stop_reason", AT4).T  # how the runs ended at a cap of 4
# what the prose below reads off the numbers: a cap of 2 leaves less room to anchor than a cap of 4; the gap is
# smaller than the article's 3.2 -> 1.8 rounds; single-hop questions enter the loop too; more empty-round stops
assert gaps.loc[("anchored cap 2", ROUNDS), "delta"] < gaps.loc[("anchored cap 4", ROUNDS), "delta"] < 3.2 - 1.8, gaps
assert routed["single"] > 0.5 and stops.empty_round["anchored disclosed"] > stops.empty_round["anchored hidden"], stops
display(gaps, stops)  # noqa: F821

# %% [markdown]
# ## What was measured
#
# The tables above give, for each model and cap, the mean rounds, LLM calls and strict containment with
# the budget hidden and disclosed and their paired differences; then how the cap-4 runs ended. Read four
# things. The sign: disclosure adds rounds to the anchored model and removes them from the thrifty one —
# the same sentence in the prompt, opposite effects, so "should the budget be disclosed?" has no answer
# without the model. The size at each cap (a cap of 2 leaves room for only one anchored round: asserted
# smaller than at 4). Whether the extra rounds buy any answers (the containment rows; the thrifty model's
# saved rounds can cost an answer the skipped search would have found — read its row). And how far the
# anchored gap is from the article's 3.2 → 1.8 rounds. It is smaller here (asserted), and not because
# simple questions skip the controller (the article's savings came mostly from simple questions): on the
# world the router sends the single-hop questions into the loop too (asserted: most are routed COMPLEX),
# where they read the stated budget like the rest. The gap is smaller because an anchored paraphrase
# search often brings back only chunks already seen, so the zero-yield stop (notebook 03) ends the run
# there — the anchored model's disclosed runs end on an empty round more often (asserted; the stop-reason
# table).
#
# **Caveat.** Both reactions are simulator knobs (anchoring 0.9 in `anchored`, thrift 0.8 in `thrifty`) —
# settings, not measurements of any language model; the size of each gap follows from them. Run the same
# sweep with a real model (`backend: {kind: openai}` or `{kind: local}`) to learn which kind your model
# is, and `rag-lab calibrate` to fit both knobs to its traces.

# %% [markdown]
# ## On a real model
#
# DocMind's claim was measured on a real model, Qwen2.5-Coder-1.5B (llama.cpp, temperature 0, router off), in a study
# declared before its first call and recorded to its declared size, replayed here from the cassette: prompt set v4,
# whose two controller prompts differ by the cap clause alone ("You may run at most 4 rounds of searches in total; K
# have been run." against "K rounds of searches have been run."), on 100 HotpotQA bridge and comparison questions,
# at a cap of 4 with the zero-yield stop off, so that only the model and the cap end a run. The claims are the
# article's direction (hiding the budget saves rounds and LLM calls). Each comes with its interval, its p after the
# fixed-sequence correction and, where it is not shown, the smallest rise the sample could have detected. Then what
# the model did in each arm, read from its traces: how many rounds each question ran and why its loop ended, and the
# controller's actions by the rounds run when it was asked (after the fourth, a request for another round is refused
# by the cap). Last, the earlier test of the same claims, in the v3 study (MuSiQue, cap 4, the zero-yield stop on),
# kept beside it: there the hidden arm's prompt also asked for "as few rounds of searches as possible", so its arms
# differed by a thrift instruction as well as by the budget.

# %%
display(*(v4 := budget_disclosure.like_for_like()).shown(), *real_model.study_summary(["real_qwen_musique_disclosure"]))  # noqa: F821
# the study's verdicts: neither claim is shown (the table says what its 100 questions could have detected); and far from
# DocMind's 3.2 -> 1.8 rounds: the arms differ by less than a quarter of its 1.4-round gap, and in both the model asks
# past its cap in code (a fifth round) on about a third of the questions
assert not any(f.holds for f in v4.findings) and abs(v4.round_gap) < (3.2 - 1.8) / 4 and (v4.past_the_cap() > 25).all(), v4

# %% [markdown]
# ## Try this
#
# Each exercise says what to expect; unfold its worked answer after trying it (the code runs in a
# cell added below the notebook's own, after the notebook has run).
#
# 1. Add `"typical"` to `MODELS` (anchoring 0.2, thrift 0.15): which way does disclosure push a model with both reactions, and is the gap distinguishable from 0 on 80 questions?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** a small gap, the two knobs pulling opposite ways; expect its paired interval to include 0 on 80 questions.
#
# ```python
# typical = lesson_sweep(spec, name="nb02_typical", grid={**spec["grid"], "backend.profile": ["typical"]})
# contrasts.interval_table(typical, [COST, QUALITY], reference={"disclosure.disclosed": False, "round_cap.max_rounds": 4})
# ```
#
# Read the disclosed cap-4 row against the hidden cap-4 reference: its Δ in LLM calls and whether the interval crosses 0.
#
# </details>
#
# 2. Add `"zero_yield.enabled": False` to the spec's `base`: how many rounds does the anchored model run now, at caps 2 and 4?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** more rounds for the anchored model with the budget disclosed, up to the cap: the zero-yield stop no longer ends its empty rounds, so only the cap does.
#
# ```python
# no_stop = lesson_sweep(spec, name="nb02_no_stop", base={**spec.get("base", {}), "zero_yield.enabled": False})
# contrasts.labelled_table(no_stop, [ROUNDS, COST, QUALITY])
# ```
#
# Compare the `cost_rounds` column with the notebook's sweep table, row by row.
#
# </details>
#
# 3. Add `"router.enabled": False` to `base` so every question enters the controller loop, as in the article: which question types pay most for a disclosed budget now?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** the simple types (`single`, `alias`, `vague`) now pay too: with no router, they enter the loop where anchoring can act.
#
# ```python
# no_router = lesson_sweep(spec, name="nb02_no_router", base={**spec.get("base", {}), "router.enabled": False})
# contrasts.group_means(no_router, ROUNDS)
# ```
#
# The table gives the mean rounds by type for each configuration; compare the disclosed and hidden columns of the anchored model, type by type.
#
# </details>
#
# 4. Set the anchored model's `budget_anchoring` to 1.0 (`"knobs"` in the spec's `backend`) and the cap to 10: how close does the disclosed run get to using the whole budget on every question?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** with anchoring at 1.0 the disclosed model asks for another round whenever it may; the zero-yield stop and the router still end many runs early, so the mean rounds stay well below 10.
#
# ```python
# full = lesson_sweep(spec, name="nb02_anchoring_1", grid={"disclosure.disclosed": [True], "round_cap.max_rounds": [10], "backend.profile": ["anchored"]},
#                     backend={**spec["backend"], "knobs": {"budget_anchoring": 1.0}})
# contrasts.value_counts(full, "stop_reason")
# ```
#
# The stop reasons say what ended each run: `cap_reached` is the budget used up; `empty_round` and the router's one-shot path are the other guards.
#
# </details>

# %% [markdown]
# ## Where these findings hold
#
# The same claims re-run by `python -m tools.course robustness` on the world, on the first 60 questions of the HotpotQA
# and MuSiQue samples, with two simulator seeds (paired Δ, interval, exact p, Holm over the whole table;
# the table ships in `data/robustness.md` and the test suite fails when it is older than the simulator). A
# finding that holds only on the world is a property of the world and this simulated model, not of the
# policy: read the verdicts below before quoting the notebook's number. The last four are the recorded studies'
# declared claims on disclosure (prompt set v4 on HotpotQA, then v3 on MuSiQue; cap 4), each with its study's own
# test and verdict.

# %%
print(*(robustness.quote(k) for k in ["disclosure_calls", "disclosure_thrift_calls", "disclosure_disclosed_true_rounds", "disclosure_disclosed_true_calls", "v3_disclosed_true_rounds", "v3_disclosed_true_calls"]), sep="\n\n")

# %% [markdown]
# [← previous](01_round_cap.ipynb) · [next →](03_zero_yield_stop.ipynb)
