"""A replay refuses any model mismatch (issue 49, item 3): a cassette records which model answered (a GGUF's sha256,
or an ``openai`` endpoint's model name), and a replay compares it with the model its sweep names, for every backend
kind that records: ``local`` by packaged name or by ``.gguf`` path (a missing file and random bytes included), and
``openai`` by name. The shipped Qwen 1.5B cassettes, recorded before headers carried the identity, derive it from the
sha256 their provenance states and keep replaying (tests/test_recorded_runs.py replays them to their tables)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from rag_lab.cli import main
from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.backend_options import replay_cassette
from rag_lab.experiments.engine.sweep import BackendSpec
from rag_lab.llm.cassette import Cassette, CassetteHeader, ModelIdentity, recording_header
from rag_lab.llm.local.model_pack import CHUNKED_MODELS
from rag_lab.llm.scripted import ScriptedBackend

REPO = Path(__file__).resolve().parent.parent
#: A shipped cassette of Qwen2.5-Coder-1.5B (read only; its header predates ``model_identity``).
QWEN_CASSETTE = REPO / "data" / "recorded" / "qwen2.5-coder-1.5b_world.jsonl"
QWEN_SHA256 = CHUNKED_MODELS["qwen2.5-coder-1.5b"].sha256


def replay_sweep(tmp_path: Path, backend: dict) -> Path:
    """A one-question sweep file replaying the shipped Qwen cassette with ``backend`` (its kind and model)."""
    path = tmp_path / "replay.yaml"
    spec = {"name": "replay_check", "dataset": "world", "split": "test", "per_type": 1, "types": ["single"],
            "backend": {**backend, "max_tokens": 200, "cassette": str(QWEN_CASSETTE)}}
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def refused(tmp_path: Path, capsys, backend: dict) -> str:
    """Run ``rag-lab sweep --replay`` with ``backend``; assert it is refused before anything is written."""
    out = tmp_path / "run"
    status = main(["sweep", str(replay_sweep(tmp_path, backend)), "--out", str(out), "--replay", "--quiet"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert not out.exists(), "a refused replay wrote a run directory"
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    return err


def test_the_shipped_cassettes_identity_is_derived_from_the_sha256_they_record() -> None:
    header = Cassette.read_header(QWEN_CASSETTE)
    assert header.model_identity is None   # recorded before headers carried it; never edited by hand
    assert header.recorded_model() == ModelIdentity(sha256=QWEN_SHA256)
    assert replay_cassette(BackendSpec(kind="local", model="qwen2.5-coder-1.5b", cassette=str(QWEN_CASSETTE),
                                       replay=True)) == str(QWEN_CASSETTE)


@pytest.mark.parametrize("model", ["missing", "random_bytes"])
def test_a_gguf_path_model_replaying_a_qwen_cassette_is_refused(model: str, tmp_path, capsys) -> None:
    gguf = tmp_path / f"{model}.gguf"
    if model == "random_bytes":
        gguf.write_bytes(hashlib.sha256(b"not a model").digest() * 64)
    err = refused(tmp_path, capsys, {"kind": "local", "model": str(gguf)})
    assert f"cassette {QWEN_CASSETTE} was recorded with the GGUF model with sha256 {QWEN_SHA256}" in err
    assert str(gguf) in err and ("does not exist" in err if model == "missing" else "not a GGUF model file" in err)


def test_an_openai_model_name_replaying_a_qwen_cassette_is_refused(tmp_path, capsys) -> None:
    err = refused(tmp_path, capsys, {"kind": "openai", "model": "gpt-4o"})
    assert f"recorded with the GGUF model with sha256 {QWEN_SHA256}" in err and "'gpt-4o'" in err


def test_another_packaged_model_replaying_a_qwen_cassette_is_refused(tmp_path, capsys) -> None:
    err = refused(tmp_path, capsys, {"kind": "local", "model": "qwen2.5-coder-0.5b"})
    assert CHUNKED_MODELS["qwen2.5-coder-0.5b"].sha256 in err


def test_a_gguf_path_replays_the_cassette_of_the_same_file_and_no_other(tmp_path) -> None:
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF" + bytes(range(256)) * 8)
    digest = hashlib.sha256(gguf.read_bytes()).hexdigest()
    cassette = tmp_path / "c.jsonl"
    spec = BackendSpec(kind="local", model=str(gguf), cassette=str(cassette), replay=True)
    for recorded, accepted in ((digest, True), (QWEN_SHA256, False)):
        header = CassetteHeader(name="openai", model="local-gguf", identity=("openai", "local-gguf@llama-cpp:m.gguf"),
                                provenance={"model_sha256": recorded}, model_identity=ModelIdentity(sha256=recorded))
        cassette.write_text(header.model_dump_json() + "\n", encoding="utf-8")
        if accepted:
            assert replay_cassette(spec) == str(cassette)
        else:
            with pytest.raises(ConfigError, match=f"recorded with the GGUF model with sha256 {QWEN_SHA256}"):
                replay_cassette(spec)


def test_an_openai_recording_records_the_endpoint_model_and_replays_only_under_that_name(tmp_path) -> None:
    cassette = tmp_path / "openai.jsonl"
    header = recording_header(ScriptedBackend({}, default="x", model="gpt-4o"))
    assert header.model_identity == ModelIdentity(name="gpt-4o")
    Cassette.for_recording(cassette, header)
    assert replay_cassette(BackendSpec(kind="openai", model="gpt-4o", cassette=str(cassette), replay=True))
    for other in ("gpt-4o-mini", None):
        with pytest.raises(ConfigError, match="gpt-4o"):
            replay_cassette(BackendSpec(kind="openai", model=other, cassette=str(cassette), replay=True))
    with pytest.raises(ConfigError, match="recorded with the endpoint model 'gpt-4o'"):
        replay_cassette(BackendSpec(kind="local", model="qwen2.5-coder-1.5b", cassette=str(cassette), replay=True))
