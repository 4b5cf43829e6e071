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
# # 09 · Judge input: a judge that never sees the evidence
#
# > **Finding type:** definitional (the one asserted claim: the judge's extra LLM call), with a measured effect
# > reported but not shown at this size (too few questions differ) — on a simulated judge
# > whose two modes are designed to err differently (no knob sets it, so there is no knob-at-0 control).
# > The simulator's draft-only judge is written to rate a draft's *usefulness* from its wording and its
# > with-evidence judge to check each claim against the evidence, so which way they err is designed in;
# > how many of the world's correct answers the draft-only judge refuses is measured through the full
# > pipeline. A real model shows whether a real judge errs the same way.
# >
# > **Where it holds:** (✓ holds, ~ sign agrees but not shown, · no question differs, ✗ sign disagrees, ∅ undefined,
# > ? not recorded, – not applicable, blank: not run there; every cell in `data/robustness.md`) the judge's LLM
# > call: world ✓✓, HotpotQA ✓✓, MuSiQue ✓✓; Qwen2.5-Coder-1.5B: HotpotQA v1 ?, HotpotQA v2 ?, MuSiQue v2 ?, world
# > v2 ?, HotpotQA v3 ?, MuSiQue v3 ? (the recordings never ran a judge).
#
# An optional **judge** reads the generated answer and can veto it: an `unsupported` verdict turns the
# answer into a refusal. What the judge is *shown* decides what it can check. `JudgeInput.mode` is
# either `draft_only` (question + draft) or `with_evidence` (question + evidence + draft). This notebook
# measures what the two judges refuse on the synthetic world, and what each costs.

# %% [markdown]
# ## The story
#
# The MediAC article reviews a report-writing loop: a draft is generated from the evidence, then a judge
# decides whether the report is sufficiently grounded or whether to search again. Reading the code, the
# author found the judge's prompt held only the question and the draft — never the evidence bundle. That
# the draft was *written* from evidence does not mean the judge *checked* it against that evidence; the
# judge could only look at the draft itself.
#
# The article maps this onto Self-RAG's critique tokens. Judging "is this output supported by the
# passage?" (IsSup) takes three inputs — question, passage, output; judging "is this output useful?"
# (IsUse) takes two — question and output. MediAC's judge did the IsUse job but was used to decide
# whether the evidence sufficed. Faithfulness metrics such as Ragas's, and citation APIs that point every
# claim at a document, all check against the retrieved context. The article adds two warnings: a judge
# running on the same model as the writer prefers its own text, and a strong model given insufficient
# context tends to answer wrongly rather than abstain — sufficiency deserves its own measurement.

# %% [markdown]
# ## The policy, as implemented
#
# `rag_lab.pipeline.policies.JudgeInput`: `enabled` (default off) and `mode` (`draft_only` or
# `with_evidence`, default `with_evidence`); sweep keys `judge.enabled`, `judge.mode`. The judge runs in
# `judge_answer` (`rag_lab/pipeline/answer_guard.py`), after the deterministic guard and only on an
# answer the guard let through; its prompt is `rag_lab.llm.prompts.judge_prompt`, which adds an `EVIDENCE`
# section only in `with_evidence` mode. An `unsupported` verdict refuses the answer (stop reason
# `insufficient`); an invalid judge output falls back to `supported`, so a broken judge never refuses.
#
# The simulated judge (`rag_lab/llm/sim/judging.py`): *with evidence* it says
# `supported` iff every number and name in the draft appears in the evidence the draft cites, every
# citation points at an item, and most of its content words are found there; *draft only* it cannot check
# support, so it rates usefulness — a draft that names the question's subject (or gives a value of the
# expected kind) is `supported`, whatever the evidence says. Both add a small bonus for drafts in the
# simulator's own style (the self-preference bias).

# %%
from lessons import FindingFamily, contrasts, findings_markdown, judge_input, lesson_sweep, paired_finding, robustness, settings, setup_notebook
from rag_lab.figures import cost_quality_figure, cost_quality_info, trace_timeline_figure, trace_timeline_info
from rag_lab.pipeline import Intervention, PipelineConfig
from rag_lab.pipeline.policies import JudgeInput
from rag_lab.widgets import PolicyExplorer, TraceViewer

setup_notebook(JudgeInput)

# %% [markdown]
# ## The sweep
#
# The first 20 test questions of each of the 8 types (160 questions, 20 of them unanswerable), three
# configurations: no judge (the default), a draft-only judge and a with-evidence judge. The simulated
# LLM runs the `typical` profile. The Pareto front is computed
# on the plotted axes: LLM calls per question against strict answer containment.

# %%
COST, QUALITY = "cost_llm_calls", "quality_answer_containment_strict"
spec = settings.JUDGE.sweep("nb09_judge_input",  # the lesson's setting (20 test questions per type): its robustness row reads it too
                            [{"judge.enabled": [False]}, {"judge.enabled": [True], "judge.mode": ["draft_only", "with_evidence"]}])
result = lesson_sweep(spec, pareto=(COST, QUALITY))
NONE, DRAFT, EVIDENCE = [{"judge.enabled": False}] + [{"judge.enabled": True, "judge.mode": m}
                                                        for m in ("draft_only", "with_evidence")]
NAMES = contrasts.named(result, {"no judge": NONE, "draft-only judge": DRAFT, "with-evidence judge": EVIDENCE})
table = contrasts.labelled_table(result, [f"{QUALITY}±", "quality_abstention_accuracy", "quality_refused",
                                          "quality_citation_precision", COST, "cost_tokens", "is_pareto"], NAMES)
table

# %%
cost_quality_figure(cost_quality_info(table, COST, QUALITY, text_col="label"))

# %% [markdown]
# ## What each judge refused
#
# Every answer a judge refused, classified by what the same question's answer was **without** a judge:
# a correct answer (strict containment 1), a wrong one, or an answer to an unanswerable question (which
# should have been refused). A judge earns its call by refusing the last two kinds, not the first.

# %%
JUDGES = {"draft_only": NAMES["draft-only judge"], "with_evidence": NAMES["with-evidence judge"]}
refusals = judge_input.refusals_by_baseline(result, JUDGES, NONE, Intervention.JUDGE_REFUSED, QUALITY, calls="cost_calls_judge")
refusals

# %% [markdown]
# Where the refusals fall, by question type (share of questions refused by the judge):

# %%
judge_input.refused_share_by_type(result, JUDGES, Intervention.JUDGE_REFUSED).round(2)

# %% [markdown]
# ## The mechanism in one trace
#
# The first question (in question order) on which the two judges give different verdicts. The same draft
# goes to both; only the judge's prompt differs — read the `EVIDENCE` section that one of them gets, and
# each verdict's reason.

# %%
qid = contrasts.contrast_question(result, DRAFT, EVIDENCE, "status")  # the first the verdicts part on (or the first)
unjudged = result.result(NAMES["no judge"], qid)
print(f"{len(contrasts.differing(result, DRAFT, EVIDENCE, 'status'))} of {len(result.qids)} questions get different verdicts; "
      f"shown: {qid}: {unjudged.question}\nanswer without a judge: {unjudged.answer}")
for name, cid in JUDGES.items():
    judge = next(s for s in result.traces(cid)[qid].steps if s.kind == "judge")
    print(f"\n--- {name}: {judge.decision}; status {result.result(cid, qid).status}\n{judge.llm.messages[-1]['content'][:700]}")

# %%
trace_timeline_figure(trace_timeline_info(result.traces(JUDGES["draft_only"])[qid]))

# %% [markdown]
# Every question and both judges, in the trace viewer (the judge's prompt is under the judge step):

# %%
TraceViewer(result).select(candidate_id=JUDGES["draft_only"], qid=qid)

# %% [markdown]
# ## Try the judge yourself
#
# The explorer runs the full pipeline on the first 12 `alias` test questions (the question names a
# business name or a handle, the answer names something else) with the judge switched on. Switch `mode`
# between `draft_only` and `with_evidence` and watch the point move; headless, the cell below runs the
# starting configuration (the draft-only judge) once.

# %%
explorer = PolicyExplorer(dataset="world", params=["judge.enabled", "judge.mode"], split="test", types=["alias"],
                          limit=12, base=PipelineConfig().with_params({"judge.enabled": True, "judge.mode": "draft_only"}), knobs={})
explorer

# %%
explorer.run(wait=True)  # the draft-only judge on the alias questions: strict containment, refusal rate, LLM calls

# %% [markdown]
# ## The finding
#
# The with-evidence judge against the draft-only judge, paired on the same 160 questions: the claim is
# that the judge that sees the evidence keeps correct answers the draft-only judge refuses (the paired Δ
# of strict containment lies above 0). If the judge ignored its mode (both built the same prompt), the two
# configurations would give the same verdicts and the Δ would be 0. The effect is rare — read the share of
# questions that differ — so its interval is narrow; all 240 test questions (`per_type` 30) tighten it, at
# half again the cold-cache run time.
#
# It was asserted once, on its interval alone (which excludes 0). Tested as a referee would, it is not a
# finding at this size: only a handful of the answerable questions differ, and an exact sign test on so
# few discordant pairs does not reach p < 0.05 (the paragraph below gives the counts each way and the
# p). So it is printed, not asserted; what is asserted is the
# judge's price in LLM calls, which is definitional (the pipeline makes the call whenever the judge is on).

# %%
FINDINGS = FindingFamily(size=1, name="09_judge_input")
finding = paired_finding(result, QUALITY, candidate=EVIDENCE, reference=DRAFT, direction="above", kind="measured",
                         claim="a judge that sees the evidence keeps correct answers a draft-only judge refuses")
print(finding)

# %% [markdown]
# And against no judge at all: what does the with-evidence judge buy on this world (reported, not
# asserted), and what does it cost (asserted: definitional)?

# %%
no_effect = paired_finding(result, QUALITY, candidate=EVIDENCE, reference=NONE, direction="none", margin=0.05,
                           claim="on the world, the with-evidence judge changes no answer")
judge_cost = paired_finding(result, COST, candidate=EVIDENCE, reference=NONE, direction="above", kind="definitional",
                            family=FINDINGS, claim=robustness.claim("judge_calls"))
assert judge_cost.holds, judge_cost.message
unanswerable = refusals.loc["… answers to unanswerable questions"]  # what the prose below reads off the numbers
answered = contrasts.group_share(result, NONE, "status", "answered")["unanswerable"]  # with no judge at all
assert answered > 0 and unanswerable["with_evidence"] == 0 < unanswerable["draft_only"], (answered, unanswerable.to_dict())
abstention = paired_finding(result, "quality_abstention_accuracy", candidate=EVIDENCE, reference=DRAFT,
                            claim="abstention accuracy, with-evidence vs draft-only judge")
findings_markdown(finding, abstention, no_effect, judge_cost, where=["judge_calls"])

# %% [markdown]
# ## What was measured
#
# The sweep's table gives each configuration's strict containment, refusal rate and cost. The findings
# table the paired differences: the with-evidence judge against the draft-only judge on containment (the
# former finding) and on abstention accuracy, and the with-evidence judge against no judge, on containment
# and on LLM calls. The refusal table above says what each judge refused: read its "correct answers" row for the
# draft-only judge — answers it could not check and judged by their wording (a comparison answered "No: not
# both …", a flag answer that names the service but not the business name asked about) — and its
# "unanswerable" row for both: on this world the answer step refuses some unanswerable questions before
# any judge runs (it finds nothing to extract) and answers the others from whatever was retrieved. The
# with-evidence judge refuses none of those answers — a support check passes a draft extracted from the
# evidence it cites, whether or not that evidence answers the question — while the draft-only judge,
# reading only the wording, refuses a few (the last cell asserts this).
#
# That is the honest reading of the with-evidence line: on the world, with the simulator's reader, its drafts are
# extracted from the evidence they cite, so a support check passes them and the judge costs a call per
# answered question for no change in answers — compare its containment with no judge's. Then compare the
# draft-only judge's with no judge's: a judge can also cost answers. A judge earns its cost where drafts can
# contain claims the evidence does not hold.
#
# **Caveat.** Both judges are the simulator's (`typical` profile); their error directions
# are written into it. A real judge — the same model as the writer, or another — has its own biases;
# run the same sweep with `backend: {kind: openai}` or `{kind: local}` to measure them.

# %% [markdown]
# ## Try this
#
# Each exercise says what to expect; unfold its worked answer after trying it (the code runs in a
# cell added below the notebook's own, after the notebook has run).
#
# 1. Run the sweep on `types=["unanswerable"]`: the simulator answers some unanswerable questions from whatever it retrieved. Does either judge refuse those answers? What does a support check verify, and what does it not?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** the with-evidence judge refuses answers whose claims the evidence does not support; neither judge knows whether the question was answerable — a support check verifies the answer against the evidence, not the question's premise.
#
# ```python
# unans = lesson_sweep(spec, pareto=(COST, QUALITY), name="nb09_unanswerable", types=["unanswerable"], per_type=30)
# contrasts.group_share(unans, NONE, "status", "answered")
# ```
#
# Compare how many answered statuses each judge configuration leaves (`contrasts.labelled_table(unans, ["quality_refused"])`).
#
# </details>
#
# 2. Find a `mismatch` answer the with-evidence judge refused and read its reason in the trace viewer: which name in the draft was missing from the evidence?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** a `judge` step with verdict `unsupported` and a reason naming the claim it could not find in the evidence.
#
# ```python
# TraceViewer(result).select(candidate_id=NAMES["with-evidence judge"])
# ```
#
# Filter by type `mismatch` and outcome `refused`, then open the judge step.
#
# </details>
#
# 3. Run the sweep with `"profile": "sloppy"` (more premature stops: answers from half the evidence). Do the judges catch a comparison answered from one side only?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** the with-evidence judge catches a claim about the missing side only when the draft states it; a draft that answers from one side without naming the other passes a support check.
#
# ```python
# sloppy = lesson_sweep(spec, pareto=(COST, QUALITY), name="nb09_sloppy", backend={**spec["backend"], "profile": "sloppy"})
# contrasts.interval_table(sloppy, [QUALITY, "quality_refused"], reference=NONE)
# ```
#
# Read the judges' rows against no judge.
#
# </details>
#
# 4. Swap the cost axis for `cost_tokens`: how much more does the with-evidence judge's prompt cost than the draft-only judge's?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** the with-evidence judge's point sits to the right of the draft-only one: its prompt carries the evidence.
#
# ```python
# contrasts.interval_table(result, ["cost_tokens"], reference=DRAFT)
# ```
#
# The with-evidence row's Δ is the evidence's price in tokens per question.
#
# </details>

# %% [markdown]
# [← previous](08_query_rewrite.ipynb) · [next →](10_router.ipynb)
