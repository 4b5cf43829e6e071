"""The strict answer metric: a parrot cannot beat it. An echoed prompt, a copied evidence block and
a long ramble all contain the gold answer (lenient containment 1) and score 0 strictly; a short
correct answer scores 1 on both."""

from __future__ import annotations

import pytest

from rag_lab.evaluation.answers import STRICT_MAX_TOKENS, contains, contains_strict, f1
from rag_lab.llm.prompts import EvidenceItem, answer_prompt
from rag_lab.text_overlap import answer_tokens, covered_share, longest_run, tokens, without_runs

QUESTION = "In which city was Ada Lovelace born?"
GOLD = ["London"]
EVIDENCE = [
    EvidenceItem(1, "Ada Lovelace", "Augusta Ada King, Countess of Lovelace, was an English mathematician and writer. "
                 "She was born in London on 10 December 1815, the only legitimate child of the poet Lord Byron."),
    EvidenceItem(2, "Analytical Engine", "The Analytical Engine was a proposed digital mechanical general-purpose "
                 "computer designed by the English mathematician and computer pioneer Charles Babbage."),
    EvidenceItem(3, "Charles Babbage", "Charles Babbage was an English polymath, born in London, who originated the "
                 "concept of a digital programmable computer and worked with Lovelace on the engine."),
]
SYSTEM, USER = (m.content for m in answer_prompt(QUESTION, EVIDENCE, "correct"))


def _ramble(n_tokens: int) -> str:
    filler = ("Mathematics in the nineteenth century was shaped by many people and many places, and one could "
              "discuss at length the societies, the salons and the correspondence of the period. ").split()
    words = [filler[i % len(filler)] for i in range(n_tokens - 8)]
    return " ".join(words[:40] + ["Ada", "Lovelace", "was", "born", "in", "London", "[1]."] + words[40:])


PARROTS = {
    "echoed prompt": f"{SYSTEM}\n{USER}",
    "echoed system prompt and question": f"{SYSTEM} {QUESTION} London",
    "copied evidence block": "\n".join(f"[{e.n}] ({e.title}) {e.text}" for e in EVIDENCE),
    "500-token ramble": _ramble(500),
}


@pytest.mark.parametrize("name", list(PARROTS))
def test_parrots_contain_the_gold_but_score_zero_strictly(name: str) -> None:
    text = PARROTS[name]
    assert contains(text, GOLD), "the parrot must contain the gold answer, or the test shows nothing"
    assert not contains_strict(text, GOLD, QUESTION)
    assert f1(text, GOLD) < 0.1


@pytest.mark.parametrize("answer", ["London [1]", "London.", "Ada Lovelace was born in London [1].",
                                    "She was born in London on 10 December 1815 [1]."])
def test_short_correct_answers_score_one(answer: str) -> None:
    assert contains(answer, GOLD) and contains_strict(answer, GOLD, QUESTION)


def test_short_wrong_answer_and_empty_answer_score_zero() -> None:
    assert not contains_strict("Paris [1]", GOLD, QUESTION)
    assert not contains_strict("", GOLD, QUESTION) and not contains_strict("[1]", GOLD, QUESTION)


def test_length_limit_is_inclusive_and_counts_normalized_tokens_without_citations() -> None:
    filler = " ".join(f"w{i}" for i in range(STRICT_MAX_TOKENS - 1))
    at_limit = f"London {filler} [1] [2] [3] the a an"  # citations, articles and punctuation are not tokens
    assert len(answer_tokens(at_limit)) == STRICT_MAX_TOKENS
    assert contains_strict(at_limit, GOLD, QUESTION)
    assert not contains_strict(f"{at_limit} one", GOLD, QUESTION)


def test_an_option_copied_from_the_question_is_not_the_answers_own_word() -> None:
    question = "Which is older, the Eiffel Tower or Big Ben?"
    gold = ["Big Ben"]
    assert contains(question, gold) and not contains_strict(question, gold, question)
    assert not contains_strict("Eiffel Tower or Big Ben", gold, question)
    assert contains_strict("Big Ben [1]", gold, question)
    assert contains_strict("Big Ben is older than the Eiffel Tower [1] [2].", gold, question)
    assert contains_strict("Which is older, the Eiffel Tower or Big Ben? Big Ben.", gold, question)
    assert contains_strict("Big Ben or the Eiffel Tower", gold, question=""), "without a question nothing is removed"


def test_a_long_gold_name_the_question_offers_still_counts_in_a_correct_answer() -> None:
    # found on hotpotqa_sample: a correct comparison answer lost its credit when the gold name had 3+ words
    question = "Who was born first, Marcus Tullius Cicero or Julius Caesar?"
    gold = ["Marcus Tullius Cicero"]
    assert contains_strict("Marcus Tullius Cicero was born first [1].", gold, question)
    assert contains_strict("Marcus Tullius Cicero [1]", gold, question)
    assert not contains_strict(question, gold, question), "an echo of the question still earns nothing"
    assert not contains_strict("Julius Caesar was born first [1].", gold, question)


def test_overlap_measures_by_hand() -> None:
    a, b = tokens("the cat sat on the mat today"), tokens("a dog sat on the mat yesterday")
    assert a == ["cat", "sat", "on", "mat", "today"] and longest_run(a, b) == 3
    assert covered_share(a, b, 3) == pytest.approx(3 / 5) and covered_share(a, b, 4) == 0.0
    assert without_runs(a, b, 3) == ["cat", None, None, None, "today"]
    assert longest_run([], b) == 0 and covered_share([], b, 2) == 0.0
    with pytest.raises(ValueError):
        covered_share(a, b, 0)


@pytest.mark.parametrize(("answer", "gold", "found"), [
    ("born in New York City", ["new york"], True), ("born in Newark", ["new york", "York"], False),
    ("The Beatles.", ["beatles"], True), ("the band (a quartet)", ["a"], False), ("1,000 people", ["1000"], True),
    ("Paris", [""], False), ("", ["Paris"], False)])
def test_lenient_and_strict_containment_find_a_gold_answer_by_one_rule(answer: str, gold: list[str], found: bool) -> None:
    """One rule for "a gold answer occurs in the answer": a whole-token sequence of normalized tokens. Without a
    question to copy from, a short answer is contained strictly exactly when it is contained leniently."""
    assert contains(answer, gold) is found
    assert contains_strict(answer, gold) is found
