"""The world adapter's word lists and page markers, on top of the generic helpers of
:mod:`rag_lab.llm.sim.text`: light verbs, vague words, generic nouns of the synthetic company's
wiki, the "archived page" markers and the prompt-injection detector written for it.
"""

from __future__ import annotations

import re

from rag_lab.llm.sim.text import (  # noqa: F401 - re-exported for the adapter's modules
    STOPWORDS,
    content_stems,
    content_words,
    dates,
    normalise,
    numbers,
    parts,
    percents,
    sentences,
    stem,
    strip_citations,
    words,
    years,
)

#: Verbs that carry no attribute of their own ("why did it happen", "which datastore does X use").
LIGHT_VERBS = frozenset("happen happens happened occur occurs occurred use uses used get gets got take takes took "
                        "make makes made do does did be run runs ran see saw seen".split())

#: Words that make a question vague when they stand in for a name ("the index stuff").
VAGUE_WORDS = frozenset("stuff thing things something someone somebody whatever whoever folks guys again "
                        "thingy whatsit somewhere".split())

#: Generic nouns that name a kind of thing rather than the thing itself.
GENERIC_NOUNS = frozenset(
    """service services system systems team teams thing app application tool product company person
    people project page doc document feature component module part group one way""".split()
)

#: Words saying the question is about the present state (prefer current, dated-later pages).
CURRENT_WORDS = ("now", "today", "current", "currently", "these days", "right now", "at the moment",
                 "at present", "presently", "latest", "still", "nowadays", "as of today")
_CURRENT = re.compile(r"\b(" + "|".join(re.escape(w) for w in CURRENT_WORDS) + r")\b", re.IGNORECASE)

#: Markers of a superseded page, in general wiki/document English.
_ARCHIVED = re.compile(
    r"\b(archived|outdated|deprecated|superseded|obsolete|no longer (?:valid|maintained|accurate|current)|"
    r"historical (?:page|copy|snapshot)|legacy page|out of date)\b",
    re.IGNORECASE,
)

#: Prompt-injection phrasing: text in a document that addresses the model instead of informing
#: the reader. General patterns, not tied to any corpus.
_INSTRUCTION = re.compile(
    r"(\b(ignore|disregard|forget|override|overrule)\b[^.]{0,40}\b(instructions?|context|above|previous|prior|"
    r"rules|prompt|everything)\b|\bsystem (override|prompt|message|instruction)\b|\b(reply|respond|answer|say|"
    r"state|output) (only )?(with|that)\b|\byou (must|should|are to) (now )?(reply|answer|respond|say|ignore)\b|"
    r"\bas an ai\b|\bnew instructions?\b)",
    re.IGNORECASE,
)


def is_instruction(sentence: str) -> bool:
    """Whether a sentence in a document reads as an instruction aimed at the model (injection)."""
    return bool(_INSTRUCTION.search(sentence))


def is_archived(text: str) -> bool:
    """Whether a page says of itself that it is archived, outdated or superseded."""
    return bool(_ARCHIVED.search(text))


def asks_current(question: str) -> bool:
    """Whether the question asks about the present state (now, today, current…)."""
    return bool(_CURRENT.search(question))
