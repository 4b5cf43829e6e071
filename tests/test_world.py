"""The synthetic world: deterministic, shipped bytes match the generator, question mix as specified."""

import filecmp
import json

import pytest

from rag_lab.loaders import load_dataset
from rag_lab.paths import DATA_DIR
from rag_lab.records import WORLD_QUESTION_TYPES
from rag_lab.world import WorldConfig, generate_world, write_world


def test_shipped_world_matches_generator(tmp_path):
    shipped = DATA_DIR / "world"
    config = WorldConfig(**json.loads((shipped / "world.json").read_text())["config"])
    write_world(generate_world(config), config, tmp_path)
    for name in ("corpus.jsonl", "questions.jsonl", "world.json"):
        assert filecmp.cmp(shipped / name, tmp_path / name, shallow=False), f"{name} differs; regenerate data/world"


def test_same_seed_same_bytes_other_seed_other_world(tmp_path):
    config = WorldConfig(seed=3, scale=0.5, questions_per_type=10, dev_per_type=4)
    write_world(generate_world(config), config, tmp_path / "a")
    write_world(generate_world(config), config, tmp_path / "b")
    assert (tmp_path / "a" / "corpus.jsonl").read_bytes() == (tmp_path / "b" / "corpus.jsonl").read_bytes()
    assert (tmp_path / "a" / "questions.jsonl").read_bytes() == (tmp_path / "b" / "questions.jsonl").read_bytes()
    other = generate_world(config.model_copy(update={"seed": 4}))
    assert [d.text for d in other.corpus] != [d.text for d in load_dataset(tmp_path / "a").corpus]


def test_default_world_question_mix(world):
    counts = world.evalset.type_counts()
    assert set(counts) == set(WORLD_QUESTION_TYPES)
    assert all(n >= 25 for n in counts.values())
    for split in ("dev", "test"):
        assert set(world.evalset.select(split=split).type_counts()) == set(WORLD_QUESTION_TYPES)
    assert len({q.text for q in world.evalset}) == len(world.evalset)


def test_gold_fields_are_consistent(world):
    for q in world.evalset:
        if q.type == "unanswerable":
            assert q.answer is None and not q.gold_doc_ids and q.min_hops == 0
        else:
            assert q.answer and q.gold_doc_ids and q.min_hops >= 1
        if q.type == "bridge":
            assert q.min_hops == 2 and len(q.gold_doc_ids) == 2 and q.metadata["bridge_entity"]
        if q.type == "stale":
            assert q.metadata["outdated_answer"] != q.answer


def test_answers_stand_in_gold_documents(world):
    """Every answerable question's answer (or an alias) is written in one of its gold documents,
    except comparison yes/no answers, which must be inferred."""
    for q in world.evalset:
        if not q.answerable or q.answer in ("yes", "no"):
            continue
        text = " ".join(world.corpus[d].text for d in q.gold_doc_ids).lower()
        assert any(a.lower() in text for a in q.gold_answers), q


def test_distractors_present(world):
    kinds = [d.metadata["kind"] for d in world.corpus]
    for kind in ("service_outdated", "flag_outdated", "meeting", "noise", "rename", "launch"):
        assert kind in kinds
    assert any(d.metadata.get("injection") for d in world.corpus)


def test_stale_questions_have_an_outdated_duplicate(world):
    for q in world.evalset.select(types=["stale"]):
        assert f"{q.gold_doc_ids[0]}-archived" in world.corpus


def test_scale_knob_grows_every_count():
    small, big = WorldConfig(scale=1).counts(), WorldConfig(scale=140).counts()
    assert all(big[k] >= 100 * small[k] for k in small)
    world = generate_world(WorldConfig(scale=3, questions_per_type=5, dev_per_type=2))
    assert len(world.corpus) > 3 * 700


def test_config_is_validated():
    with pytest.raises(ValueError):
        WorldConfig(scale=0)
    with pytest.raises(ValueError):
        WorldConfig(questions_per_type=5, dev_per_type=6)
    with pytest.raises(ValueError):
        WorldConfig(colour="blue")
