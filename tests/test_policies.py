"""The contract every policy passes (:func:`rag_lab.testing.check_policy`; broken toy policies show it refuses
each broken rule), and PipelineConfig's dotted keys and files."""

from __future__ import annotations

import pytest
from pydantic import ConfigDict, Field

from rag_lab.errors import ConfigError
from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.pipeline import POLICY_CLASSES, Pipeline, PipelineConfig
from rag_lab.pipeline.config import dotted_params
from rag_lab.pipeline.policies import Policy
from rag_lab.testing import ContractViolation, ScriptedResources, check_policy, corpus_of, policy_bounds


@pytest.mark.parametrize("cls", POLICY_CLASSES, ids=lambda c: c.__name__)
def test_policy_contract(cls):
    check_policy(cls)


def test_every_numeric_policy_field_is_bounded():
    for cls in POLICY_CLASSES:
        bounded = {name for name, _, _ in policy_bounds(cls)}
        for name, info in cls.model_fields.items():
            if info.annotation in (int, float) or str(info.annotation) in ("int | None", "float | None"):
                assert name in bounded, f"{cls.__name__}.{name} has no bounds"


def test_policies_are_unchanged_after_a_run():
    config = PipelineConfig().with_params({"round_cap.max_rounds": 3, "crag.enabled": False})
    before = config.model_dump()
    res = ScriptedResources(corpus_of({"a": "alpha text"}), {"q": ["a"], "again": ["a"]})
    backend = ScriptedBackend({"route": ['{"route": "COMPLEX"}'],
                               "controller": ['{"action": "retrieve_again", "queries": ["again"]}'],
                               "answer": ["alpha [1]"]})
    Pipeline(config, res, backend).run("q")
    assert config.model_dump() == before


def test_dotted_keys_get_and_copy_on_set():
    config = PipelineConfig()
    changed = config.with_params({"crag.upper": 0.7, "truncation.strategy": "refine"})
    assert config.get("crag.upper") == 0.5 and changed.get("crag.upper") == 0.7
    assert changed.get("truncation.strategy") == "refine"
    assert config.with_params(crag__upper=0.6).get("crag.upper") == 0.6
    flat = config.flat()
    assert flat["round_cap.max_rounds"] == 2 and flat["disclosure.disclosed"] is False
    assert all(config.get(k) == v for k, v in flat.items())


@pytest.mark.parametrize("values, message", [
    ({"crag.uper": 0.5}, "unknown field 'uper'"),
    ({"crg.upper": 0.5}, "unknown policy 'crg'"),
    ({"upper": 0.5}, "not a dotted key"),
    ({"crag.upper": 2.0}, "crag.upper"),
    ({"crag.lower": 0.9}, "must not exceed"),
    ({"round_cap.max_rounds": 0}, "round_cap.max_rounds"),
    ({"truncation.strategy": "chop"}, "truncation.strategy"),
])
def test_bad_settings_fail_with_a_clear_message(values, message):
    with pytest.raises(ConfigError, match=message):
        PipelineConfig().with_params(values)


def test_one_verb_with_params_changes_a_copy_of_a_config_and_of_a_pipeline():
    config = PipelineConfig()
    pipeline = Pipeline(config, None, None)  # type: ignore[arg-type]  (with_params touches neither)
    changed = pipeline.with_params({"crag.upper": 0.7}, round_cap__max_rounds=3)
    assert changed is not pipeline and changed.config == config.with_params({"crag.upper": 0.7, "round_cap.max_rounds": 3})
    assert pipeline.config is config and config.get("crag.upper") == 0.5
    with pytest.raises(ConfigError, match="unknown field 'uper'"):
        pipeline.with_params(crag__uper=0.7)
    # the one reading of a with_params call (the explorer's too): the dotted values, then the keywords, "__" a dot
    assert dotted_params({"crag.upper": 0.7}, {"crag__upper": 0.6, "round_cap__max_rounds": 3}) == {
        "crag.upper": 0.6, "round_cap.max_rounds": 3}


def test_effective_cap_is_the_smaller_of_cap_and_budget():
    assert PipelineConfig().with_params({"round_cap.max_rounds": 4, "budget.max_rounds": 3}).max_rounds == 3


def test_config_files_yaml_json_and_errors(tmp_path):
    (tmp_path / "c.yaml").write_text("crag:\n  upper: 0.6\nround_cap.max_rounds: 3\n")
    config = PipelineConfig.from_file(tmp_path / "c.yaml")
    assert config.get("crag.upper") == 0.6 and config.max_rounds == 3
    (tmp_path / "c.json").write_text('{"truncation": {"max_snippets": 7}}')
    assert PipelineConfig.from_file(tmp_path / "c.json").get("truncation.max_snippets") == 7
    (tmp_path / "bad.yaml").write_text("crag: [1, 2\n")
    with pytest.raises(ConfigError, match="bad.yaml: not valid YAML"):
        PipelineConfig.from_file(tmp_path / "bad.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(ConfigError, match="must hold a mapping"):
        PipelineConfig.from_file(tmp_path / "list.yaml")
    (tmp_path / "typo.yaml").write_text("crag:\n  uper: 0.6\n")
    with pytest.raises(ConfigError, match="typo.yaml.*uper"):
        PipelineConfig.from_file(tmp_path / "typo.yaml")
    with pytest.raises(ConfigError, match="cannot read"):
        PipelineConfig.from_file(tmp_path / "missing.yaml")


class Unbounded(Policy):
    """A toy policy whose numeric field has a lower bound but no upper one."""

    rounds: int = Field(default=2, ge=1)


class Thawed(Policy):
    """A toy policy that can be changed in place after construction."""

    model_config = ConfigDict(frozen=False, extra="forbid")
    rounds: int = Field(default=2, ge=1, le=5)


class Lax(Policy):
    """A toy policy that keeps whatever unknown fields it is given."""

    model_config = ConfigDict(frozen=True, extra="allow")
    rounds: int = Field(default=2, ge=1, le=5)


class Undocumented(Policy):
    rounds: int = Field(default=2, ge=1, le=5)


class NoDefault(Policy):
    """A toy policy whose field must always be given, so the pipeline cannot make its default."""

    rounds: int = Field(ge=1, le=5)


@pytest.mark.parametrize(("broken", "rule"), [
    (Unbounded, "numeric fields bounded"),
    (Thawed, "frozen"),
    (Lax, "unknown fields refused"),
    (Undocumented, "documented"),
    (NoDefault, "defaults construct"),
], ids=lambda x: x if isinstance(x, str) else x.__name__)
def test_check_policy_refuses_a_broken_policy_naming_the_rule(broken, rule):
    with pytest.raises(ContractViolation, match=f"^policy contract, rule '{rule}': {broken.__name__}") as caught:
        check_policy(broken)
    assert caught.value.rule == rule


def test_a_retired_parameter_keeps_every_stored_id_and_reads_back_only_at_its_one_value() -> None:
    from rag_lab.experiments.engine.grid import config_id

    # the ids of configs stored before rewrite.fusion was removed (run.sqlite files, recorded tables' candidates)
    assert config_id(PipelineConfig()) == "9b83f0ee4c28"
    assert config_id(PipelineConfig().with_params({"rewrite.enabled": True, "crag.upper": 0.3})) == "fbc373362022"
    assert "rewrite.fusion" not in PipelineConfig().flat()
    # a stored identity (or an old config file) holding its one value reads back; another value is refused by name
    assert PipelineConfig.from_dict(PipelineConfig().identity()) == PipelineConfig()
    assert PipelineConfig.from_dict({"rewrite": {"fusion": "rrf", "n_rewrites": 2}}).get("rewrite.n_rewrites") == 2
    for data in ({"rewrite": {"fusion": "max"}}, {"rewrite.fusion": "sum"}):
        with pytest.raises(ConfigError, match="rewrite.fusion was removed: 'rrf', its only value"):
            PipelineConfig.from_dict(data)
