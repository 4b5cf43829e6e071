"""Plain-text helpers of the simulator: words, a light stemmer, English function words, sentences, years, numbers
and percentages. General English; nothing here is specific to a corpus."""

from __future__ import annotations

import re
from functools import lru_cache

#: Function words, question words and auxiliaries: never content, never an attribute.
STOPWORDS = frozenset((
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "nor", "but", "is", "are", "was", "were", "be",
    "been", "being", "by", "with", "at", "from", "as", "what", "which", "who", "whom", "whose", "when", "where",
    "why", "how", "does", "do", "did", "done", "can", "could", "should", "would", "will", "shall", "may", "might",
    "must", "it", "its", "it's", "this", "that", "these", "those", "there", "their", "them", "they", "we", "our",
    "ours", "us", "you", "your", "yours", "i", "me", "my", "mine", "he", "him", "his", "she", "her", "hers", "has",
    "have", "had", "having", "not", "no", "yes", "than", "then", "so", "if", "about", "into", "onto", "over", "under",
    "again", "any", "all", "both", "each", "more", "most", "other", "some", "such", "only", "own", "same", "too",
    "very", "just", "also", "out", "up", "down", "off", "per", "via", "s", "t", "one", "ones", "whether", "either",
    "neither", "let", "lets", "get", "got", "make", "made", "tell", "give", "show", "find", "name", "list",
    "describe", "explain", "say", "said", "know", "please", "currently", "many", "much", "go", "goes", "went", "gone"))

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'_\-./%]*[A-Za-z0-9%]|[A-Za-z0-9]")
#: A sentence ends after . ! ? — but not after an initial ("C. S. Lewis") or a common title or
#: abbreviation of English ("Dr.", "St.", "Jr.", "vs.").
_NOT_AN_END = r"(?<!\b[A-Z]\.)(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bvs\.)(?<!\bNo\.)"
_SENTENCE_END = re.compile(
    _NOT_AN_END + r"(?<=[.!?])\s+(?=[^\sa-z]|[a-z][a-z0-9]*[-_][a-z0-9])|(?<=[.!?][\"'”’)])\s+(?=[^\sa-z])"
)
_CITATION = re.compile(r"\s*\[\d+\]")

_ISO_DATE = re.compile(r"\b((?:19|20)\d\d)-(0[1-9]|1[0-2])-([0-2]\d|3[01])\b")
_YEAR = re.compile(r"(?<![\d.\-])((?:1[5-9]|20)\d\d)(?!\d)(?![.\-]\d)")
_NUMBER = re.compile(r"(?<![\w.\-@#])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w.\-]*[A-Za-z_])")


def words(text: str) -> list[str]:
    """Lower-cased word tokens; identifiers such as ``well-known``, ``AB-12`` or ``3.1.0`` stay whole."""
    return [w.lower().removesuffix("'s").removesuffix("’s") for w in _WORD.findall(text)]


#: Irregular past forms of common English verbs, to their base form (``led`` is ``lead``).
_IRREGULAR = {
    "led": "lead", "held": "hold", "won": "win", "wrote": "write", "written": "write", "began": "begin",
    "begun": "begin", "became": "become", "made": "make", "known": "know", "knew": "know", "grew": "grow",
    "grown": "grow", "sold": "sell", "taught": "teach", "brought": "bring", "built": "build", "sang": "sing",
    "sung": "sing", "ran": "run", "gave": "give", "given": "give", "took": "take", "taken": "take", "met": "meet",
    "fought": "fight", "drew": "draw", "drawn": "draw", "chose": "choose", "chosen": "choose", "spoke": "speak",
    "spoken": "speak", "kept": "keep", "found": "find", "told": "tell", "sat": "sit", "sent": "send",
    "spent": "spend", "shot": "shoot", "stood": "stand", "struck": "strike", "thought": "think", "bought": "buy",
    "caught": "catch", "paid": "pay", "lost": "lose", "fell": "fall", "fallen": "fall", "rose": "rise",
    "risen": "rise", "shown": "show", "flew": "fly", "flown": "fly", "went": "go", "gone": "go",
}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix-stripping stemmer (``listens``/``listened``/``listening`` → ``listen``;
    ``cities``/``city`` → ``city``; ``houses``/``house`` → ``hous``; ``sits`` → ``sit`` but ``site`` stays ``site``)."""
    w = word.lower()
    w = _IRREGULAR.get(w, w)
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith("es") and w[:-2].endswith(("s", "x", "z", "ch", "sh")) and len(w) > 4:
        w = w[:-2]
    elif w.endswith(("ing", "ed")) and len(w) - (3 if w.endswith("ing") else 2) >= 3:
        w = w[:-3] if w.endswith("ing") else w[:-2]
        if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
            w = w[:-1]
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        w = w[:-1]
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


#: Stems that name one relation in different words: a marriage is "married", "his wife", "her husband",
#: "spouse"; a birth "born" or "birth"; a death "died" or "death". A sentence that says the relation in one
#: of them says what a question asks in another.
_SAME_RELATION = (("marri", "marriag", "wife", "husband", "spous", "wed", "widow"), ("born", "birth"),
                  ("died", "die", "death"))
EQUIVALENT: dict[str, frozenset[str]] = {s: frozenset(group) for group in _SAME_RELATION for s in group}


def with_equivalents(stems: frozenset[str] | set[str]) -> frozenset[str]:
    """``stems`` with every stem that names the same relation (:data:`EQUIVALENT`)."""
    return frozenset(stems).union(*(EQUIVALENT.get(s, ()) for s in stems))


def parts(word: str) -> list[str]:
    """A hyphenated or snake-case identifier's parts (``north-west`` → north, west)."""
    return [p for p in re.split(r"[-_./]", word.lower()) if p]


def content_words(text: str) -> list[str]:
    """Words of ``text`` that carry meaning (no stop words, no bare punctuation), in order."""
    return [w for w in words(text) if w not in STOPWORDS and not w.isdigit() or _YEAR.fullmatch(w)]


@lru_cache(maxsize=65536)
def content_stems(text: str) -> frozenset[str]:
    """Stems of the content words of ``text``, with identifiers also split into their parts (read once a text)."""
    out: set[str] = set()
    for w in content_words(text):
        out.add(stem(w))
        for p in parts(w):
            if p not in STOPWORDS and len(p) > 1:
                out.add(stem(p))
    return frozenset(out)


def sentences(text: str) -> list[str]:
    """Sentences of ``text``: a split after . ! ? followed by a non-lower-case start or by an
    identifier (``x-ray shows …``)."""
    out = [s.strip() for s in _SENTENCE_END.split(text.strip()) if s and s.strip()]
    return out or ([text.strip()] if text.strip() else [])


def strip_citations(text: str) -> str:
    """``text`` without ``[n]`` markers."""
    return _CITATION.sub("", text)


def years(text: str) -> list[int]:
    """Four-digit years (1500–2099) in ``text``, ISO dates included, in order of appearance."""
    return [int(y) for y in _YEAR.findall(text)]


def numbers(text: str) -> list[tuple[float, int]]:
    """Stand-alone numbers in ``text`` as ``(value, character offset)``; parts of identifiers,
    versions and dates are not numbers."""
    masked = _ISO_DATE.sub(lambda m: " " * len(m.group(0)), text)
    out = []
    for m in _NUMBER.finditer(masked):
        raw = m.group(1).replace(",", "")
        try:
            out.append((float(raw), m.start()))
        except ValueError:
            continue
    return out


def normalise(text: str) -> str:
    """Lower case, single spaces, no surrounding punctuation: for comparing queries."""
    return " ".join(re.sub(r"[^\w\s@#%.\-]", " ", text.lower()).split()).strip(" .")
