"""The seeded synthetic-world generator: same config, same bytes.

``generate_world(WorldConfig(seed=7))`` draws a fictional software company (people, teams, services, feature flags,
incidents, releases), renders it as documents with distractors, and asks eight types of evaluation questions about it.
``write_world`` stores it as ``corpus.jsonl`` (BEIR shape), ``questions.jsonl`` and ``world.json``."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rag_lab.errors import ConfigError
from rag_lab.records import WORLD_QUESTION_TYPES, Corpus, Dataset, EvalSet
from rag_lab.world.documents import render_corpus
from rag_lab.world.entities import draw_world
from rag_lab.world.questions import build_questions

#: Bumped when the same seed renders different bytes (2: incident postmortems date the incident in digits).
GENERATOR_VERSION = "2"

#: Entity counts at ``scale=1`` (about 700 documents).
BASE_COUNTS = {
    "teams": 20,
    "people": 120,
    "services": 60,
    "flags": 40,
    "incidents": 100,
    "releases": 120,
    "meetings": 60,
    "noise": 40,
}


class WorldConfig(BaseModel):
    """Parameters of a synthetic world. ``scale`` multiplies every entity count
    (``scale=150`` gives about 107k documents); the question counts do not scale."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = 7
    scale: float = Field(default=1.0, gt=0.0, le=1000.0)
    questions_per_type: int = Field(default=50, ge=1, le=2000)
    dev_per_type: int = Field(default=20, ge=0)
    injection_rate: float = Field(default=0.1, ge=0.0, le=1.0)
    question_types: tuple[str, ...] = Field(default=WORLD_QUESTION_TYPES, min_length=1)

    @model_validator(mode="after")
    def _dev_fits(self) -> WorldConfig:
        if self.dev_per_type > self.questions_per_type:
            raise ConfigError("dev_per_type cannot exceed questions_per_type")
        unknown = sorted(set(self.question_types) - set(WORLD_QUESTION_TYPES))
        if unknown:
            raise ConfigError(f"unknown question types {unknown}; the world asks {list(WORLD_QUESTION_TYPES)}")
        return self

    def counts(self) -> dict[str, int]:
        counts = {k: max(2, round(v * self.scale)) for k, v in BASE_COUNTS.items()}
        counts["people"] = max(counts["people"], counts["teams"])
        return counts


def generate_world(config: WorldConfig | None = None) -> Dataset:
    """Generate the world's corpus and evaluation set, deterministically from ``config``."""
    config = config or WorldConfig()
    rng = random.Random(config.seed)
    counts = config.counts()
    world = draw_world(rng, counts)
    docs = render_corpus(rng, world, counts["meetings"], counts["noise"], config.injection_rate)
    questions = build_questions(world, rng, config.question_types, config.questions_per_type, config.dev_per_type)
    return Dataset(Corpus(docs, name="world"), EvalSet(questions, name="world"), name="world")


def _write_lines(path: Path, rows: list[dict]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def write_world(dataset: Dataset, config: WorldConfig, folder: str | Path) -> Path:
    """Write ``corpus.jsonl``, ``questions.jsonl`` and ``world.json`` into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    _write_lines(folder / "corpus.jsonl",
                 [{"_id": d.doc_id, "title": d.title, "text": d.text, "metadata": d.metadata} for d in dataset.corpus])
    _write_lines(folder / "questions.jsonl", [q.model_dump(mode="json") for q in dataset.evalset])
    meta = {"generator_version": GENERATOR_VERSION, "config": config.model_dump(), "documents": len(dataset.corpus),
            "questions": len(dataset.evalset), "question_types": dataset.evalset.type_counts()}
    (folder / "world.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return folder
