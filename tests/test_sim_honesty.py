"""The simulator is honest, by tests that can fail.

1. **Audit**: the simulator runs in a subprocess under ``sys.addaudithook``. The hook records any
   ``open`` of a dataset, evaluation-set or qrels file (anything under the repository's ``data/``
   or the shared data folder, and any file named like one: ``questions*.jsonl``, ``corpus.jsonl``,
   ``qrels``, ``*.tsv``, HotpotQA/MuSiQue ``.json(l)``) and any import of ``rag_lab.world``,
   ``rag_lab.loaders`` or ``rag_lab.evaluation``. Allowed: Python's own files, installed packages
   (the packaged MiniLM weights and tokenizer among them) and the embedding cache. The prompts are
   built here, from the shipped world and its labels, and handed over on stdin before the hook is
   installed. The honest simulator must pass; a deliberately leaking subclass (it looks the gold
   answer up, by import or by a plain ``Path.open``) must be caught: the test of the test.
2. **Counterfactuals**: change a fact in the evidence (a year, a name) and the answer follows it;
   remove the supporting sentence and the answer is a refusal or no longer states the fact.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from rag_lab.llm import prompts
from rag_lab.llm.prompts import INSUFFICIENT, EvidenceItem
from rag_lab.llm.simulator import SimulatedBackend

ROOT = Path(__file__).resolve().parent.parent
E = EvidenceItem

#: Runs in the subprocess: read the prompts, install the hook, run every role, report.
HARNESS = r'''
import json, os, re, sys
from pathlib import Path

payload = json.loads(sys.stdin.read())
forbidden_dirs = [str(Path(d).resolve()) for d in payload["forbidden_dirs"]]
name_pattern = re.compile(r"(questions[^/]*\.jsonl|corpus\.jsonl|qrels|\.tsv$|hotpot|musique|scifact|world\.json)", re.I)
violations = []

def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        raw = os.fsdecode(args[0])
        try:
            path = str(Path(raw).resolve())
        except Exception:
            path = raw
        if any(path == d or path.startswith(d + os.sep) for d in forbidden_dirs) or name_pattern.search(
                os.path.basename(path)) or "/qrels/" in path:
            violations.append(f"open {path}")
    elif event == "import" and args and isinstance(args[0], str):
        if args[0].startswith(("rag_lab.world", "rag_lab.loaders", "rag_lab.evaluation")):
            violations.append(f"import {args[0]}")

from rag_lab.llm.base import Message
from rag_lab.llm.simulator import SimulatedBackend

class LeakByImport(SimulatedBackend):
    """Looks the gold answer up through the dataset loader."""
    def respond(self, role, messages):
        from rag_lab.loaders import load_dataset
        gold = {q.text: q.answer for q in load_dataset("world").evalset}
        question = messages[-1].content.split("<<<QUESTION>>>\n", 1)[-1].split("\n<<<END", 1)[0]
        return gold.get(question) or super().respond(role, messages)

class LeakByOpen(SimulatedBackend):
    """Reads the evaluation file directly (no import of any dataset module)."""
    def respond(self, role, messages):
        with Path(payload["questions_file"]).open(encoding="utf-8") as fh:
            gold = {json.loads(line)["text"]: json.loads(line)["answer"] for line in fh}
        question = messages[-1].content.split("<<<QUESTION>>>\n", 1)[-1].split("\n<<<END", 1)[0]
        return gold.get(question) or super().respond(role, messages)

kind = {"honest": SimulatedBackend, "leak_import": LeakByImport, "leak_open": LeakByOpen}[payload["backend"]]
backend = kind(payload["profile"])
SimulatedBackend.respond(backend, "route", [Message(role="user", content="warm up: load the model first")])
backend.similarity.to("warm up", ["load the packaged embedding model"])
backend.tokens.count("load the tokenizer")
sys.addaudithook(hook)
outputs = []
for role, messages in payload["calls"]:
    outputs.append(backend.respond(role, [Message(**m) for m in messages]))
print(json.dumps({"outputs": outputs, "violations": violations[:20]}))
'''


@pytest.fixture(scope="module")
def world_calls():
    """Every role's prompt for a sample of world questions (evidence by BM25 from the question)."""
    from rag_lab.chunking import chunk_corpus
    from rag_lab.index import make_index
    from rag_lab.loaders import load_dataset

    dataset = load_dataset("world")
    chunks = chunk_corpus(dataset.corpus)
    by_id = {c.chunk_id: c for c in chunks}
    index = make_index("bm25")
    index.build(chunks)
    questions = random.Random(5).sample(list(dataset.evalset), 12)
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


def _audit(calls, backend: str, profile: str = "sloppy") -> dict:
    from rag_lab.paths import DATA_DIR

    payload = {"calls": calls, "backend": backend, "profile": profile,
               "forbidden_dirs": [str(DATA_DIR), str(ROOT / "data"), str(ROOT.parent.parent / "shared" / "data"),
                                  "/work/shared/data"],
               "questions_file": str(DATA_DIR / "world" / "questions.jsonl")}
    done = subprocess.run([sys.executable, "-c", HARNESS], input=json.dumps(payload), capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_audited_simulator_opens_no_dataset_and_imports_no_loader(world_calls):
    report = _audit(world_calls, "honest")
    assert report["violations"] == []
    # the audited run did the real work: the same outputs as in this process
    here = SimulatedBackend("sloppy")
    from rag_lab.llm.base import Message

    expected = [here.respond(role, [Message(**m) for m in messages]) for role, messages in world_calls]
    assert report["outputs"] == expected
    assert len(set(report["outputs"])) > len(world_calls) // 3


@pytest.mark.parametrize("leak", ["leak_import", "leak_open"])
def test_the_audit_catches_a_leaking_simulator(world_calls, leak):
    """The test of the test: a subclass that reads the gold answers is caught."""
    report = _audit(world_calls[:7], leak)
    assert report["violations"], "the audit hook missed a simulator that reads gold answers"
    if leak == "leak_import":
        assert any(v.startswith("import rag_lab.loaders") for v in report["violations"])
    assert any(v.startswith("open ") and "questions.jsonl" in v for v in report["violations"])


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


def test_generic_simulator_code_holds_no_world_vocabulary():
    """``grep`` of rag_lab/llm/sim/ (and simulator.py): no name, identifier,
    technology or world-only noun of the synthetic world, and no phrase of its question templates."""
    from rag_lab.world import vocab

    names = {*vocab.FIRST_NAMES, *vocab.LAST_NAMES, *vocab.TEAM_NAMES, *vocab.OFFICES, *vocab.LANGUAGES,
             *vocab.DATASTORES, *vocab.FLAG_BUSINESS}
    names = {n for n in names if len(n) > 2}
    lower = {*vocab.FORMER_NAME_PARTS, *(o.lower() for o in vocab.FLAG_OBJECTS), *WORLD_ONLY_NOUNS,
             *(f"{a}-{b}" for a in vocab.SERVICE_FIRST for b in vocab.SERVICE_SECOND)}
    import re

    from rag_lab.loaders import load_dataset

    question_grams = set()
    for q in load_dataset("world").evalset:
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
