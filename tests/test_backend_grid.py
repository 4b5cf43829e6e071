"""Backend settings as dotted grid keys: a sweep's grid may vary ``backend.profile``, ``backend.max_tokens`` or
one simulator knob (``backend.knobs.<knob>``) beside the policy keys; each candidate runs on its own backend,
shows the setting in its ``param_backend.*`` column and label, and resumes like any other candidate."""

from __future__ import annotations

import pytest

from rag_lab.errors import ConfigError
from rag_lab.experiments import candidate_id, run_sweep
from rag_lab.experiments.engine.sweep import BackendSpec
from rag_lab.pipeline import PipelineConfig

SPEC = {"name": "backend-grid", "dataset": "world", "split": "test", "per_type": 2, "seeds": [0],
        "backend": {"kind": "sim", "profile": "ideal"},
        "grid": {"backend.knobs.invalid_json": [0.0, 0.9], "round_cap.max_rounds": [2]}}


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    return run_sweep(SPEC, tmp_path_factory.mktemp("backend-grid"), progress="quiet")


def test_each_candidate_runs_on_its_own_backend(swept) -> None:
    table = swept.table
    assert list(table["param_backend.knobs.invalid_json"]) == [0.0, 0.9]
    assert table["candidate_id"].nunique() == 2 and table["config_id"].nunique() == 2
    calm, broken = table["candidate_id"]
    fired = {cid: int(swept.knob_rates(cid).query("knob == 'invalid_json'")["fired"].sum()) for cid in (calm, broken)}
    assert fired[calm] == 0 and fired[broken] > 0
    configured = swept.knob_rates(broken).query("knob == 'invalid_json'")["configured"]
    assert set(configured) == {0.9}
    # the same config on the same backend has the same id as in a sweep without backend keys
    calm_backend = BackendSpec(kind="sim", profile="ideal", knobs={"invalid_json": 0.0})
    assert calm == candidate_id(PipelineConfig().with_params({"round_cap.max_rounds": 2}), calm_backend, 0)
    # the base config on the sweep's backend (ideal: invalid_json 0.0) is the calm candidate
    assert swept.labels() == {calm: "base", broken: "backend.knobs.invalid_json=0.9"}
    assert swept.reference()["rule"] == "base" and swept.reference()["candidate_id"] == calm
    delta = swept.compare("cost_llm_calls").set_index("candidate_id").loc[broken]
    assert delta["n"] == len(swept.qids)


def test_a_backend_grid_resumes_without_recomputing(swept) -> None:
    again = run_sweep(SPEC, swept.run_dir, progress="quiet")
    assert again.computed == 0 and again.reused == len(swept.table) * len(swept.qids)
    assert again.table["candidate_id"].tolist() == swept.table["candidate_id"].tolist()


@pytest.mark.parametrize(("grid", "message"), [
    ({"backend.nope": [1]}, "'backend.nope' is not a backend setting a grid can vary"),
    ({"backend.kind": ["openai"]}, "'backend.kind' is not a backend setting"),
    ({"backend.knobs.invalid_json": [2.0]}, "invalid_json"),
])
def test_bad_backend_keys_fail_before_anything_runs(grid, message, tmp_path) -> None:
    with pytest.raises(ConfigError, match=message):
        run_sweep({**SPEC, "grid": grid}, tmp_path / "run", progress="quiet")
    assert not (tmp_path / "run" / "run.sqlite").exists()


def test_a_price_in_the_backend_block_is_what_cost_usd_counts(swept, tmp_path) -> None:
    """``backend.price`` (USD per million input and output tokens) prices every call of the sweep: cost_usd is the
    question's tokens at that price; unset, the sweep's fingerprint is what it always was (shipped runs resume)."""
    price = {"input_per_m": 3.0, "output_per_m": 15.0}
    priced = run_sweep({**SPEC, "backend": {**SPEC["backend"], "price": price}}, tmp_path / "priced", progress="quiet")
    cid = priced.table["candidate_id"].iloc[0]
    traces = priced.traces(cid)
    for _, row in priced.rows(cid).iterrows():
        calls = traces[row["qid"]].llm_calls()
        want = sum(c.prompt_tokens * 3.0 + c.completion_tokens * 15.0 for c in calls) / 1e6
        assert row["cost_usd"] == pytest.approx(want, rel=1e-12) and want > 0
    # another price is another sweep (the column differs), and a grid cannot vary it
    assert priced.store.meta()["fingerprint"] != swept.store.meta()["fingerprint"]
    with pytest.raises(ConfigError, match="'backend.price' is not a backend setting"):
        run_sweep({**SPEC, "grid": {"backend.price": [price]}}, tmp_path / "grid", progress="quiet")
