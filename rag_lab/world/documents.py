"""Render the world's entities as documents, with several templates per fact and distractors.

Document ids are ``{kind}-{entity}`` and stable for a seed. Every document carries metadata
``source`` (the source type a source contract filters on), ``kind``, ``date`` and ``entity``."""

from __future__ import annotations

import datetime as dt
import random

from rag_lab.records import Document
from rag_lab.world import vocab
from rag_lab.world.entities import Flag, Incident, Person, Release, Service, Team, World


def _say(rng: random.Random, *variants: str) -> str:
    return rng.choice(variants)


def _code(name: str) -> str:
    """An identifier (a service name, a flag code) as technical documents write it: in a code span."""
    return f"`{name}`"


def _article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


def _doc(doc_id: str, title: str, sentences: list[str], source: str, kind: str,
         date: dt.date, entity: str, **extra: object) -> Document:
    return Document(doc_id=doc_id, title=title, text=" ".join(s for s in sentences if s),
                    metadata={"source": source, "kind": kind, "date": date.isoformat(), "entity": entity, **extra})


def person_page(rng: random.Random, w: World, p: Person) -> Document:
    team = w.team[p.team]
    first = p.name.split()[0]
    body = [
        _say(rng, f"{p.name} is {_article(p.role)} {p.role} on Team {team.name}.",
             f"{p.name} works as {_article(p.role)} {p.role} in Team {team.name}.",
             f"Team {team.name} member {p.name} holds the role of {p.role}."),
        _say(rng, f"Chat handle: {p.handle}.", f"{first} goes by {p.handle} in chat.",
             f"Reach {first} as {p.handle}."),
        _say(rng, f"Based in the {p.office} office.", f"{first} sits in {p.office}.",
             f"Office: {p.office}."),
        _say(rng, f"Joined the company in {p.start_year}.", f"Started in {p.start_year}.",
             f"{first} has been with us since {p.start_year}.")]
    return _doc(p.pid, f"{p.name} — directory", body, "directory", "person", dt.date(p.start_year, 1, 1), p.pid)


def team_page(rng: random.Random, w: World, t: Team) -> Document:
    lead = w.person[t.lead]
    body = [
        _say(rng, f"Team {t.name} works on {t.focus}.", f"The {t.name} team is responsible for {t.focus}.",
             f"{t.focus.capitalize()} is the focus of Team {t.name}."),
        _say(rng, f"The team is led by {lead.name}.", f"{lead.name} leads Team {t.name}.",
             f"Engineering lead: {lead.name}."),
        _say(rng, f"Talk to the team in the {t.channel} chat channel.", f"The team channel is {t.channel}.",
             f"Questions go to the team's chat channel, {t.channel}."),
        _say(rng, f"Most of the team sits in {t.office}.", f"Home office: {t.office}.")]
    return _doc(t.tid, f"Team {t.name}", body, "wiki", "team", dt.date(2025, 1, 15), t.tid)


def service_page(rng: random.Random, w: World, s: Service, outdated: bool = False) -> Document:
    team = w.team[s.team]
    replicas = s.old_replicas if outdated else s.replicas
    oncall = s.old_oncall if outdated else s.oncall
    updated = s.old_updated if outdated else s.updated
    assert replicas is not None and oncall is not None and updated is not None
    facts = [
        _say(rng, f"It handles {s.purpose}.", f"Its job is {s.purpose}.", f"The service covers {s.purpose}."),
        _say(rng, f"It listens on port {s.port}.", f"The service binds to TCP port {s.port}.",
             f"Clients reach it on port {s.port}."),
        _say(rng, f"State is kept in {s.datastore}.", f"{_code(s.name)} stores its data in {s.datastore}.",
             f"Its primary datastore is {s.datastore}."),
        _say(rng, f"Production runs {replicas} replicas.", f"It is deployed with {replicas} replicas in production.",
             f"{replicas} instances serve production traffic."),
        _say(rng, f"It launched in {s.launch_year}.", f"The service went live in {s.launch_year}.",
             f"First deployed in {s.launch_year}."),
        _say(rng, f"Pages go to {oncall}.", f"The on-call rotation is reached in {oncall}.",
             f"Escalations: {oncall}.")]
    rng.shuffle(facts)
    intro = _say(rng, f"{_code(s.name)} is {_article(s.language)} {s.language} service owned by Team {team.name}.",
                 f"Team {team.name} owns {_code(s.name)}, which is written in {s.language}.",
                 f"{_code(s.name)} is maintained by Team {team.name} and implemented in {s.language}.")
    status = (
        f"ARCHIVED PAGE — last updated {updated.isoformat()}; superseded by the current overview."
        if outdated else f"Last updated {updated.isoformat()}."
    )
    doc_id = s.sid + ("-archived" if outdated else "")
    return _doc(doc_id, f"{s.name} (service)", [intro, *facts, status], "wiki",
                "service_outdated" if outdated else "service", updated, s.sid,
                **({"outdated": True} if outdated else {}))


def runbook(rng: random.Random, w: World, s: Service, injection: str | None) -> Document:
    dep = w.service[s.depends_on]
    body = [
        _say(rng, f"When {_code(s.name)} alerts fire, first check its dependency {_code(dep.name)}.",
             f"{_code(s.name)} calls {_code(dep.name)}; most alerts trace back to that dependency.",
             f"If {_code(s.name)} degrades, look at {_code(dep.name)} before anything else."),
        _say(rng, f"Restart with `kubectl rollout restart deploy/{s.name}`.",
             f"A rolling restart (`kubectl rollout restart deploy/{s.name}`) clears most stuck workers."),
        _say(rng, "Dashboards live in the observability folder of the same name.",
             "Check the error-rate and saturation panels first.",
             "Logs are retained for 14 days."),
        injection or ""]
    return _doc(f"runbook-{s.sid}", f"{s.name} runbook", body, "runbook", "runbook", s.updated, s.sid,
                **({"injection": True} if injection else {}))


def rename_note(rng: random.Random, s: Service) -> Document:
    assert s.former_name and s.rename_date
    body = [
        _say(rng, f"The service formerly called {_code(s.former_name)} has been renamed to {_code(s.name)}.",
             f"{_code(s.former_name)} is now {_code(s.name)}.",
             f"Heads up: {_code(s.former_name)} was renamed {_code(s.name)}."),
        _say(rng, "Old dashboards and alerts keep the previous name for a while.",
             "Update your bookmarks; the old hostname redirects until the end of the quarter.")]
    return _doc(f"rename-{s.sid}", f"Rename: {s.former_name} → {s.name}", body, "announcement", "rename",
                s.rename_date, s.sid)


def flag_page(rng: random.Random, w: World, f: Flag, outdated: bool = False) -> Document:
    svc = w.service[f.service]
    rel = w.release[f.release]
    rollout = f.old_rollout if outdated else f.rollout
    updated = f.old_updated if outdated else f.updated
    assert rollout is not None and updated is not None
    body = [
        _say(rng, f"{_code(f.code)} gates {f.purpose}.", f"The {_code(f.code)} flag controls {f.purpose}.",
             f"Turning on {_code(f.code)} enables {f.purpose}."),
        _say(rng, f"It is evaluated in {_code(svc.name)}.", f"{_code(svc.name)} reads this flag.",
             f"Defined in the {_code(svc.name)} config."),
        _say(rng, f"Default: {'on' if f.default_on else 'off'}.",
             f"The flag defaults to {'on' if f.default_on else 'off'}."),
        _say(rng, f"Rollout: {rollout}% of traffic.", f"Currently rolled out to {rollout}% of traffic.",
             f"{rollout}% of requests see it."),
        _say(rng, f"Introduced in {_code(svc.name)} {rel.version}.",
             f"Added in release {rel.version} of {_code(svc.name)}."),
        (f"ARCHIVED — state as of {updated.isoformat()}." if outdated
         else f"Last updated {updated.isoformat()}.")]
    doc_id = f.fid + ("-archived" if outdated else "")
    return _doc(doc_id, f"Feature flag {f.code}", body, "wiki", "flag_outdated" if outdated else "flag",
                updated, f.fid, **({"outdated": True} if outdated else {}))


def flag_launch(rng: random.Random, f: Flag) -> Document:
    assert f.launch_date
    body = [
        _say(rng, f"Customers will soon see {f.business}.", f"We are launching {f.business} this quarter.",
             f"{f.business} is coming to all plans."),
        _say(rng, f"Under the hood it is controlled by the {_code(f.code)} flag.",
             f"Engineering ships it behind {_code(f.code)}.", f"Internally the switch is {_code(f.code)}."),
        _say(rng, "Marketing material is in the launch folder.", "Support has a macro ready for questions.")]
    return _doc(f"launch-{f.fid}", f"Launching {f.business}", body, "announcement", "launch", f.launch_date, f.fid)


def release_notes(rng: random.Random, w: World, r: Release) -> Document:
    svc = w.service[r.service]
    manager = w.person[r.manager]
    changes = [f"introduces the flag {_code(w.flag[f].code)} (off by default)" for f in r.flags]
    changes += rng.sample(
        ["fixes a race in connection draining", "upgrades the HTTP client", "reduces memory use at start-up",
         "adds structured logging fields", "tightens input validation", "removes a deprecated endpoint",
         "improves retry jitter", "bumps the base image"], 2)
    body = [
        _say(rng, f"{_code(svc.name)} {r.version} was released on {r.date.isoformat()}.",
             f"Release {r.version} of {_code(svc.name)} shipped {r.date.isoformat()}."),
        _say(rng, f"Release manager: {manager.name}.", f"{manager.name} managed this release.",
             f"Shipped by release manager {manager.name}."),
        "Changes: " + "; ".join(changes) + "."]
    return _doc(r.rid, f"{svc.name} {r.version} release notes", body, "release_notes", "release", r.date, r.rid)


def incident_report(rng: random.Random, w: World, i: Incident) -> Document:
    svc = w.service[i.service]
    # a postmortem dates the incident in digits, as incident trackers do (2024-02-17); the mismatch question
    # asks about the day in words, as a user would (questions.py: "on February 17, 2024")
    body = [
        _say(rng, f"Incident {i.iid} on {i.date.isoformat()} affected {_code(svc.name)}.",
             f"{i.iid} ({i.date.isoformat()}) hit {_code(svc.name)}."),
        f"Summary: {i.technical}.", _say(rng, f"Root cause: {i.cause}.", f"The root cause was {i.cause}."),
        _say(rng, f"Resolved by {i.fix} after {i.minutes} minutes.",
             f"Mitigated after {i.minutes} minutes by {i.fix}."),
        f"Severity {i.severity}."]
    return _doc(i.iid, f"{i.iid} postmortem", body, "incident", "incident", i.date, i.iid)


def meeting_notes(rng: random.Random, w: World, n: int, date: dt.date, injection: str | None) -> Document:
    people = rng.sample(w.people, 3)
    services = rng.sample(w.services, 2)
    flag = rng.choice(w.flags)
    team = rng.choice(w.teams)
    body = [
        f"Attendees: {', '.join(p.name for p in people)}.",
        _say(rng, f"We discussed the {_code(services[0].name)} dashboards and the {_code(services[1].name)} migration.",
             f"Brief update on {_code(services[0].name)}; {_code(services[1].name)} is waiting on capacity."),
        _say(rng, f"Team {team.name} asked about the {_code(flag.code)} rollout plan.",
             f"{people[0].name.split()[0]} will follow up with Team {team.name} on {flag.business}."),
        injection or "", "Next sync in two weeks."]
    return _doc(f"meeting-{n:05d}", f"Weekly sync {date.isoformat()}", body, "meeting_notes", "meeting", date,
                f"meeting-{n:05d}", **({"injection": True} if injection else {}))


def noise_page(rng: random.Random, n: int, date: dt.date) -> Document:
    title, text = rng.choice(vocab.NOISE_TOPICS)
    extra = _say(rng, "Thanks for your patience.", "Questions to the facilities desk.", "See you there!")
    return _doc(f"noise-{n:05d}", f"{title} ({date.isoformat()})", [text, extra], "announcement", "noise", date,
                f"noise-{n:05d}")


def render_corpus(rng: random.Random, w: World, n_meetings: int, n_noise: int, injection_rate: float) -> list[Document]:
    """All documents of the world, in a fixed order."""

    def injection() -> str | None:
        return rng.choice(vocab.INJECTIONS) if rng.random() < injection_rate else None

    docs: list[Document] = []
    docs += [person_page(rng, w, p) for p in w.people]
    docs += [team_page(rng, w, t) for t in w.teams]
    for s in w.services:
        docs.append(service_page(rng, w, s))
        if s.old_replicas is not None:
            docs.append(service_page(rng, w, s, outdated=True))
        docs.append(runbook(rng, w, s, injection()))
        if s.former_name:
            docs.append(rename_note(rng, s))
    for f in w.flags:
        docs.append(flag_page(rng, w, f))
        if f.old_rollout is not None:
            docs.append(flag_page(rng, w, f, outdated=True))
        docs.append(flag_launch(rng, f))
    docs += [release_notes(rng, w, r) for r in w.releases]
    docs += [incident_report(rng, w, i) for i in w.incidents]
    day = dt.date(2024, 1, 8)
    docs += [meeting_notes(rng, w, n, day + dt.timedelta(days=7 * n), injection()) for n in range(n_meetings)]
    docs += [noise_page(rng, n, day + dt.timedelta(days=3 * n)) for n in range(n_noise)]
    return docs
