"""The recorded real-model sweeps replay offline to the shipped tables, byte for byte, in seconds; a
policy the cassette did not record is an error naming the question and the role, never a silent
fall-back to the simulator or a live model."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from lessons.notebook import lesson_sweep
from rag_lab.errors import CassetteMiss
from rag_lab.experiments import run_sweep
from rag_lab.experiments.engine.resolved_sweep import select_questions
from rag_lab.experiments.engine.sweep_file import load_sweep_spec
from rag_lab.llm.cassette import Cassette
from rag_lab.llm.local.model_pack import CHUNKED_MODELS
from rag_lab.loaders import load_dataset
from rag_lab.paths import DATA_DIR, SWEEPS_DIR

#: Each shipped real-model sweep (every sweep file whose backend records into a cassette) and the table its replay
#: must reproduce.
RECORDED = {path.stem: DATA_DIR / "recorded" / f"{path.stem}_table.csv" for path in sorted(SWEEPS_DIR.glob("*.yaml"))
            if load_sweep_spec(path).backend.cassette}


def test_every_recorded_sweep_ships_its_table() -> None:
    assert {"real_qwen_hotpotqa", "real_qwen_hotpotqa_v2", "real_qwen_musique_v2"} <= set(RECORDED)
    missing = [str(path) for path in RECORDED.values() if not path.is_file()]
    assert not missing, f"recorded sweeps without their table (python scripts/recorded_findings.py SWEEP): {missing}"


#: The replays the quick loop runs: one sweep under the original prompts and one under v3 (the smallest); the full
#: test command replays every recorded sweep (each 10-55 s).
QUICK_REPLAYS = ("real_qwen_hotpotqa", "real_qwen_musique_disclosure")


@pytest.mark.parametrize("name", [n if n in QUICK_REPLAYS else pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(RECORDED)])
def test_a_recorded_sweep_replays_to_its_shipped_table(name: str, tmp_path) -> None:
    spec = load_sweep_spec(SWEEPS_DIR / f"{name}.yaml")
    header = Cassette.for_replay(spec.backend.cassette).header
    assert header.provenance["model_sha256"] == CHUNKED_MODELS[spec.backend.model].sha256
    assert header.provenance["llama_cpp"]
    result = lesson_sweep(SWEEPS_DIR / f"{name}.yaml", replay=True)   # the session's one replay of it
    assert result.complete
    table = result.write_reproducible_table(tmp_path / "table.csv")
    assert table.read_bytes() == RECORDED[name].read_bytes(), f"the replay of {name} differs from {RECORDED[name]}"


#: The replay of each recorded sweep in a fresh interpreter with an empty embedding cache: first into the session's
#: folder of replays ($RAG_LAB_REPLAYS, which the other replay tests and the notebooks then read), and where another
#: process replayed a sweep there first (with this session's warm cache: nothing shown), again into a folder of its own.
#: Prints the sweeps it replayed a second time.
EMPTY_CACHE_REPLAYS = """
import sys
from pathlib import Path
from lessons.notebook import lesson_sweep
from rag_lab.experiments import run_sweep
for i, name in enumerate(sys.argv[2:]):
    if lesson_sweep(name, replay=True).computed == 0:
        print(name)
        run_sweep(name, Path(sys.argv[1]) / str(i), progress="quiet", replay=True)
"""


@pytest.mark.slow    # out of the quick loop: replays every recorded sweep in a fresh interpreter (about 30 s)
@pytest.mark.early   # handed out with the first tests: the session's replays are these, from an empty cache
def test_a_replay_from_an_empty_cache_embeds_nothing(tmp_path) -> None:
    """Every text the replays embed is shipped: the datasets' own, and in ``data/recorded/vectors`` the queries
    and passages the model wrote (``python scripts/build_recorded_vectors.py``). So a fresh clone replays without
    loading the embedding model, with the query vectors of the recording. (Their values are checked by the
    byte-for-byte replays above: another vector would retrieve other passages and miss the cassette.)"""
    sweeps = [str(SWEEPS_DIR / f"{name}.yaml") for name in sorted(RECORDED)]
    env = {**os.environ, "RAG_LAB_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(DATA_DIR.parent / "notebooks"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", EMPTY_CACHE_REPLAYS, str(tmp_path / "runs"), *sweeps], env=env,
                          check=True, timeout=600, capture_output=True, text=True)
    print("replayed again, in a folder of their own:", done.stdout.split() or "none")
    database = tmp_path / "cache" / "embeddings.sqlite"
    computed = sqlite3.connect(database).execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] \
        if database.is_file() else 0
    assert computed == 0, (f"a replay from an empty cache embedded {computed} texts nobody shipped: "
                           "python scripts/build_recorded_vectors.py")


@pytest.mark.slow   # out of the quick loop: a replay that runs until its miss
def test_a_policy_the_cassette_did_not_record_is_named(tmp_path) -> None:
    spec = load_sweep_spec(SWEEPS_DIR / "real_qwen_hotpotqa.yaml")
    # the disclosed budget changes every controller prompt: nothing of it was recorded
    changed = spec.model_copy(update={"grid": {"disclosure.disclosed": [True]}})
    with pytest.raises(CassetteMiss, match=r"no recorded response for the controller call of question") as caught:
        run_sweep(changed, tmp_path / "run", progress="quiet", replay=True)
    assert "the nearest recorded request is the controller call" in str(caught.value)
    assert "You may run at most 3 rounds" in str(caught.value)  # the first line where the prompts differ


@pytest.mark.slow   # out of the quick loop: replays every recorded column
def test_the_robustness_table_gains_real_model_columns_without_touching_the_simulators(tmp_path) -> None:
    """Each headline finding on the recorded model: tested where the cassette holds every call, 'not recorded'
    (naming the missing call) where it does not, 'not applicable' for a finding that rests on simulator knobs;
    Holm over the real-model cells alone, so the simulator's verdicts are what they were."""
    from lessons.robustness import load_table
    from tools.course.robustness_markdown import markdown
    from tools.course.robustness_recorded import RECORDED_SWEEPS, add_recorded_columns

    # the rows whose verdicts are checked below (each status, both families), on the first recorded sweep alone:
    # the whole table on every recorded sweep is what `python -m tools.course robustness --recorded-only` replays
    keys = ("zero_yield_answers", "disclosure_calls", "hyde_recall", "round_cap_calls", "crag_abstention")
    first = dict(list(RECORDED_SWEEPS.items())[:1])
    table = load_table()
    table.findings = [row for row in table.findings if row["key"] in keys]
    sim_cells = [[dict(c) for c in row["cells"]] for row in table.findings]  # copies, before
    table = add_recorded_columns(table, work_dir=tmp_path, sweeps=first)
    assert [row["cells"] for row in table.findings] == sim_cells
    cells = {row["key"]: row["recorded"][0] for row in table.findings}
    assert cells["zero_yield_answers"]["status"] == cells["disclosure_calls"]["status"] == "not applicable"
    assert cells["hyde_recall"]["status"] == "not recorded" and "hyde call" in cells["hyde_recall"]["why"]
    spec = load_sweep_spec(SWEEPS_DIR / "real_qwen_hotpotqa.yaml")
    questions = len(select_questions(spec, load_dataset(spec.dataset).evalset))
    for key in ("round_cap_calls", "crag_abstention"):  # two tested cells: Holm over both
        assert cells[key]["status"] == "tested" and cells[key]["n"] == questions, key
        assert cells[key]["p_holm"] >= cells[key]["p"]
    assert "## A real model (recorded)" in markdown(table)


def test_the_live_cell_says_when_no_model_is_installed(monkeypatch, capsys) -> None:
    """Notebook 16's live cell: without the packaged model, no backend (the explorer runs the simulator) and a
    line that says why."""
    import contextlib

    from lessons import real_model as real_model_lesson
    from rag_lab.llm.local import model_pack

    monkeypatch.setattr(model_pack, "installed", lambda name: False)
    with contextlib.ExitStack() as stack:
        assert real_model_lesson.live_backend(stack, "qwen2.5-coder-0.5b") is None
    assert "qwen2.5-coder-0.5b is not installed (bash scripts/install.sh local qwen)" in capsys.readouterr().out


def test_a_session_replays_a_recorded_sweep_once(tmp_path, monkeypatch) -> None:
    """With ``$RAG_LAB_REPLAYS`` set (the test session sets it), the second replay of a sweep file reads the first
    one's run directory and computes nothing; unset, every replay computes its own."""
    from lessons.notebook import REPLAYS_ENV

    sweep = SWEEPS_DIR / "real_qwen_world_v2.yaml"
    monkeypatch.setenv(REPLAYS_ENV, str(tmp_path / "replays"))
    first, second = lesson_sweep(sweep, replay=True), lesson_sweep(sweep, replay=True)
    assert first.computed > 0 and second.computed == 0 and second.reused == first.computed
    assert first.run_dir == second.run_dir and first.run_dir.parent == tmp_path / "replays"
    assert second.table.equals(first.table)
    monkeypatch.delenv(REPLAYS_ENV)
    assert lesson_sweep(sweep, replay=True).computed == first.computed
