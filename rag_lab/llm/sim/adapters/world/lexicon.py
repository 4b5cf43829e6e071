"""The simulator's vocabulary: general English / IT synonym groups, not corpus knowledge.

Two tables, both written by hand from everyday usage (the kind of paraphrase any reader of an
engineering wiki or an encyclopedia knows), and nothing else:

* :data:`CONCEPTS` — groups of words that ask for or state the same *kind* of fact
  ("port" / "listens" / "binds"; "lead" / "led" / "manager" / "boss"). A question word and an
  evidence word match when they share a group; this is how the simulator decides that a passage
  talks about the attribute a question asks for.
* :data:`PHRASES` — surface rewrites used to paraphrase a question (rewrite, HyDE, a spinning
  controller): a phrase and a few alternatives that keep its meaning.

There are no names, identifiers, numbers or facts here, only vocabulary.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rag_lab.llm.sim.adapters.world.text import stem

CONCEPTS: dict[str, tuple[str, ...]] = {
    "port": ("port", "ports", "listen", "listens", "bind", "binds", "tcp", "udp", "socket", "endpoint"),
    "storage": ("datastore", "database", "db", "store", "stores", "storage", "state", "persist", "kept", "keep",
                "keeps", "data"),
    "language": ("language", "written", "write", "implemented", "implementation", "programming", "coded"),
    "launch": ("launch", "launched", "live", "started", "start", "began", "begin", "debut", "debuted", "introduced",
               "founded", "established", "inception", "opened", "created"),
    "own": ("own", "owns", "owned", "owner", "owners", "ownership", "maintain", "maintained", "maintains",
            "maintainer", "responsible", "operate", "operated"),
    "team": ("team", "teams", "group", "squad", "folks", "department", "unit", "crew"),
    "lead": ("lead", "leads", "led", "leader", "leadership", "manager", "manage", "managed", "manages", "head",
             "heads", "boss", "charge", "chief", "director", "supervisor", "captain"),
    "role": ("role", "job", "position", "title", "work", "works", "occupation", "profession", "engineer", "manager",
             "designer", "analyst", "developer", "scientist", "architect", "administrator", "specialist"),
    "replica": ("replica", "replicas", "instance", "instances", "box", "boxes", "node", "nodes", "server",
                "servers", "pod", "pods", "copies", "deployed", "capacity"),
    "channel": ("channel", "chat", "slack", "room", "talk", "reach", "contact", "escalation", "escalations", "page",
                "pages", "paged", "pager", "oncall", "on-call", "alert", "alerts", "rotation"),
    "location": ("office", "based", "sit", "sits", "located", "location", "city", "headquarters",
                 "headquartered", "country", "town", "where"),
    "handle": ("handle", "username", "nickname", "alias", "nick"),
    "cause": ("cause", "caused", "causes", "root", "reason", "why", "because", "due", "trigger", "triggered"),
    "fix": ("fix", "fixed", "fixes", "resolve", "resolved", "mitigate", "mitigated", "remedy", "repair", "restore",
            "restored", "patch", "patching", "patched", "workaround", "solve", "solved", "recovered"),
    "slow": ("slow", "sluggish", "latency", "lag", "delay", "delays", "timeout", "timeouts", "degraded", "degrade",
             "performance", "hang", "hung"),
    "session": ("logout", "logged", "session", "sessions", "authentication", "login", "sign", "signed", "auth",
                "token", "tokens", "credential", "credentials", "oauth"),
    "failure": ("error", "errors", "fail", "failed", "failure", "failures", "broken", "crash", "crashed", "outage",
                "down", "incident", "rejected", "reject"),
    "rollout": ("rollout", "rolled", "percentage", "percent", "share", "traffic", "fraction", "portion", "requests",
                "enabled"),
    "flag": ("flag", "flags", "switch", "toggle", "feature"),
    "evaluate": ("read", "reads", "evaluate", "evaluates", "evaluated", "check", "checks", "consume", "uses",
                 "defined", "config"),
    "release": ("release", "released", "ship", "shipped", "ships", "version", "deliver", "delivered"),
    "birth": ("born", "birth", "birthplace", "birthday"),
    "death": ("died", "death", "dead", "die"),
    "direct": ("direct", "directed", "director", "directing", "filmmaker"),
    "nationality": ("nationality", "citizen", "citizenship", "national", "nation"),
    "population": ("population", "inhabitants", "residents", "populous"),
    "spouse": ("spouse", "wife", "husband", "married", "marry", "partner"),
    "size": ("size", "large", "larger", "largest", "big", "bigger", "biggest", "small", "smaller", "area"),
    "age": ("age", "old", "older", "oldest", "young", "younger", "youngest"),
    "upload": ("upload", "uploads", "file", "files", "attachment", "attachments", "multipart"),
    "image": ("image", "images", "picture", "pictures", "photo", "photos", "thumbnail", "thumbnails"),
    "payment": ("payment", "payments", "pay", "paid", "checkout", "billing", "invoice", "payout",
                "refund"),
    "notify": ("notification", "notifications", "notify", "email", "emails", "message", "messages", "push"),
    "organisation": ("company", "companies", "firm", "corporation", "group", "inc", "ltd", "llc", "holdings",
                     "enterprises", "organization", "organisation", "conglomerate", "chain"),
    "search": ("search", "searching", "index", "indexing", "query", "lookup", "find"),
}

#: Groups that say what a text is *about* (a topic) rather than which attribute it states; a
#: question word in one of these can still single out the thing asked about ("the index service").
TOPIC_CONCEPTS = frozenset({"team", "slow", "session", "failure", "flag", "upload", "image", "payment", "notify",
                            "search", "organisation", "size", "age"})

#: Surface paraphrases: ``(pattern, alternatives)``; the pattern is a regex on lower-cased text.
PHRASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"\blisten on\b|\blistens on\b", ("bind to", "accept connections on")),
    (r"\bport\b", ("network port", "TCP port")),
    (r"\bserved\b", ("reachable", "exposed")),
    (r"\bkeep its state\b|\bkeeps its state\b|\bkeep its data\b", ("store its data", "persist data")),
    (r"\bdatastore\b|\bdatabase\b", ("data store", "storage backend")),
    (r"\bwritten in\b", ("implemented in", "coded in")),
    (r"\bprogramming language\b|\blanguage\b", ("implementation language", "programming language")),
    (r"\bwent live\b|\blaunched\b", ("went live", "was launched")),
    (r"\bgo live\b|\blaunch\b", ("go live", "launch")),
    (r"\bowns\b", ("is responsible for", "maintains")),
    (r"\bowned\b", ("maintained", "run")),
    (r"\bresponsible for\b", ("that owns", "in charge of")),
    (r"\bleads\b", ("manages", "is the lead of")),
    (r"\blead\b|\bleader\b", ("manager", "head")),
    (r"\bboss\b|\bin charge\b", ("lead", "manager")),
    (r"\brole\b|\bjob\b", ("position", "job title")),
    (r"\bwork as\b|\bworks as\b", ("hold the role of", "have the job of")),
    (r"\breplicas\b|\binstances\b|\bboxes\b", ("instances", "replicas")),
    (r"\bchat channel\b|\bchannel\b", ("chat room", "channel")),
    (r"\bheadquarters\b|\bhead office\b", ("main office", "headquarters")),
    (r"\bbased\b|\bsit\b|\bsits\b", ("located", "working from")),
    (r"\boffice\b", ("location", "city office")),
    (r"\broot cause\b", ("underlying reason", "cause")),
    (r"\bcaused\b", ("led to", "triggered")),
    (r"\bcause\b", ("reason", "root cause")),
    (r"\bfixed\b", ("resolved", "mitigated")),
    (r"\bfix\b", ("resolve", "mitigate")),
    (r"\blogged out\b", ("session expired", "authentication failed")),
    (r"\bslow\b|\bsluggish\b", ("high latency", "slow responses")),
    (r"\bwould not upload\b|\bfailed to upload\b", ("upload failed", "upload rejected")),
    (r"\bdid not load\b|\bwould not load\b", ("failed to load", "not displayed")),
    (r"\brollout\b|\bshare of traffic\b", ("rollout percentage", "traffic share")),
    (r"\bfeature flag\b", ("flag", "feature switch")),
    (r"\bflag\b", ("feature flag", "switch")),
    (r"\breads\b|\bevaluates\b", ("evaluates", "checks")),
    (r"\brelease manager\b", ("person who managed the release", "release owner")),
    (r"\bcurrent\b|\btoday\b|\bright now\b|\bthese days\b", ("currently", "at the moment")),
    (r"\bcompare\b|\bvs\.?(?=\s)|\bversus\b", ("compared with", "versus")),
    (r"\bdirector\b|\bdirected\b", ("filmmaker", "director")),
    (r"\bborn\b", ("birth", "born")),
    (r"\bstarted\b|\bfounded\b", ("established", "first published")),
)

_STEM_TO_CONCEPTS: dict[str, frozenset[str]] = {}
for _name, _words in CONCEPTS.items():
    for _w in _words:
        key = stem(_w)
        _STEM_TO_CONCEPTS[key] = _STEM_TO_CONCEPTS.get(key, frozenset()) | {_name}


@lru_cache(maxsize=65536)
def concepts_of(word_stem: str) -> frozenset[str]:
    """The concept groups a stemmed word belongs to (empty when it is in none)."""
    return _STEM_TO_CONCEPTS.get(word_stem, frozenset())


def meanings(word_stem: str) -> frozenset[str]:
    """What a stemmed word can match: itself and its concept groups."""
    return frozenset({"=" + word_stem}) | concepts_of(word_stem)


def phrase_alternatives(text: str) -> list[tuple[re.Match[str], tuple[str, ...]]]:
    """Non-overlapping phrase matches in ``text`` with their alternatives, in text order."""
    taken: list[tuple[int, int]] = []
    found = []
    lowered = text.lower()
    for pattern, alternatives in PHRASES:
        for m in re.finditer(pattern, lowered):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            found.append((m, alternatives))
    return sorted(found, key=lambda item: item[0].start())
