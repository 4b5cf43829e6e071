"""The simulator is honest, by tests that can fail.

1. **Audit that cannot be sidestepped**: the simulator runs in a child process whose audit hook is
   installed by a ``sitecustomize`` module on the child's path, so it is active before the child's own
   code runs and before any ``rag_lab`` import (the test checks no ``rag_lab`` module was loaded when it
   went in). Everything after that — building the backend, loading the embedding model and the shipped
   vectors, every role's call — runs under it. It records:

   * ``open`` of anything under the repository's ``data/`` (the shipped vectors,
     ``data/*/vectors/*.npz``, allow-listed by path), under the shared data folder (``../shared/data``
     relative to the repository root) or under ``$RAG_LAB_SHARED_DATA``, and of any file whose basename
     is that of a real dataset file there (``tune.json``, ``questions.jsonl``, ...) wherever it is;
   * ``import`` of ``rag_lab.world``, ``rag_lab.loaders`` or ``rag_lab.evaluation`` — and, at the end,
     any of them found in ``sys.modules`` (a module loaded before the hook, or behind its back);
   * ``sqlite3.connect`` (but the embedding cache's own file, allow-listed by path), ``subprocess.Popen``
     (and the ``os`` exec/spawn/system family) and ``socket.connect``: a simulator has no business with
     another database, a child process or the network.

   The prompts are built in the parent, from the shipped world and its labels, and handed over on stdin.
   The honest simulator must pass; a deliberately leaking subclass per channel must be caught (the test
   of the test): open, import, import before the hook, sqlite, subprocess, socket, a file in
   ``$RAG_LAB_SHARED_DATA``, a copy of a real file under its real basename.
2. **Counterfactuals**: change a fact in the evidence (a year, a name) and the answer follows it;
   remove the supporting sentence and the answer is a refusal or no longer states the fact.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from timing import scaled

from rag_lab.llm import prompts
from rag_lab.llm.prompts import INSUFFICIENT, EvidenceItem
from rag_lab.llm.simulator import SimulatedBackend

ROOT = Path(__file__).resolve().parent.parent
#: The shared data folder, as the workplace lays it out: ``../shared/data`` next to the repository.
SHARED_DATA = ROOT.parent / "shared" / "data"
FORBIDDEN_MODULES = ("rag_lab.world", "rag_lab.loaders", "rag_lab.evaluation")
E = EvidenceItem

#: The child's sitecustomize: installs the hook at interpreter start, from the config in $RAG_LAB_AUDIT.
SITECUSTOMIZE = r'''
import json, os, sys

config = json.loads(os.environ["RAG_LAB_AUDIT"])
for name in config.get("preimport", []):      # only the test of the test: a module loaded before the hook
    __import__(name)
loaded_before_hook = sorted(m for m in sys.modules if m == "rag_lab" or m.startswith("rag_lab."))
violations = []
_dirs = [os.path.realpath(d) for d in config["forbidden_dirs"]]
_allowed = {os.path.realpath(p) for p in config["allowed_files"]}
_databases = {os.path.realpath(p) for p in config["allowed_databases"]}
_names = set(config["forbidden_basenames"])
_modules = tuple(config["forbidden_modules"])
_exec = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty")


def _path(arg):
    try:
        return os.path.realpath(os.fsdecode(arg))
    except Exception:
        return str(arg)


def _hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = _path(args[0])
        if path in _allowed:
            return
        if any(path == d or path.startswith(d + os.sep) for d in _dirs) or os.path.basename(path) in _names:
            violations.append(f"open {path}")
    elif event == "import" and args and isinstance(args[0], str):
        if args[0].startswith(_modules):
            violations.append(f"import {args[0]}")
    elif event == "sqlite3.connect":
        if not (args and isinstance(args[0], (str, bytes, os.PathLike)) and _path(args[0]) in _databases):
            violations.append(f"sqlite3.connect {args[0] if args else ''}")
    elif event in _exec:
        violations.append(f"{event} {args[1] if event == 'subprocess.Popen' and len(args) > 1 else args[:1]}")
    elif event == "socket.connect":
        violations.append(f"socket.connect {args[1] if len(args) > 1 else ''}")


sys.addaudithook(_hook)
'''

#: Runs in the child under the hook: read the prompts, build the backend, run every role, report.
HARNESS = r'''
import json, os, sys
import sitecustomize as audit

payload = json.loads(sys.stdin.read())

from rag_lab.llm.base import Message
from rag_lab.llm.simulator import SimulatedBackend


def question_of(messages):
    return messages[-1].content.split("<<<QUESTION>>>\n", 1)[-1].split("\n<<<END", 1)[0]


class LeakByImport(SimulatedBackend):
    """Looks the gold answer up through the dataset loader."""
    def respond(self, role, messages):
        from rag_lab.loaders import load_dataset
        gold = {q.text: q.answer for q in load_dataset("world").evalset}
        return gold.get(question_of(messages)) or super().respond(role, messages)


class LeakByOpen(SimulatedBackend):
    """Reads a file it must not (the evaluation set, a file in the shared folder, a renamed copy)."""
    def respond(self, role, messages):
        with open(payload["leak_file"], "rb") as fh:
            fh.read(100)
        return super().respond(role, messages)


class LeakBySqlite(SimulatedBackend):
    """Reads the gold answers from a database (sqlite opens its file in C: no open event)."""
    def respond(self, role, messages):
        import sqlite3
        con = sqlite3.connect(payload["leak_file"])
        con.close()
        return super().respond(role, messages)


class LeakBySubprocess(SimulatedBackend):
    """Has another process read the evaluation set."""
    def respond(self, role, messages):
        import subprocess
        subprocess.run(["head", "-c", "100", payload["leak_file"]], capture_output=True, check=False)
        return super().respond(role, messages)


class LeakBySocket(SimulatedBackend):
    """Asks a server for the answer (the connection is refused; the attempt is the leak)."""
    def respond(self, role, messages):
        import socket
        with socket.socket() as s:
            s.settimeout(0.5)
            try:
                s.connect(("127.0.0.1", payload["leak_port"]))
            except OSError:
                pass
        return super().respond(role, messages)


kind = {"honest": SimulatedBackend, "leak_import": LeakByImport, "preimport": SimulatedBackend,
        "leak_open": LeakByOpen, "leak_sqlite": LeakBySqlite, "leak_subprocess": LeakBySubprocess,
        "leak_socket": LeakBySocket}[payload["backend"]]
backend = kind(payload["profile"])
outputs = [backend.respond(role, [Message(**m) for m in messages]) for role, messages in payload["calls"]]
modules = sorted(m for m in sys.modules if m.startswith(tuple(payload["forbidden_modules"])))
violations = audit.violations + [f"sys.modules holds {m}" for m in modules]
print(json.dumps({"outputs": outputs, "violations": violations[:30], "loaded_before_hook": audit.loaded_before_hook}))
'''


@pytest.fixture(scope="module")
def world_calls(world):
    """Every role's prompt for a sample of world questions (evidence by BM25 from the question)."""
    from rag_lab.chunking import chunk_corpus
    from rag_lab.index import make_index

    chunks = chunk_corpus(world.corpus)
    by_id = {c.chunk_id: c for c in chunks}
    index = make_index("bm25")
    index.build(chunks)
    questions = random.Random(5).sample(list(world.evalset), 12)
    calls = []
    for q, hits in zip(questions, index.search([q.text for q in questions], 5), strict=True):
        ev = [E(i, by_id[c].title, by_id[c].text) for i, (c, _) in enumerate(hits, start=1)]
        draft = "A draft answer [1]."
        for role, messages in (("route", prompts.route_prompt(q.text)), ("rewrite", prompts.rewrite_prompt(q.text, 3)),
                               ("hyde", prompts.hyde_prompt(q.text, 2)),
                               ("controller", prompts.controller_prompt(q.text, ev, [q.text], 3, True)),
                               ("answer", prompts.answer_prompt(q.text, ev, "correct")),
                               ("judge", prompts.judge_prompt(q.text, draft, ev)),
                               ("grade", prompts.grade_prompt(q.text, ev[0]))):
            calls.append((role, [m.model_dump() for m in messages]))
    return calls


def _data_files(folder: Path) -> list[Path]:
    """The files of a data folder, but its shipped vectors."""
    if not folder.is_dir():
        return []
    return [p for p in folder.rglob("*") if p.is_file() and "vectors" not in p.relative_to(folder).parts]


def audit_config(extra_shared: str | None = None) -> dict:
    """What the child's hook forbids: the data folders (repository, shared, $RAG_LAB_SHARED_DATA), the
    basenames of every real data file in them, the dataset modules; the shipped vectors and the embedding
    cache's database allowed by path."""
    from rag_lab.paths import DATA_DIR, cache_dir

    shared = [SHARED_DATA, *(Path(p) for p in [os.environ.get("RAG_LAB_SHARED_DATA"), extra_shared] if p)]
    folders = [DATA_DIR, ROOT / "data", *shared]
    names = sorted({p.name for folder in folders for p in _data_files(folder)} - {"README.md", "LICENSE"})
    return {"forbidden_dirs": [str(f) for f in folders], "forbidden_basenames": names,
            "allowed_files": [str(p) for p in sorted(DATA_DIR.glob("*/vectors/*.npz"))],
            "allowed_databases": [str(cache_dir() / "embeddings.sqlite")],
            "forbidden_modules": list(FORBIDDEN_MODULES)}


def _audit(calls, backend: str, profile: str = "sloppy", leak_file: str = "", env: dict | None = None,
           preimport: tuple[str, ...] = (), tmp_dir: Path | None = None) -> dict:
    import socket
    import tempfile

    site_dir = Path(tempfile.mkdtemp(prefix="audit_", dir=tmp_dir))
    (site_dir / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    child_env = {**os.environ, **(env or {})}
    config = {**audit_config(child_env.get("RAG_LAB_SHARED_DATA")), "preimport": list(preimport)}
    child_env["RAG_LAB_AUDIT"] = json.dumps(config)
    child_env["PYTHONPATH"] = os.pathsep.join([str(site_dir), str(ROOT), os.environ.get("PYTHONPATH", "")])
    with socket.socket() as s:               # a port nobody listens on, for the socket leak to knock at
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    payload = {"calls": calls, "backend": backend, "profile": profile, "leak_file": leak_file, "leak_port": port,
               "forbidden_modules": list(FORBIDDEN_MODULES)}
    done = subprocess.run([sys.executable, "-c", HARNESS], input=json.dumps(payload), capture_output=True, text=True,
                          timeout=scaled(300), cwd=site_dir, env=child_env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_audit_forbids_the_right_places():
    """The shared folder is ``../shared/data`` from the repository root (not one level higher), the real
    files' basenames are forbidden wherever they are, and the shipped vectors are the only allowed data."""
    from rag_lab.paths import DATA_DIR

    config = audit_config()
    assert str(ROOT.parent / "shared" / "data") in config["forbidden_dirs"]
    assert {"questions.jsonl", "corpus.jsonl", "world.json"} <= set(config["forbidden_basenames"])
    if SHARED_DATA.is_dir():              # the workplace's real files: tune/check/slice and SciFact's
        assert {"tune.json", "check.json", "slice.jsonl", "queries.jsonl"} <= set(config["forbidden_basenames"])
    assert config["allowed_files"] and all("/vectors/" in p and p.endswith(".npz") for p in config["allowed_files"])
    assert all(Path(p).parent.parent.parent == DATA_DIR for p in config["allowed_files"])


def test_audited_simulator_opens_no_dataset_and_imports_no_loader(world_calls):
    report = _audit(world_calls, "honest")
    assert report["loaded_before_hook"] == []     # the hook was in place before any rag_lab import
    assert report["violations"] == []
    # the audited run did the real work: the same outputs as in this process
    here = SimulatedBackend("sloppy")
    from rag_lab.llm.base import Message

    expected = [here.respond(role, [Message(**m) for m in messages]) for role, messages in world_calls]
    assert report["outputs"] == expected
    assert len(set(report["outputs"])) > len(world_calls) // 3


def _questions_file() -> str:
    from rag_lab.paths import DATA_DIR

    return str(DATA_DIR / "world" / "questions.jsonl")


@pytest.mark.parametrize("leak", ["open", "import", "import_before_hook", "sqlite", "subprocess", "socket",
                                  "shared_env", "basename"])
def test_the_audit_catches_a_leak_through_each_channel(world_calls, leak, tmp_path):
    """The test of the test: a simulator that reaches for the answers through any channel is caught."""
    calls, questions = world_calls[:3], _questions_file()
    if leak == "open":
        report, expect = _audit(calls, "leak_open", leak_file=questions), f"open {os.path.realpath(questions)}"
    elif leak == "import":
        report, expect = _audit(calls, "leak_import"), "import rag_lab.loaders"
    elif leak == "import_before_hook":     # loaded before the hook: no import event, but sys.modules tells
        report = _audit(calls, "preimport", preimport=("rag_lab.loaders",))
        assert report["loaded_before_hook"] and not any(v.startswith("import ") for v in report["violations"])
        expect = "sys.modules holds rag_lab.loaders"
    elif leak == "sqlite":
        report, expect = _audit(calls, "leak_sqlite", leak_file=str(tmp_path / "gold.db")), "sqlite3.connect"
    elif leak == "subprocess":
        report, expect = _audit(calls, "leak_subprocess", leak_file=questions), "subprocess.Popen"
    elif leak == "socket":
        report, expect = _audit(calls, "leak_socket"), "socket.connect"
    elif leak == "shared_env":              # any file in $RAG_LAB_SHARED_DATA, whatever its name
        shared = tmp_path / "shared"
        shared.mkdir()
        (shared / "notes.txt").write_text("gold answers")
        report = _audit(calls, "leak_open", leak_file=str(shared / "notes.txt"), env={"RAG_LAB_SHARED_DATA": str(shared)})
        expect = f"open {os.path.realpath(shared / 'notes.txt')}"
    else:                                    # a copy of a real file, under its real name, outside every data folder
        copy = tmp_path / "elsewhere" / "questions.jsonl"
        copy.parent.mkdir()
        copy.write_text(Path(questions).read_text(encoding="utf-8")[:2000])
        report, expect = _audit(calls, "leak_open", leak_file=str(copy)), f"open {os.path.realpath(copy)}"
    assert any(v.startswith(expect) for v in report["violations"]), (leak, report["violations"])


# --- counterfactuals: the answer follows the evidence ------------------------------------------

FILM = ("The Glass Orchard", "The Glass Orchard is a 2006 drama film directed by Mara Lindqvist. It stars Peter "
        "Hale as a stage magician. The film premiered at the Venice Film Festival.")
BAND = ("Copper Wolves", "Copper Wolves is an American rock band formed in Tulsa, Oklahoma. The band was founded by "
        "guitarist Elias Brandt in 1994. Their debut album was released in 1997.")
PEOPLE = {
    "Anna Verhoeven": "Anna Verhoeven (born 14 March 1931) is a Dutch painter. She lived in Utrecht.",
    "Tomas Riedel": "Tomas Riedel (born 2 July 1947) is a German composer. He studied in Leipzig.",
}


@pytest.fixture(scope="module")
def ideal() -> SimulatedBackend:
    return SimulatedBackend("ideal")


def ask(backend: SimulatedBackend, question: str, *items: tuple[str, str]) -> str:
    evidence = [E(i, t, x) for i, (t, x) in enumerate(items, start=1)]
    return backend.respond("answer", prompts.answer_prompt(question, evidence, "correct"))


def test_a_changed_year_changes_the_answer(ideal):
    q = "What year did The Glass Orchard come out?"
    assert "2006" in ask(ideal, q, FILM, BAND)
    changed = (FILM[0], FILM[1].replace("2006", "1983"))
    out = ask(ideal, q, changed, BAND)
    assert "1983" in out and "2006" not in out


def test_a_changed_name_changes_the_answer(ideal):
    q = "Who founded the band Copper Wolves?"
    assert "Elias Brandt" in ask(ideal, q, BAND, FILM)
    changed = (BAND[0], BAND[1].replace("Elias Brandt", "Nadia Okafor"))
    out = ask(ideal, q, changed, FILM)
    assert "Nadia Okafor" in out and "Elias Brandt" not in out


def test_a_changed_birth_year_flips_a_comparison(ideal):
    q = "Who was born first, Anna Verhoeven or Tomas Riedel?"
    items = [(t, x) for t, x in PEOPLE.items()]
    assert ask(ideal, q, *items).startswith("Anna Verhoeven")
    flipped = [(t, x.replace("1931", "1958")) if t == "Anna Verhoeven" else (t, x) for t, x in items]
    assert ask(ideal, q, *flipped).startswith("Tomas Riedel")
    # "who is older" compares the same years, whatever the question word
    assert ask(ideal, "Who is older, Anna Verhoeven or Tomas Riedel?", *items).startswith("Anna Verhoeven")


def test_removing_the_supporting_sentence_removes_the_claim(ideal):
    q = "In what city was Copper Wolves formed?"
    assert "Tulsa" in ask(ideal, q, BAND, FILM)
    cut = (BAND[0], BAND[1].replace("Copper Wolves is an American rock band formed in Tulsa, Oklahoma. ", ""))
    out = ask(ideal, q, cut, FILM)
    assert out == INSUFFICIENT or "Tulsa" not in out
    # the comparison loses one side: no guess with every knob off
    one_side = [("Anna Verhoeven", PEOPLE["Anna Verhoeven"]), FILM]
    assert ask(ideal, "Who was born first, Anna Verhoeven or Tomas Riedel?", *one_side) == INSUFFICIENT


# --- generality: no world vocabulary in the simulator ---------------------------------

WORLD_ONLY_NOUNS = ("service", "services", "team", "teams", "incident", "incidents", "replica", "replicas", "rollout",
                    "oncall", "on-call", "datastore", "runbook", "squad", "pager", "flag", "flags", "sev", "ticket",
                    "slack", "port", "ports", "wiki")


@pytest.mark.slow   # out of the quick loop: reads the whole world's vocabulary: ~8 s idle
def test_generic_simulator_code_holds_no_world_vocabulary(world):
    """``grep`` of rag_lab/llm/sim/ (and simulator.py): no name, identifier,
    technology or world-only noun of the synthetic world, and no phrase of its question templates."""
    from rag_lab.world import vocab

    names = {*vocab.FIRST_NAMES, *vocab.LAST_NAMES, *vocab.TEAM_NAMES, *vocab.OFFICES, *vocab.LANGUAGES,
             *vocab.DATASTORES, *vocab.FLAG_BUSINESS}
    names = {n for n in names if len(n) > 2}
    lower = {*vocab.FORMER_NAME_PARTS, *(o.lower() for o in vocab.FLAG_OBJECTS), *WORLD_ONLY_NOUNS,
             *(f"{a}-{b}" for a in vocab.SERVICE_FIRST for b in vocab.SERVICE_SECOND)}
    import re

    question_grams = set()
    for q in world.evalset:
        qw = re.findall(r"[a-z]+", q.text.lower())
        question_grams |= {" ".join(qw[i:i + 5]) for i in range(len(qw) - 4)}
    files = [ROOT / "rag_lab/llm/simulator.py", *sorted((ROOT / "rag_lab/llm/sim").rglob("*.py"))]
    assert len(files) > 10
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        for n in names:
            if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text):
                found.append(f"{path.name}: {n}")
        for w in lower:
            if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text, re.IGNORECASE):
                found.append(f"{path.name}: {w}")
        # a template phrase: five consecutive words of a world question
        words = re.findall(r"[a-z]+", text.lower())
        grams = {" ".join(words[i:i + 5]) for i in range(len(words) - 4)}
        found += [f"{path.name}: template {h!r}" for h in sorted(grams & question_grams)]
    assert not found, sorted(set(found))[:40]
    # one reader: there is no adapter folder left for world reading to hide in
    assert not (ROOT / "rag_lab/llm/sim/adapters").exists()
