"""The contract every dataset loader keeps (:func:`rag_lab.testing.check_loader`), run over the package's
loaders on their fixtures and shipped samples, and a toy loader of a made-up format with broken variants that
the check refuses, each naming the rule it breaks."""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path

import pytest
from test_loaders import write_beir
from test_your_own_data import write_doc_files

from rag_lab.errors import DataFormatError
from rag_lab.loaders import (
    load_beir,
    load_dataset,
    load_documents_folder,
    load_hotpotqa,
    load_musique,
    load_qa_file,
    load_world,
)
from rag_lab.paths import DATA_DIR
from rag_lab.records import Corpus, Dataset, Document, EvalSet, Question
from rag_lab.testing import ContractViolation, check_loader

FIXTURES = Path(__file__).parent / "fixtures"

LOADERS = {
    # name: (loader, input: a path, or a function tmp_path -> path)
    "beir": (lambda p: load_beir(p, split="test"), lambda tmp: write_beir(tmp / "mini")),
    "hotpotqa": (load_hotpotqa, FIXTURES / "hotpotqa_distractor.json"),
    "hotpotqa-fullwiki": (load_hotpotqa, FIXTURES / "hotpotqa_fullwiki_partial.json"),
    "2wikimultihopqa": (load_hotpotqa, FIXTURES / "2wikimultihopqa_dev.json"),
    "musique": (load_musique, FIXTURES / "musique_ans.jsonl"),
    "qa-file": (load_qa_file, FIXTURES / "hotpotqa_hf_noid.jsonl"),
    "world": (load_world, DATA_DIR / "world"),
    "documents": (load_documents_folder, lambda tmp: write_doc_files(tmp) / "my_data"),
    "dataset-folder": (load_dataset, DATA_DIR / "hotpotqa_sample"),
}


@pytest.mark.parametrize("name", list(LOADERS))
def test_every_loader_keeps_the_contract(name: str, tmp_path: Path) -> None:
    load, source = LOADERS[name]
    path = source(tmp_path / "in") if callable(source) else source
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the notes of id-less or conflicting examples
        check_loader(load, path, tmp_dir=tmp_path / "check")


# --------------------------------------------------------------------------- a toy format and broken loaders


def write_toy(path: Path) -> Path:
    """A made-up format: ``{"docs": {id: text}, "questions": [[qid, text, answer, gold id], ...]}``."""
    path.write_text(json.dumps({
        "docs": {"a": "Alpha is a town.", "b": "Beta is a river.", "c": "Gamma is a hill."},
        "questions": [["q1", "What is Alpha?", "a town", "a"], ["q2", "What is Beta?", "a river", "b"]],
    }), encoding="utf-8")
    return path


def load_toy(path: Path) -> Dataset:
    """The toy format's loader, keeping the contract: every failure is a DataFormatError naming the file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return naive_toy(data, path)
    except FileNotFoundError:
        raise DataFormatError(path, "file not found") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise DataFormatError(path, f"not a toy dataset: {exc}") from None


def naive_toy(data, path: Path) -> Dataset:
    docs = [Document(doc_id=d, title=d, text=t) for d, t in data["docs"].items()]
    questions = [Question(qid=q, text=t, answer=a, gold_doc_ids=(g,)) for q, t, a, g in data["questions"]]
    return Dataset(Corpus(docs), EvalSet(questions), name=Path(path).stem)


def raises_raw_errors(path: Path) -> Dataset:
    """Lets json's and KeyError's messages out, which name neither the file nor the field."""
    if not Path(path).is_file():
        raise DataFormatError(path, "file not found")
    return naive_toy(json.loads(Path(path).read_text(encoding="utf-8")), path)


def missing_is_not_a_data_error(path: Path) -> Dataset:
    if not Path(path).exists():
        raise FileNotFoundError(path)
    return load_toy(path)


_LOADS = itertools.count()


def shuffles(path: Path) -> Dataset:
    """Each load returns the documents in another order (rotated by the number of loads so far: two random
    shuffles of a small corpus may agree, and then the check rightly passes — the test was flaky so)."""
    dataset = load_toy(path)
    docs = list(dataset.corpus)
    turn = next(_LOADS) % len(docs)
    return Dataset(Corpus(docs[turn:] + docs[:turn]), dataset.evalset, name=dataset.name)


def keeps_no_questions(path: Path) -> Dataset:
    dataset = load_toy(path)
    return Dataset(dataset.corpus, EvalSet([]), name=dataset.name)


def test_a_toy_loader_keeps_the_contract(tmp_path: Path) -> None:
    dataset = check_loader(load_toy, write_toy(tmp_path / "toy.json"), tmp_dir=tmp_path / "check")
    assert len(dataset.corpus) == 3 and len(dataset.evalset) == 2


@pytest.mark.parametrize(("broken", "rule"), [
    (raises_raw_errors, "a malformed input names its path"),
    (missing_is_not_a_data_error, "a missing input names its path"),
    (shuffles, "the same every time"),
    (keeps_no_questions, "documents and questions"),
], ids=lambda x: x if isinstance(x, str) else x.__name__)
def test_check_loader_refuses_a_broken_loader_naming_the_rule(broken, rule: str, tmp_path: Path) -> None:
    with pytest.raises(ContractViolation, match=f"^loader contract, rule '{rule}': '{broken.__name__}'") as caught:
        check_loader(broken, write_toy(tmp_path / "toy.json"), tmp_dir=tmp_path / "check")
    assert caught.value.rule == rule


def test_check_loader_runs_the_malformed_inputs_it_is_given(tmp_path: Path) -> None:
    """A loader that accepts a question whose gold document is not in the corpus breaks the rule."""
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"docs": {"a": "Alpha"}, "questions": [["q", "Q?", "x", "zzz"]]}), encoding="utf-8")

    def lenient(path: Path) -> Dataset:
        data = json.loads(Path(path).read_text(encoding="utf-8")) if Path(path).name == "bad.json" else None
        if data is not None:
            docs = [Document(doc_id=d, text=t) for d, t in data["docs"].items()]
            questions = [Question(qid=q, text=t, answer=a, gold_doc_ids=(g,)) for q, t, a, g in data["questions"]]
            return Dataset(Corpus(docs), EvalSet(questions), name="bad", allow_missing_gold=True)
        return load_toy(path)

    check_loader(load_toy, write_toy(tmp_path / "toy.json"), malformed=[bad], tmp_dir=tmp_path / "check")
    with pytest.raises(ContractViolation, match="rule 'a malformed input names its path'.*bad.json.*raised nothing"):
        check_loader(lenient, write_toy(tmp_path / "toy.json"), malformed=[bad], tmp_dir=tmp_path / "check2")
