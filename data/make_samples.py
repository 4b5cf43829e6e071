"""Rebuild the real-data samples shipped in data/ from the full files in ../shared/data/ (this
machine only; a fresh clone has the samples already and does not need this script).

    python data/make_samples.py --shared ../shared/data

* hotpotqa_sample/  200 questions drawn (seed 13) from HotpotQA ``tune.json`` only, original layout;
  ``check.json`` is the held-out report set and never ships.
* musique_sample/   100 questions drawn (seed 13) from the MuSiQue slice, original JSON Lines layout.
* scifact_sample/   BEIR SciFact cut down: 40 test queries (seed 13), their judged documents plus
  260 other documents (seed 13); qrels keep the published header line and CRLF line endings.

Records are copied byte for byte in their published field layout (JSON re-serialised compactly).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 13


def _hotpotqa(shared: Path) -> None:
    examples = json.loads((shared / "hotpotqa" / "tune.json").read_text(encoding="utf-8"))
    picked = sorted(random.Random(SEED).sample(range(len(examples)), 200))
    out = HERE / "hotpotqa_sample" / "hotpotqa_dev_distractor_sample.json"
    out.write_text(json.dumps([examples[i] for i in picked], ensure_ascii=False) + "\n", encoding="utf-8")


def _musique(shared: Path) -> None:
    lines = (shared / "musique" / "slice.jsonl").read_text(encoding="utf-8").splitlines()
    picked = sorted(random.Random(SEED).sample(range(len(lines)), 100))
    out = HERE / "musique_sample" / "musique_ans_dev_sample.jsonl"
    out.write_text("".join(json.dumps(json.loads(lines[i]), ensure_ascii=False) + "\n" for i in picked), encoding="utf-8")


def _scifact(shared: Path) -> None:
    src, dst = shared / "scifact", HERE / "scifact_sample"
    raw = (src / "qrels" / "test.tsv").read_bytes().split(b"\r\n")
    header, rows = raw[0], [r for r in raw[1:] if r]
    qids = sorted({r.split(b"\t")[0] for r in rows}, key=int)
    keep_q = set(random.Random(SEED).sample(qids, 40))
    kept_rows = [r for r in rows if r.split(b"\t")[0] in keep_q]
    gold = {r.split(b"\t")[1].decode() for r in kept_rows}
    corpus = (src / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    others = [i for i, line in enumerate(corpus) if json.loads(line)["_id"] not in gold]
    extra = set(random.Random(SEED).sample(others, 260))
    docs = [line for i, line in enumerate(corpus) if i in extra or json.loads(line)["_id"] in gold]
    queries = [line for line in (src / "queries.jsonl").read_text(encoding="utf-8").splitlines()
               if json.loads(line)["_id"].encode() in keep_q]
    (dst / "qrels").mkdir(parents=True, exist_ok=True)
    (dst / "corpus.jsonl").write_text("\n".join(docs) + "\n", encoding="utf-8")
    (dst / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    (dst / "qrels" / "test.tsv").write_bytes(b"\r\n".join([header, *kept_rows]) + b"\r\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, required=True, help="the folder holding hotpotqa/, musique/, scifact/")
    shared = parser.parse_args().shared
    for make in (_hotpotqa, _musique, _scifact):
        make(shared)
        print(f"{make.__name__[1:]}: done")


if __name__ == "__main__":
    main()
