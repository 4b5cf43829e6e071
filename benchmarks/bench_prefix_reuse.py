#!/usr/bin/env python
"""How much of a recorded question's prompt evaluation a prefix-sharing prompt layout could save, measured on the
cassettes themselves (no model run; seconds).

llama.cpp's server keeps the KV of the previous request and evaluates only what follows the longest prefix the
next request shares with it. Within one question the lab's calls run in order (controller round 1, round 2, …,
then the answer; a second candidate's answer over the same context runs later, after other questions), so the
reusable part of a call is its common prefix with the call just before it *of the same question*. For every
question of each cassette this script counts, in characters of the chat messages (a stand-in for tokens, which
are ~4 characters here), the prompt the calls send and the part of it each call shares with the previous call of
the same question, in recording order — what the current layout already reuses — and the same if the budget
sentence ("1 has been run"), the only words of the controller's system message that change from round to round,
were moved to the end of the user message (what a v4 layout would reuse).

    source scripts/env.sh
    python benchmarks/bench_prefix_reuse.py [--out benchmarks/results/bench_prefix_reuse.json]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

from rag_lab.llm.cassette import Cassette
from rag_lab.paths import DATA_DIR

_BUDGET = re.compile(r"(You may run at most \d+ rounds of searches in total|Use as few rounds of searches as "
                     r"possible); \d+ (?:has|have) been run\. ")


def _text(messages, budget_last: bool) -> str:
    system, user = messages[0].content, messages[-1].content
    if budget_last:
        found = _BUDGET.search(system)
        if found:
            system, user = system.replace(found.group(0), ""), f"{user}\n{found.group(0)}"
    return f"{system}\n{user}"


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def measure(path: Path) -> dict[str, float]:
    cassette = Cassette.for_replay(path)
    by_question: dict[str, list] = defaultdict(list)
    for entry in cassette.entries.values():      # in recording order
        by_question[entry.question].append(entry)
    out = {"calls": len(cassette), "questions": len(by_question)}
    for layout, budget_last in (("current", False), ("budget_last", True)):
        total = shared = 0
        for entries in by_question.values():
            previous = ""
            for entry in entries:
                text = _text(entry.messages, budget_last)
                total += len(text)
                shared += _common(previous, text)
                previous = text
        out[f"{layout}_shared_share"] = round(shared / total, 4) if total else 0.0
    out["prompt_chars"] = total
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    results = {p.name: measure(p) for p in sorted((DATA_DIR / "recorded").glob("*.jsonl"))}
    for name, r in results.items():
        print(f"{name}: {r['calls']} calls, {r['questions']} questions; prompt shared with the previous call of the "
              f"question: {r['current_shared_share']:.1%} now, {r['budget_last_shared_share']:.1%} with the budget "
              "sentence last")
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
