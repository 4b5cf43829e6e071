"""The entities of the synthetic company and how they are drawn from a seeded RNG."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from itertools import product

from rag_lab.world import vocab

EPOCH = dt.date(2025, 1, 1)


@dataclass
class Person:
    pid: str
    name: str
    handle: str
    role: str
    team: str  # team id
    office: str
    start_year: int


@dataclass
class Team:
    tid: str
    name: str  # e.g. "Aurora" -> "Team Aurora"
    focus: str
    channel: str
    office: str
    lead: str = ""  # person id


@dataclass
class Service:
    sid: str
    name: str
    team: str
    language: str
    datastore: str
    port: int
    replicas: int
    launch_year: int
    oncall: str
    purpose: str
    depends_on: str = ""  # service id
    former_name: str | None = None
    rename_date: dt.date | None = None
    # outdated facts, for services that have an archived duplicate page
    old_replicas: int | None = None
    old_oncall: str | None = None
    updated: dt.date = EPOCH
    old_updated: dt.date | None = None


@dataclass
class Flag:
    fid: str
    code: str
    business: str
    purpose: str
    service: str  # service id
    default_on: bool
    rollout: int
    updated: dt.date = EPOCH
    old_rollout: int | None = None
    old_updated: dt.date | None = None
    launch_date: dt.date | None = None
    release: str = ""  # release id that introduced it


@dataclass
class Incident:
    iid: str
    date: dt.date
    service: str
    family: int
    lay: str
    technical: str
    cause: str
    fix: str
    severity: str
    minutes: int


@dataclass
class Release:
    rid: str
    service: str
    version: str
    date: dt.date
    manager: str  # person id
    flags: list[str] = field(default_factory=list)


@dataclass
class World:
    people: list[Person]
    teams: list[Team]
    services: list[Service]
    flags: list[Flag]
    incidents: list[Incident]
    releases: list[Release]

    def __post_init__(self) -> None:
        self.person = {p.pid: p for p in self.people}
        self.team = {t.tid: t for t in self.teams}
        self.service = {s.sid: s for s in self.services}
        self.flag = {f.fid: f for f in self.flags}
        self.release = {r.rid: r for r in self.releases}


SERVICE_PURPOSE = {
    "ledger": "double-entry ledger postings and balance bookkeeping",
    "billing": "subscription charges and billing cycles",
    "refund": "refund requests and their settlement",
    "invoice": "invoice rendering and delivery",
    "auth": "sign-in, credentials and access tokens",
    "session": "user sessions and their expiry",
    "token": "issuing and rotating API tokens",
    "profile": "user profile data and preferences",
    "search": "full-text product search",
    "catalog": "the product catalog and its attributes",
    "index": "building search indexes from catalog changes",
    "notify": "in-app and mobile notifications",
    "mailer": "transactional email",
    "push": "mobile push delivery",
    "report": "scheduled business reports",
    "metrics": "collecting and aggregating service metrics",
    "audit": "the audit trail of sensitive actions",
    "fraud": "scoring transactions for fraud",
    "risk": "account risk limits",
    "upload": "file uploads from clients",
    "media": "image and video processing",
    "asset": "static asset storage and delivery",
    "cart": "shopping carts",
    "checkout": "the checkout flow",
    "payment": "card payment authorization",
    "quota": "per-tenant usage quotas",
    "tenant": "tenant provisioning",
    "schedule": "delayed and recurring jobs",
    "export": "bulk data exports",
    "import": "bulk data imports",
    "archive": "cold storage of old records",
    "backup": "database backups and restores",
    "config": "runtime configuration distribution",
    "feature": "feature flag evaluation",
}

FLAG_PURPOSE = {
    "FAST_REFUND": "the fast path for refund settlement",
    "BATCH_SETTLEMENT": "batching of payouts into one nightly settlement file",
    "LAZY_INDEX": "deferred re-indexing of catalog changes",
    "STRICT_TLS": "TLS 1.3-only connections with certificate pinning",
    "SOFT_DELETE": "soft deletion with a 30-day restore window",
    "SMART_RETRY": "adaptive retry of failed card charges",
    "DEDUP_WEBHOOKS": "idempotency keys on outbound webhooks",
    "EDGE_CACHE": "caching of responses at edge nodes",
    "SPLIT_INVOICE": "splitting one invoice across several payers",
    "GEO_ROUTING": "routing requests to the nearest region",
    "TOKEN_ROTATION": "automatic rotation of API signing keys",
    "ASYNC_EXPORT": "asynchronous export jobs with email delivery",
    "DARK_MODE": "the dark colour theme in clients",
    "BULK_UPLOAD": "uploading many files in one request",
    "PUSH_DIGEST": "bundling push notifications into a daily digest",
    "RISK_SCORE": "the per-transaction risk score shown to merchants",
    "AUDIT_STREAM": "streaming audit events to the compliance store",
    "QUOTA_BURST": "short bursts above the tenant quota",
    "MULTI_CURRENCY": "holding balances in several currencies",
    "INSTANT_PAYOUT": "payouts within minutes instead of days",
}


def _day(rng: random.Random, start: dt.date, days: int) -> dt.date:
    return start + dt.timedelta(days=rng.randrange(days))


def _unique_names(candidates: list[str], n: int, rng: random.Random) -> list[str]:
    """``n`` distinct names: the candidates in shuffled order, then numbered repeats."""
    names = list(candidates)
    rng.shuffle(names)
    out = names[:n]
    round_no = 2
    while len(out) < n:
        out.extend(f"{name}-{round_no}" for name in names[: n - len(out)])
        round_no += 1
    return out


def draw_world(rng: random.Random, counts: dict[str, int]) -> World:
    """Draw every entity and the links between them."""
    teams = _draw_teams(rng, counts["teams"])
    people = _draw_people(rng, counts["people"], teams)
    services = _draw_services(rng, counts["services"], teams)
    releases = _draw_releases(rng, counts["releases"], services, people)
    flags = _draw_flags(rng, counts["flags"], services, releases)
    incidents = _draw_incidents(rng, counts["incidents"], services)
    return World(people, teams, services, flags, incidents, releases)


def _draw_teams(rng: random.Random, n: int) -> list[Team]:
    names = _unique_names(list(vocab.TEAM_NAMES), n, rng)
    return [
        Team(
            tid=f"team-{i:04d}",
            name=name,
            focus=rng.choice(vocab.TEAM_FOCUS),
            channel=f"#team-{name.lower()}",
            office=rng.choice(vocab.OFFICES),
        )
        for i, name in enumerate(names)
    ]


def _draw_people(rng: random.Random, n: int, teams: list[Team]) -> list[Person]:
    full = [f"{first} {last}" for first, last in product(vocab.FIRST_NAMES, vocab.LAST_NAMES)]
    rng.shuffle(full)
    if n > len(full):  # very large worlds: add middle initials
        initials = "ABCDEFGHJKLMNPRSTW"
        full += [f"{name.split()[0]} {m}. {name.split()[1]}" for m in initials for name in full][: n - len(full)]
    people: list[Person] = []
    handles: set[str] = set()
    for i in range(n):
        name = full[i]
        parts = name.replace(".", "").split()
        base = (parts[0][0] + parts[-1]).lower()
        handle, k = f"@{base}", 2
        while handle in handles:
            handle, k = f"@{base}{k}", k + 1
        handles.add(handle)
        team = teams[i % len(teams)] if i < len(teams) * 2 else rng.choice(teams)
        people.append(
            Person(
                pid=f"person-{i:05d}",
                name=name,
                handle=handle,
                role=rng.choice(vocab.ROLES),
                team=team.tid,
                office=rng.choice(vocab.OFFICES) if rng.random() < 0.3 else team.office,
                start_year=rng.randint(2014, 2025),
            ))
    for team in teams:
        members = [p for p in people if p.team == team.tid]
        team.lead = rng.choice(members).pid
    return people


def _draw_services(rng: random.Random, n: int, teams: list[Team]) -> list[Service]:
    names = _unique_names([f"{a}-{b}" for a, b in product(vocab.SERVICE_FIRST, vocab.SERVICE_SECOND)], n, rng)
    ports = rng.sample(range(3000, 65000), n)
    former = _unique_names(list(vocab.FORMER_NAME_PARTS), n, rng)
    services: list[Service] = []
    for i, name in enumerate(names):
        replicas = rng.choice((2, 3, 4, 6, 8, 12, 16, 24))
        updated = _day(rng, dt.date(2025, 6, 1), 400)
        svc = Service(sid=f"svc-{i:05d}", name=name,
                      team=teams[i % len(teams)].tid if i < len(teams) else rng.choice(teams).tid,
                      language=rng.choice(vocab.LANGUAGES), datastore=rng.choice(vocab.DATASTORES), port=ports[i],
                      replicas=replicas, launch_year=rng.randint(2016, 2025), oncall=f"#oncall-{name}",
                      purpose=SERVICE_PURPOSE[name.split("-")[0]], updated=updated)
        if rng.random() < 0.3:
            svc.former_name = former[i]
            svc.rename_date = _day(rng, dt.date(2024, 1, 1), 500)
        if rng.random() < 0.35:
            svc.old_replicas = rng.choice([r for r in (2, 3, 4, 6, 8, 12, 16, 24) if r != replicas])
            svc.old_oncall = f"#{name.split('-')[0]}-alerts"
            svc.old_updated = _day(rng, dt.date(2023, 1, 1), 500)
        services.append(svc)
    for svc in services:
        svc.depends_on = rng.choice([s for s in services if s.sid != svc.sid] or [svc]).sid
    return services


def _draw_releases(rng: random.Random, n: int, services: list[Service], people: list[Person]) -> list[Release]:
    releases: list[Release] = []
    per_service: dict[str, int] = {}
    for i in range(n):
        svc = services[i % len(services)] if i < len(services) else rng.choice(services)
        k = per_service.get(svc.sid, 0)
        per_service[svc.sid] = k + 1
        major = rng.randint(1, 6)
        releases.append(
            Release(
                rid=f"rel-{i:05d}",
                service=svc.sid,
                version=f"{major}.{rng.randint(0, 30)}.{k}",
                date=_day(rng, dt.date(2024, 1, 1), 700),
                manager=rng.choice(people).pid,
            ))
    return releases


def _draw_flags(rng: random.Random, n: int, services: list[Service], releases: list[Release]) -> list[Flag]:
    objects = list(range(len(vocab.FLAG_OBJECTS)))
    verbs = {o: rng.choice(vocab.FLAG_VERBS) for o in objects}
    flags: list[Flag] = []
    for i in range(n):
        obj = objects[i % len(objects)]
        generation = i // len(objects) + 1
        obj_code = vocab.FLAG_OBJECTS[obj]
        suffix = "" if generation == 1 else f"_V{generation}"
        business = vocab.FLAG_BUSINESS[obj] + ("" if generation == 1 else f" {generation}")
        release = rng.choice(releases)
        rollout = rng.choice((0, 5, 10, 25, 50, 75, 100))
        flag = Flag(fid=f"flag-{i:05d}", code=f"{verbs[obj]}_{obj_code}{suffix}", business=business,
                    purpose=FLAG_PURPOSE[obj_code], service=release.service, default_on=rng.random() < 0.3,
                    rollout=rollout, updated=_day(rng, dt.date(2025, 6, 1), 400),
                    launch_date=_day(rng, dt.date(2024, 6, 1), 500), release=release.rid)
        release.flags.append(flag.fid)
        if rng.random() < 0.35:
            flag.old_rollout = rng.choice([r for r in (0, 5, 10, 25, 50, 75, 100) if r != rollout])
            flag.old_updated = _day(rng, dt.date(2023, 6, 1), 300)
        flags.append(flag)
    return flags


def _draw_incidents(rng: random.Random, n: int, services: list[Service]) -> list[Incident]:
    dates = sorted(rng.sample(range(730), min(n, 730)))
    dates += [rng.randrange(730) for _ in range(n - len(dates))]
    incidents: list[Incident] = []
    for i in range(n):
        family = rng.randrange(len(vocab.INCIDENT_FAMILIES))
        lay, tech, causes, fixes = vocab.INCIDENT_FAMILIES[family]
        c = rng.randrange(len(causes))
        incidents.append(
            Incident(
                iid=f"INC-{1000 + i * 7 + rng.randrange(7)}",
                date=dt.date(2024, 1, 1) + dt.timedelta(days=dates[i]),
                service=rng.choice(services).sid,
                family=family,
                lay=rng.choice(lay),
                technical=rng.choice(tech),
                cause=causes[c],
                fix=fixes[c],
                severity=rng.choice(("SEV1", "SEV2", "SEV2", "SEV3", "SEV3")),
                minutes=rng.randint(12, 300),
            ))
    return incidents
