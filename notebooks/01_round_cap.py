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
# # 01 · Round cap
#
# > **Finding type:** a property of the pipeline and the data (measured). The cap is a line of pipeline
# > code, and no simulator knob reacts to it: the calls it saves and the answers it loses on two-hop
# > questions are measured on the shipped world, with the simulated controller (`typical` profile,
# > one reader for all text) asking for rounds as the evidence it reads suggests.
#
# A multi-round retrieval loop needs a hard stop. **RoundCap** caps the number of retrieval rounds *in
# code*: when the controller asks for one more round after the cap, that request is a **policy
# rejection** (recorded among the trace's interventions) and the run goes on with what it has — never
# another round. This notebook measures what the cap saves, and what it costs, on the synthetic world.

# %% [markdown]
# ## The story
#
# The mt_rag design article explains why its LLM controller gets **at most two** retrieval rounds. A
# fully deterministic retriever is stable but cannot tell that a business label and a code identifier
# name the same thing; a fully agentic loop is flexible but may rewrite the query again and again,
# pile up calls, and — when no new evidence arrives — tell an ever more confident story built from
# merely similar material. mt_rag's compromise: the LLM makes the semantic judgement (answer, rerank,
# retrieve again, insufficient), and the program owns the number of rounds. The limit is a constant in
# code; a third retrieval request is rejected and handed to a deterministic fallback.
#
# Why two? The first round exposes the real gap; the second allows one *targeted* correction (for a
# two-hop question: search for the bridge entity the first round revealed). Past that, the article
# argues, the marginal recall drops while latency, tokens, failure surface and the risk of "finding
# something similar" keep growing. It is an engineering budget, not an optimum from a paper — so it is
# worth measuring: what does one round fewer save, and which questions pay for it?

# %% [markdown]
# ## The policy, as implemented
#
# `rag_lab.pipeline.policies.RoundCap` has one bounded field, `max_rounds` (sweep key
# `round_cap.max_rounds`, default 2). The effective cap is `PipelineConfig.max_rounds` — the smaller of
# this and `budget.max_rounds` (notebook 07). The check lives in `_QuestionRun._act` in
# `rag_lab/pipeline/pipeline.py`: a `retrieve_again` decision when `rounds_used >= cap` is recorded as
# a policy rejection and ends the loop with stop reason `cap_reached` (or, if nothing was ever found,
# one-shot retrieval with the original question, reason `fallback`). The round counter lives in the
# per-question `QuestionState`, never on the policy.

# %%
import tempfile

import pandas as pd

from rag_lab.experiments import FindingFamily, paired_finding, run_sweep
from rag_lab.figures import (
    cost_quality_figure,
    cost_quality_info,
    forest_figure,
    forest_info,
    trace_timeline_figure,
    trace_timeline_info,
)
from rag_lab.pipeline import PipelineConfig
from rag_lab.pipeline.policies import RoundCap
from rag_lab.widgets import PolicyExplorer, TraceViewer

pd.set_option("display.width", 200)
pd.set_option("display.max_columns", 20)
pd.set_option("display.max_colwidth", 80)

print(RoundCap.__doc__)
RoundCap.model_fields

# %% [markdown]
# ## The sweep
#
# The first 10 test questions of each of the 8 question types (80 questions), `max_rounds` from 1 to 4,
# every other policy at its default. The simulated LLM runs the `typical` profile (one reader for all
# text: the same that is measured on real HotpotQA and MuSiQue in benchmarks/bench_sim_real.py). The Pareto
# front is computed on the axes plotted below: LLM calls per question against strict answer containment.

# %%
COST, QUALITY = "cost_llm_calls", "quality_answer_containment_strict"
BACKEND = {"kind": "sim", "profile": "typical"}
spec = {
    "name": "nb01_round_cap",
    "dataset": "world",
    "split": "test",
    "per_type": 10,
    "backend": BACKEND,
    "grid": {"round_cap.max_rounds": [1, 2, 3, 4]},
}
result = run_sweep(spec, tempfile.mkdtemp(prefix="nb01_"), progress="quiet", pareto=(COST, QUALITY))
columns = result.param_columns + [QUALITY, f"{QUALITY}_lo", f"{QUALITY}_hi", "quality_rounds_at_least_hops",
                                  "cost_rounds", COST, "cost_tokens", "is_pareto"]
result.table[columns]

# %%
table = result.table.assign(label=result.table["candidate_id"].map(result.labels()))
cost_quality_figure(cost_quality_info(table, COST, QUALITY, text_col="label"))

# %% [markdown]
# Rounds used and strict containment by question type and cap. The cap binds only where the controller
# asks for more rounds — mostly two-hop (`bridge`) questions:

# %%
ids = result.table.set_index("param_round_cap.max_rounds")["candidate_id"]
by_cap = {cap: result.rows(cid) for cap, cid in ids.items()}
pd.concat({metric: pd.DataFrame({cap: rows.groupby("type")[metric].mean() for cap, rows in by_cap.items()})
           for metric in ("cost_rounds", QUALITY)}, axis=1).rename_axis(columns=["metric", "max_rounds"]).round(2)

# %% [markdown]
# Paired differences against the default cap of 2, on the same questions, for the cost axis (a forest plot:
# each row is one cap's Δ with its 95% bootstrap interval):

# %%
forest_figure(forest_info(result.compare(COST, reference={"round_cap.max_rounds": 2})))

# %% [markdown]
# ## The mechanism in one trace
#
# The question on which a cap of 1 and a cap of 4 differ most in LLM calls (ties: the first in question
# order). Under `max_rounds=1` the controller still asks to `retrieve_again`; the pipeline rejects the
# request in code (read the intervention on the controller step) and answers from round 1's evidence.

# %%
tight, loose = by_cap[1].set_index("qid"), by_cap[4].set_index("qid")
gap = (loose[COST] - tight[COST]).abs()
qid = gap.idxmax()
trace = result.traces(ids[1])[qid]
print(f"{qid} ({tight.loc[qid, 'type']}): {trace.question}")
print(f"max_rounds=1: {int(tight.loc[qid, COST])} LLM calls, stop {trace.stop_reason}, "
      f"strict containment {tight.loc[qid, QUALITY]}")
print(f"max_rounds=4: {int(loose.loc[qid, COST])} LLM calls, stop {loose.loc[qid, 'stop_reason']}, "
      f"strict containment {loose.loc[qid, QUALITY]}")
print("interventions under max_rounds=1:", trace.interventions)
trace_timeline_figure(trace_timeline_info(trace))

# %% [markdown]
# The same question under `max_rounds=4`, for contrast: the second round searches for what round 1 pointed to.

# %%
trace_timeline_figure(trace_timeline_info(result.traces(ids[4])[qid]))

# %% [markdown]
# Any other question or cap: pick it in the trace viewer (configuration = candidate, filter by type or outcome).

# %%
viewer = TraceViewer(result)
viewer.select(candidate_id=ids[1], qid=qid)
viewer

# %% [markdown]
# ## Try the cap yourself
#
# The explorer runs the full pipeline on the first 12 two-hop (`bridge`) test questions, starting from a
# cap of 1. Move the `round_cap.max_rounds` slider: each new value adds a point (LLM calls vs strict
# containment) and the status line gives its paired difference against the first point. Run headless,
# the cell below runs the starting configuration once.

# %%
explorer = PolicyExplorer(dataset="world", params=["round_cap.max_rounds"], split="test", types=["bridge"], limit=12,
                          base=PipelineConfig().set({"round_cap.max_rounds": 1}))
explorer

# %%
point = explorer.run(wait=True)
print(f"max_rounds=1 on {point['n_questions']} bridge questions: {point[COST]:.2f} LLM calls per question, "
      f"strict containment {point[QUALITY]:.3f}")

# %% [markdown]
# ## The finding: what one round fewer saves
#
# A cap of 1 against the default cap of 2, paired on the same 80 questions: the claim is that the tighter
# cap cuts LLM calls per question (the interval of the paired Δ lies below 0). If the cap check in
# `_act` were a no-op, both configurations would run the same rounds and the Δ would be 0.

# %%
FINDINGS = FindingFamily(size=2, name="01_round_cap")   # Holm over this notebook's two claims
finding = paired_finding(result, COST, candidate={"round_cap.max_rounds": 1}, reference={"round_cap.max_rounds": 2},
                         direction="below", kind="measured", family=FINDINGS,
                         claim="capping retrieval at one round instead of two cuts LLM calls")
print(finding)
assert finding.holds, finding.message

# %% [markdown]
# ## The finding: what it costs on two-hop questions
#
# The saving comes from the questions that wanted a second round. Are those the ones that needed it?
# A second sweep on all 30 two-hop (`bridge`) test questions — their answer sits one hop away from what
# the question names — compares strict answer containment at caps 1 and 2.

# %%
bridge = run_sweep({**spec, "name": "nb01_round_cap_bridge", "per_type": None, "types": ["bridge"],
                    "grid": {"round_cap.max_rounds": [1, 2]}},
                   tempfile.mkdtemp(prefix="nb01b_"), progress="quiet", pareto=(COST, QUALITY))
bridge_finding = paired_finding(bridge, QUALITY, candidate={"round_cap.max_rounds": 1},
                                reference={"round_cap.max_rounds": 2}, direction="below", kind="measured",
                                family=FINDINGS,
                                claim="on two-hop questions, capping at one round loses answers that round 2 finds")
print(bridge_finding)
assert bridge_finding.holds, bridge_finding.message

# %%
t = result.table.set_index("param_round_cap.max_rounds")
stops = pd.DataFrame({cap: rows["stop_reason"].value_counts() for cap, rows in by_cap.items()}).fillna(0).astype(int)
above2 = result.compare(QUALITY, reference={"round_cap.max_rounds": 2}).set_index("label").loc["round_cap.max_rounds=4"]
print(f"All 80 questions — mean rounds {t['cost_rounds'].round(2).to_dict()}, "
      f"LLM calls {t[COST].round(2).to_dict()}, strict containment {t[QUALITY].round(3).to_dict()} (by max_rounds).")
print(f"Cap 1 vs 2: {finding.measured}.")
print(f"Cap 1 vs 2 on the 30 bridge questions, strict containment: {bridge_finding.measured}.")
print(f"Cap 4 vs 2, strict containment on all 80: Δ = {above2['delta']:+.3f} [{above2['lo']:+.3f}, {above2['hi']:+.3f}], "
      f"{above2['share_differ']:.0%} of questions differ.")
print("Stop reasons by max_rounds:")
print(stops)

# %% [markdown]
# ## What was measured
#
# The printed lines give, for each cap, the mean rounds, LLM calls and strict containment over the 80
# questions; the paired Δ of LLM calls for a cap of 1 against 2; the same comparison of strict containment
# on the 30 bridge questions; and what raising the cap from 2 to 4 changes. Read the cost line first
# (how much one round fewer saves, and on what share of questions), then the bridge line (whether the
# saved round was the one that found the answer), then the cap-4 line (whether rounds past two buy
# anything on this world). The by-type table shows where each effect sits. The stop-reason table keeps
# `cap_reached` apart from `answered`: a run stopped by the cap is not evidence that its context sufficed.
#
# **Caveat.** The controller is the simulated LLM (`typical` profile): it asks for a second
# round when the evidence it reads names a bridge entity it has not searched. A real model asks on other
# grounds; run the same sweep with `backend: {kind: openai}` or `{kind: local}` to see whether the
# trade-off holds for it.

# %% [markdown]
# ## Try this
#
# 1. Move the explorer's slider from 1 to 2, then to 3 and 4: which step moves the point most on these
#    bridge questions, and which caps end up on the Pareto front?
# 2. Re-run the sweep with `"profile": "sloppy"` in `BACKEND` (frequent bridge drops and premature stops):
#    does a second round still pay for itself when the controller's refined query loses the bridge entity?
# 3. Add `"zero_yield.enabled": [True, False]` to the grid: how many of the rounds past two were
#    paraphrase searches that found nothing new?
# 4. Swap the cost axis for `cost_tokens` or `cost_modelled_latency_s` in `cost_quality_info`: is the
#    relative saving of a cap of 1 larger in tokens than in calls? Open a round-2 controller prompt in the
#    trace viewer to see what a second round adds to the prompt.

# %% [markdown]
# [← previous](00_quickstart.ipynb) · [next →](02_budget_disclosure.ipynb)
