"""Your own data (issue 49, item 1): the walk of docs/your-own-data.md run as written — its files written into a
temporary folder, its commands run — from a folder of documents and a CSV of questions to a report; the documents
layout's errors (file, line, field); every path of a sweep file read relative to the file; files in another encoding
than UTF-8 named with what to do; data info's formats named by the loader registry."""

from __future__ import annotations

import codecs
import json
import re
import shlex
from pathlib import Path

import pytest
from test_loaders import write_beir

from rag_lab.cli import main
from rag_lab.errors import ConfigError, DataFormatError
from rag_lab.experiments.engine.sweep_file import load_sweep_spec
from rag_lab.loaders import LAYOUTS, load_beir, load_dataset, load_documents_folder

DOC = Path(__file__).resolve().parent.parent / "docs" / "your-own-data.md"
#: A fenced block of the page: its language, its title (the file it shows) and its text.
FENCE = re.compile(r'^```(\w+)(?: title="([^"]+)")?\n(.*?)\n```$', re.S | re.M)


def doc_blocks() -> list[tuple[str, str | None, str]]:
    return FENCE.findall(DOC.read_text(encoding="utf-8"))


def write_doc_files(root: Path) -> Path:
    """Every block of the page titled with a file path, written under ``root`` (returned)."""
    files = [(title, text) for _, title, text in doc_blocks() if title]
    assert {t for t, _ in files} >= {"my_data/questions.csv", "sweeps/my_data.yaml"}
    for title, text in files:
        (root / title).parent.mkdir(parents=True, exist_ok=True)
        (root / title).write_text(text + "\n", encoding="utf-8")
    return root


def doc_commands() -> list[str]:
    return [line for lang, _, text in doc_blocks() if lang == "bash"
            for line in text.splitlines() if line.startswith("rag-lab ")]


def doc_block_after(marker: str) -> str:
    """The first untitled block that follows the line holding ``marker``."""
    page = DOC.read_text(encoding="utf-8")
    return next(m.group(3) for m in FENCE.finditer(page, page.index(marker)) if not m.group(2))


def table_cells(text: str) -> dict[tuple[str, str], str]:
    """The sweep table's cells by (candidate, column)."""
    lines = [line.split() for line in text.splitlines()
             if line.startswith("candidate ") or re.match(r"^[0-9a-f]{12} ", line)]
    header = lines[0]
    return {(row[0], column): cell for row in lines[1:] for column, cell in zip(header, row, strict=False)}


#: The table's columns the page's measured table is checked on (the rest may be laid out otherwise as the table
#: evolves; spent_calls depends on the cache, not the policy).
CHECKED_COLUMNS = ("round_cap.max_rounds", "strict", "f1", "refused_model", "abstain_acc", "ctx_has_ans", "rounds",
                   "llm_calls", "tokens")


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    write_doc_files(tmp_path)
    return tmp_path


def test_the_walk_of_the_page_runs_from_a_folder_to_a_report(project: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(project)
    commands = doc_commands()
    assert [c.split()[1] for c in commands] == ["data", "sweep", "report"]
    outputs = []
    for command in commands:
        assert main(shlex.split(command)[1:]) == 0, command
        outputs.append(capsys.readouterr().out)
    info, sweep, _ = outputs
    assert info.strip() == doc_block_after("`data info` reads everything").strip()
    printed, documented = table_cells(sweep), table_cells(doc_block_after("Measured here"))
    assert {c for c, _ in printed} == {c for c, _ in documented} and len({c for c, _ in printed}) == 3
    for key in documented:
        if key[1] in CHECKED_COLUMNS:
            assert printed[key] == documented[key], key
    report = (project / "runs" / "my_data" / "report.html").read_text(encoding="utf-8")
    assert "3 candidates" in report and "5 questions per candidate" in report


def test_the_questions_as_json_lines_load_as_the_csv_ones(project: Path) -> None:
    from_csv = load_dataset(project / "my_data")
    (project / "my_data" / "questions.csv").unlink()
    (project / "my_data" / "questions.jsonl").write_text(doc_block_after("The same questions as JSON Lines") + "\n",
                                                         encoding="utf-8")
    from_jsonl = load_dataset(project / "my_data")
    assert list(from_jsonl.evalset) == list(from_csv.evalset)
    parking = next(q for q in from_csv.evalset if q.qid == "parking")
    assert not parking.answerable and parking.type == "unanswerable" and not parking.gold_doc_ids
    leave = next(q for q in from_csv.evalset if q.qid == "leave")
    assert leave.gold_answers == ("25 days", "25", "twenty-five days")
    assert leave.gold_doc_ids == ("handbook/leave.md",)
    assert from_csv.corpus["handbook/leave.md"].title == "Leave policy"
    assert from_csv.corpus["offices.txt"].title == "offices"


def _replace(old: str, new: str):
    def change(folder: Path) -> None:
        path = folder / "questions.csv"
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return change


BAD_FOLDERS = [
    # (change to the page's folder, the file at fault, line, field, message pattern)
    (_replace("handbook/leave.md", "handbook/leave"), "questions.csv", 2, "gold_doc_ids",
     r"unknown document 'handbook/leave'.*did you mean 'handbook/leave\.md'"),
    (_replace(",false,", ",,"), "questions.csv", 6, "answer", r"give the answer, or mark the question unanswerable"),
    (_replace("have?,,,,false", "have?,12,,,false"), "questions.csv", 6, "answer", r"unanswerable question has no"),
    (_replace("have?,,,,false", "have?,,,teams.txt,false"), "questions.csv", 6, "gold_doc_ids", r"no gold documents"),
    (_replace("answer,aliases", "anwser,aliases"), "questions.csv", 1, "anwser", r"unknown column"),
    (_replace("oslo-lead,", "leave,"), "questions.csv", 4, "id", r"duplicate id 'leave' \(first on line 2\)"),
    (_replace(",false,", ",nope,"), "questions.csv", 6, "answerable", r"must be true or false"),
    (_replace("25 days,", "25, days,"), "questions.csv", 2, None, r"8 cells but the header has 7 columns"),
    (lambda f: (f / "questions.csv").write_text("id;question;answer\nq;Q?;A\n", encoding="utf-8"), "questions.csv",
     1, "question", r"looks separated by semicolons"),
    (lambda f: (f / "documents" / "notes.txt").write_text(" \n", encoding="utf-8"), "documents", None, None,
     r"1 empty document\(s\), which no retriever can find: notes\.txt"),
    (lambda f: (f / "documents" / "report.pdf").write_bytes(b"%PDF-1.4"), "documents", None, None,
     r"not a text or Markdown document: report\.pdf"),
    (lambda f: (f / "questions.jsonl").write_text("{}\n", encoding="utf-8"), ".", None, None,
     r"two questions files: keep one"),
    (lambda f: (f / "questions.csv").unlink(), ".", None, None, r"no questions file"),
    (lambda f: (f / "questions.csv").write_bytes("id,question\n".encode("utf-16")), "questions.csv", None, None,
     r"UTF-16 .*save it as UTF-8"),
    (lambda f: (f / "documents" / "teams.txt").write_bytes("Led by Jos\xe9.".encode("latin-1")),
     "documents/teams.txt", 1, None, r"not valid UTF-8 .*save it as UTF-8"),
]


@pytest.mark.parametrize(("change", "file", "line", "field", "pattern"), BAD_FOLDERS,
                         ids=[str(i) for i in range(len(BAD_FOLDERS))])
def test_a_bad_folder_is_named_by_file_line_and_field(project, change, file, line, field, pattern) -> None:
    folder = project / "my_data"
    change(folder)
    with pytest.raises(DataFormatError, match=pattern) as caught:
        load_documents_folder(folder)
    assert Path(caught.value.path) == (folder / file if file != "." else folder)
    assert (caught.value.line, caught.value.field) == (line, field)


def test_a_byte_order_mark_and_hidden_files_are_accepted(project: Path) -> None:
    folder = project / "my_data"
    csv = folder / "questions.csv"
    csv.write_bytes(codecs.BOM_UTF8 + csv.read_bytes())
    (folder / "documents" / ".DS_Store").write_bytes(b"\x00\x01")
    dataset = load_documents_folder(folder)
    assert len(dataset.corpus) == 4 and next(iter(dataset.evalset)).qid == "leave"


# --------------------------------------------------------------------------- BEIR: empty documents


def test_a_beir_document_with_empty_text_is_named_at_its_line(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "mini")
    rows = (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(rows[1])
    rows[1] = json.dumps({**first, "text": "  "})  # a gold document of the test split
    (folder / "corpus.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"empty: document '{first['_id']}' has no text") as caught:
        load_beir(folder, split="test")
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(folder / "corpus.jsonl"), 2, "text")


# --------------------------------------------------------------------------- every path relative to the sweep file


def test_a_dataset_path_in_a_sweep_file_is_read_relative_to_it(project: Path, monkeypatch) -> None:
    elsewhere = project / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    spec = load_sweep_spec(Path("..") / "sweeps" / "my_data.yaml")
    assert spec.dataset == str(project / "my_data")
    twins = project / "sweeps" / "twins.yaml"
    twins.write_text("name: t\ndataset: ../my_data_twins\n", encoding="utf-8")
    assert load_sweep_spec(twins).dataset == str(project / "my_data_twins")


def test_a_shipped_name_stays_a_name_and_a_path_of_the_old_rule_is_explained(project: Path, monkeypatch) -> None:
    monkeypatch.chdir(project)
    named = project / "sweeps" / "named.yaml"
    named.write_text("name: n\ndataset: hotpotqa_sample_twins\n", encoding="utf-8")
    assert load_sweep_spec(named).dataset == "hotpotqa_sample_twins"
    old = project / "sweeps" / "old.yaml"
    old.write_text("name: o\ndataset: my_data\n", encoding="utf-8")  # relative to the current directory
    with pytest.raises(ConfigError, match=r"old\.yaml: dataset 'my_data': .* only found relative to the current "
                                          r"directory: write '\.\./my_data'"):
        load_sweep_spec(old)


def test_every_shipped_sweep_file_still_names_its_dataset() -> None:
    """The shipped sweep files name their datasets, which stay names (read as the spec reads them, before the
    spec's validation, which test_sweeps checks)."""
    from rag_lab.experiments.engine.sweep_file import _file_data
    from rag_lab.paths import SWEEPS_DIR
    for path in sorted(SWEEPS_DIR.glob("*.yaml")):
        assert _file_data(path)["dataset"] in {"world", "hotpotqa_sample", "musique_sample",
                                                 "hotpotqa_sample_twins", "musique_sample_twins"}, path


# --------------------------------------------------------------------------- encodings of sweep files


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_sweep_file_with_a_byte_order_mark_is_read(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"bom{suffix}"
    path.write_bytes(codecs.BOM_UTF8 + json.dumps({"name": "bom", "dataset": "world"}).encode())
    assert load_sweep_spec(path).name == "bom"


@pytest.mark.parametrize(("suffix", "encoding", "pattern"), [
    (".yaml", "utf-16", r"the file is UTF-16"),
    (".json", "utf-16", r"the file is UTF-16"),
    (".yaml", "utf-16-le", r"NUL bytes"),   # no byte-order mark
    (".json", "latin-1", r"not valid UTF-8 \(byte 0xe9"),
])
def test_a_sweep_file_not_in_utf8_is_named_with_what_to_do(tmp_path, capsys, suffix, encoding, pattern) -> None:
    path = tmp_path / f"sweep{suffix}"
    path.write_bytes(json.dumps({"name": "caf\xe9", "dataset": "world"}, ensure_ascii=False).encode(encoding))
    assert main(["sweep", str(path), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and re.search(pattern, err) and "save it as UTF-8" in err, err
    assert not (tmp_path / "run").exists()


# --------------------------------------------------------------------------- data info names the layout


@pytest.mark.parametrize(("dataset", "formats"), [
    ("world", "world 400"), ("scifact_sample", "beir 40"), ("hotpotqa_sample_twins", "hotpotqa/original 200"),
])
def test_data_info_names_the_layout_of_the_loader_registry(dataset: str, formats: str, capsys) -> None:
    assert main(["data", "info", "--dataset", dataset]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if "formats:" in line)
    assert line.strip() == f"formats: {formats}"
    assert formats.split()[0].split("/")[0] in LAYOUTS
