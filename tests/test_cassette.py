"""Cassettes (rag_lab.llm.cassette): record a backend's calls, replay them bit for bit, resume a killed
recording, and fail loudly — naming question, role and the nearest recorded call — on a request the
cassette does not hold. The "live" backend here is the simulator (fast and deterministic); the real
model's recorded cassettes are replayed by tests/test_recorded_runs.py."""

from __future__ import annotations

import json

import pytest

from rag_lab.errors import CassetteMiss, ConfigError, DataFormatError
from rag_lab.llm.base import LLMRequest, SamplingParams
from rag_lab.llm.cassette import (
    Cassette,
    CassetteHeader,
    RecordingBackend,
    ReplayBackend,
    made_with_counts,
    recording_header,
)
from rag_lab.llm.factory import open_backend
from rag_lab.llm.prompts import EvidenceItem, answer_prompt, controller_prompt, route_prompt
from rag_lab.llm.schemas import ControllerDecision, RouteDecision
from rag_lab.llm.simulator import SimulatedBackend

EVIDENCE = [
    EvidenceItem(1, "Ada Lovelace", "Ada Lovelace was born in London in 1815 and worked with Charles Babbage."),
    EvidenceItem(2, "Analytical Engine", "The Analytical Engine was a mechanical computer designed by Charles Babbage."),
]
QUESTIONS = ["In which city was Ada Lovelace born?", "Who designed the Analytical Engine?",
             "When was Ada Lovelace born?"]


def requests_for(question: str) -> list[LLMRequest]:
    return [
        LLMRequest(role="route", messages=route_prompt(question), response_schema=RouteDecision),
        LLMRequest(role="controller", messages=controller_prompt(question, EVIDENCE, [question], 3, False),
                   response_schema=ControllerDecision),
        LLMRequest(role="answer", messages=answer_prompt(question, EVIDENCE, "correct"), params=SamplingParams(max_tokens=64)),
    ]


class Counting(SimulatedBackend):
    """The simulator, counting the calls that reach it (what a live model would be asked)."""

    def __init__(self) -> None:
        super().__init__(profile="ideal", seed=0)
        self.calls = 0

    def _generate(self, request):
        self.calls += 1
        return super()._generate(request)


def record(path, questions, live=None):
    live = live or Counting()
    backend = RecordingBackend(live, Cassette.for_recording(path, recording_header(live, {"model_sha256": "abc"})))
    responses = [backend.complete(r) for q in questions for r in requests_for(q)]
    return live, responses


def test_replay_gives_the_recorded_responses_bit_for_bit(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    live, recorded = record(path, QUESTIONS)
    assert live.calls == 9 and len(Cassette.for_replay(path)) == 9
    replay = ReplayBackend(Cassette.for_replay(path))
    replayed = [replay.complete(r) for q in QUESTIONS for r in requests_for(q)]
    keep = ("role", "text", "parsed", "outcome", "reason", "usage", "modelled_latency_s", "backend", "model")
    assert [r.model_dump(include=set(keep)) for r in replayed] == [r.model_dump(include=set(keep)) for r in recorded]
    assert replay.cache_identity() == live.cache_identity() and replay.name == live.name


def test_a_request_not_in_the_cassette_names_question_role_and_the_nearest_recorded(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    record(path, QUESTIONS[:2])
    replay = ReplayBackend(Cassette.for_replay(path))
    with pytest.raises(CassetteMiss) as caught:
        replay.complete(requests_for("In which city was Ada Lovelace buried?")[1])
    message = str(caught.value)
    assert "controller call" in message and "Ada Lovelace buried" in message
    assert "nearest recorded request is the controller call for question 'In which city was Ada Lovelace born?'" in message
    assert "born?" in message.split("asked", 1)[1]  # the first differing line, both sides
    assert caught.value.role == "controller"


def test_a_killed_recording_resumes_without_asking_twice(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    record(path, QUESTIONS[:2])
    # killed mid-write: the last line is cut short
    data = path.read_bytes()
    path.write_bytes(data[:-40])
    assert len(Cassette.for_replay(path)) == 5  # the cut line is ignored
    live, _ = record(path, QUESTIONS)
    assert live.calls == 4  # the cut entry and the third question's three; the other five came from the cassette
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 10 and all(json.loads(line) for line in lines)  # the cut line was dropped, not kept
    assert len(Cassette.for_replay(path)) == 9


def test_bad_cassettes_are_clear_errors(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    record(path, QUESTIONS[:1])
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([lines[0], '{"key": "x"}', *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"c\.jsonl:2: .*bad cassette entry"):
        Cassette.for_replay(path)
    (tmp_path / "h.jsonl").write_text('{"not": "a header"}\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"h\.jsonl:1: not a cassette header"):
        Cassette.for_replay(tmp_path / "h.jsonl")
    with pytest.raises(ConfigError, match="does not exist"):
        Cassette.for_replay(tmp_path / "missing.jsonl")


def test_another_models_cassette_is_not_recorded_into(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    record(path, QUESTIONS[:1])
    other = CassetteHeader(name="openai", model="local-gguf", identity=("openai", "llama-cpp:other.gguf"),
                           provenance={"model_sha256": "def"})
    with pytest.raises(ConfigError, match="record into another file"):
        Cassette.for_recording(path, other)


def test_open_backend_records_outside_the_cache_and_replays_uncached(tmp_path) -> None:
    path, cache = tmp_path / "c.jsonl", tmp_path / "cache.sqlite"
    request = requests_for(QUESTIONS[0])[2]
    with open_backend("sim", profile="ideal", cache=cache) as warm:
        warm.complete(request)  # the response cache now holds it
    with open_backend("sim", profile="ideal", cache=cache, record=path) as backend:
        recorded = backend.complete(request)
    assert recorded.cached  # answered by the cache, and recorded all the same
    assert len(Cassette.for_replay(path)) == 1
    with open_backend("recorded", model=str(path)) as replay:
        assert replay.complete(request).text == recorded.text
    with pytest.raises(ConfigError, match="cannot be recorded again"), open_backend("recorded", model=str(path), record=path):
        pass


ENGINE = {"model_sha256": "abc", "llama_cpp": "0.3.36", "llama_build": "-march=x86-64-v3; AVX2 = 1",
          "n_ctx": "4096", "n_threads": "1", "prompt_cache": "False"}


def record_with(path, questions, made_with):
    live = Counting()
    header = recording_header(live, made_with)
    backend = RecordingBackend(live, Cassette.for_recording(path, header), made_with)
    for q in questions:
        for r in requests_for(q):
            backend.complete(r)
    return live


def test_each_call_states_how_it_was_made_and_settings_may_change_between_calls(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    record_with(path, QUESTIONS[:1], ENGINE)
    record_with(path, QUESTIONS[1:2], {**ENGINE, "n_threads": "2", "n_ctx": "8192"})   # a resumed recording
    cassette = Cassette.for_replay(path)
    made = [e.made_with for e in cassette.entries.values()]
    assert [m["n_threads"] for m in made] == ["1"] * 3 + ["2"] * 3
    assert cassette.header.provenance["n_ctx"] == "4096"   # the header: the settings when it was created
    counts = made_with_counts(cassette)
    assert counts == {"n_ctx=4096, n_threads=1, prompt_cache=False, llama_cpp=0.3.36": 3,
                      "n_ctx=8192, n_threads=2, prompt_cache=False, llama_cpp=0.3.36": 3}
    record(path, QUESTIONS[2:])   # a backend that states nothing (as calls did before made_with)
    assert made_with_counts(Cassette.for_replay(path))["not recorded per call"] == 3


def test_another_llama_build_is_not_recorded_into_and_a_mixed_model_is_not_replayed(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    record_with(path, QUESTIONS[:1], ENGINE)
    with pytest.raises(ConfigError, match=r"another engine .*llama_build '-march=x86-64-v3; AVX2 = 1' -> '-march=native'"):
        record_with(path, QUESTIONS[1:2], {**ENGINE, "llama_build": "-march=native"})
    with pytest.raises(ConfigError, match=r"llama_cpp '0.3.36' -> '0.3.40'"):
        record_with(path, QUESTIONS[1:2], {**ENGINE, "llama_cpp": "0.3.40"})
    # an entry of another model in the cassette (written by hand or by a broken tool) is refused on replay
    lines = path.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[1])
    entry["made_with"]["model_sha256"] = "f00"
    path.write_text("\n".join([lines[0], json.dumps(entry), *lines[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="made with model sha256 f00, not the header's abc"):
        Cassette.for_replay(path)
