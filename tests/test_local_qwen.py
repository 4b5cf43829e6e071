"""A packaged Qwen model runs the whole pipeline live (the local-model phase's longest test, in a file of its own
so that pytest-xdist runs it beside the other local-model and browser tests, not after them)."""

from __future__ import annotations

import pytest
from local_model_marks import needs_qwen, needs_server


@pytest.mark.local_model
@needs_server
@needs_qwen
def test_a_packaged_qwen_model_runs_the_full_pipeline_live(tmp_path) -> None:
    """The packaged Qwen2.5-Coder-0.5B (verified against its pins first) answers a real HotpotQA question
    through the whole pipeline with the loop on, recorded into a cassette; the replay gives the same results
    with no model running."""
    from rag_lab.llm.cassette import Cassette
    from rag_lab.llm.factory import open_backend
    from rag_lab.loaders import load_dataset
    from rag_lab.pipeline import CorpusResources, Pipeline, PipelineConfig

    dataset = load_dataset("hotpotqa_sample")
    questions = dataset.evalset.questions[:1]  # one: two took 123 s idle at one thread, over the 90 s a test may take
    # three chunks to the controller and to the answer instead of eight and five: the same loop on prompts half as
    # long (a minute less at one thread)
    config = PipelineConfig().with_params({"router.enabled": False, "round_cap.max_rounds": 2,
                                           "retrieval.controller_evidence": 3, "truncation.max_snippets": 3})
    resources = CorpusResources(dataset.corpus)
    cassette = tmp_path / "qwen.jsonl"
    with open_backend("local", model="qwen2.5-coder-0.5b", cache=False, max_tokens=96, record=cassette) as llm:
        live = [Pipeline(config, resources, llm).run(q) for q in questions]
    header = Cassette.for_replay(cassette).header
    assert header.provenance["model_sha256"] == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert header.provenance["llama_cpp"]
    for result, trace in live:
        calls = [s.llm for s in trace.steps if s.llm is not None]
        print(result.status, repr(result.answer[:80]), [(c.role, c.outcome, c.completion_tokens) for c in calls])
        assert {c.role for c in calls} >= {"controller"} and all(c.completion_tokens > 0 for c in calls)
        assert all(c.modelled_latency_s and c.modelled_latency_s > 0 for c in calls)  # measured, not modelled
    with open_backend("recorded", model=str(cassette), max_tokens=96) as replay:  # the same capped requests
        replayed = [Pipeline(config, resources, replay).run(q) for q in questions]
    # the same results; only what the wall clock and the cache decide differ (latency, spent)
    deterministic = {"llm_cost": {"latency_s"}, "llm_spent": True, "llm_spent_by_role": True}
    assert [r.model_dump(exclude=deterministic) for r, _ in replayed] == [r.model_dump(exclude=deterministic) for r, _ in live]
