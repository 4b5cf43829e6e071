"""Evaluation questions over the synthetic world, eight types (docs/design.md §4).

Each builder returns every question it can ask of the world; the generator samples from them. Gold fields (answer,
aliases, gold docs, minimum hops) come from the entities, never from text. ``metadata`` records the template and, for
multi-hop questions, the bridge entity, so analyses can tell a lost bridge entity from a retrieval miss."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from collections.abc import Sequence

from rag_lab.errors import ConfigError
from rag_lab.records import Question
from rag_lab.world.entities import World

NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 6: "six", 8: "eight", 12: "twelve", 16: "sixteen", 24: "twenty-four"}


def _q(text: str, qtype: str, answer: str | None, gold: list[str], hops: int, template: str,
       aliases: tuple[str, ...] = (), **meta: object) -> dict:
    """The fields of one candidate question (qid and split are given when it is picked)."""
    return dict(text=text, type=qtype, answer=answer, answer_aliases=aliases,
                gold_doc_ids=tuple(dict.fromkeys(gold)), min_hops=hops, metadata={"template": template, **meta})


def _long_date(d: dt.date) -> str:
    return f"{d.strftime('%B')} {d.day}, {d.year}"


def _replica_aliases(n: int) -> tuple[str, ...]:
    return (NUMBER_WORDS[n],) if n in NUMBER_WORDS else ()


def single(w: World, rng: random.Random) -> list[dict]:
    out: list[dict] = []
    for s in w.services:
        gold = [s.sid]
        out += [
            _q(rng.choice((f"Which port does {s.name} listen on?", f"What port is {s.name} served on?",
                           f"On which TCP port can clients reach {s.name}?")),
               "single", str(s.port), gold, 1, "service_port"),
            _q(rng.choice((f"What programming language is {s.name} written in?",
                           f"Which language is {s.name} implemented in?")),
               "single", s.language, gold, 1, "service_language"),
            _q(rng.choice((f"Which datastore does {s.name} use?", f"Where does {s.name} keep its state?")),
               "single", s.datastore, gold, 1, "service_datastore"),
            _q(rng.choice((f"In what year did {s.name} launch?", f"When did {s.name} first go live?")),
               "single", str(s.launch_year), gold, 1, "service_launch")]
    for p in w.people:
        out.append(_q(rng.choice((f"What is {p.name}'s role?", f"What does {p.name} work as?")),
                      "single", p.role, [p.pid], 1, "person_role"))
    for i in w.incidents:
        out.append(_q(rng.choice((f"What was the root cause of {i.iid}?", f"Why did incident {i.iid} happen?")),
                      "single", i.cause, [i.iid], 1, "incident_cause"))
    for r in w.releases:
        svc = w.service[r.service]
        out.append(_q(f"Who was the release manager for {svc.name} {r.version}?", "single",
                      w.person[r.manager].name, [r.rid], 1, "release_manager"))
    return out


def bridge(w: World, rng: random.Random) -> list[dict]:
    out: list[dict] = []
    for s in w.services:
        team = w.team[s.team]
        lead = w.person[team.lead]
        out.append(_q(rng.choice((f"Who leads the team that owns {s.name}?",
                                  f"Who is the lead of the team responsible for {s.name}?",
                                  f"Which person leads the team that maintains {s.name}?")),
                      "bridge", lead.name, [s.sid, team.tid], 2, "service_team_lead",
                      bridge_entity=f"Team {team.name}"))
        out.append(_q(rng.choice((f"In which chat channel can I reach the team that owns {s.name}?",
                                  f"What is the team channel of the owners of {s.name}?")),
                      "bridge", team.channel, [s.sid, team.tid], 2, "service_team_channel",
                      bridge_entity=f"Team {team.name}"))
    for f in w.flags:
        svc = w.service[f.service]
        out.append(_q(rng.choice((f"What language is the service that evaluates {f.code} written in?",
                                  f"The {f.code} flag is read by a service; which language is that service in?")),
                      "bridge", svc.language, [f.fid, svc.sid], 2, "flag_service_language",
                      bridge_entity=svc.name))
    for i in w.incidents:
        svc = w.service[i.service]
        team = w.team[svc.team]
        out.append(_q(rng.choice((f"Which team owns the service affected by {i.iid}?",
                                  f"{i.iid} hit one of our services. Which team owns it?")),
                      "bridge", f"Team {team.name}", [i.iid, svc.sid], 2,
                      "incident_service_team", aliases=(team.name,), bridge_entity=svc.name))
    for p in w.people:
        team = w.team[p.team]
        out.append(_q(f"What is the chat channel of the team that {p.name} belongs to?", "bridge", team.channel,
                      [p.pid, team.tid], 2, "person_team_channel",
                      bridge_entity=f"Team {team.name}"))
    return out


def comparison(w: World, rng: random.Random) -> list[dict]:
    out: list[dict] = []
    services = list(w.services)
    for _ in range(len(services) * 3):
        a, b = rng.sample(services, 2)
        gold = [a.sid, b.sid]
        kind = rng.randrange(3)
        if kind == 0 and a.replicas != b.replicas:
            win = a if a.replicas > b.replicas else b
            text = rng.choice((f"Which runs more replicas, {a.name} or {b.name}?",
                               f"{a.name} vs {b.name}: which one has more production replicas?",
                               f"Compare {a.name} and {b.name} — which is deployed with more replicas?"))
            out.append(_q(text, "comparison", win.name, gold, 2, "compare_replicas", pair=[a.name, b.name]))
        elif kind == 1 and a.launch_year != b.launch_year:
            win = a if a.launch_year < b.launch_year else b
            text = rng.choice((f"Which launched first, {a.name} or {b.name}?",
                               f"Between {a.name} and {b.name}, which service went live earlier?",
                               f"What is the difference between {a.name} and {b.name} in age — which is older?"))
            out.append(_q(text, "comparison", win.name, gold, 2, "compare_launch", pair=[a.name, b.name]))
        elif kind == 2:
            lang = rng.choice((a.language, b.language))
            both = a.language == b.language == lang
            out.append(_q(f"Are both {a.name} and {b.name} written in {lang}?", "comparison",
                          "yes" if both else "no", gold, 2, "compare_both_language", pair=[a.name, b.name]))
    return out


def mismatch(w: World, rng: random.Random) -> list[dict]:
    out: list[dict] = []
    day_count = Counter(i.date for i in w.incidents)
    day_service_count = Counter((i.date, i.service) for i in w.incidents)
    for i in w.incidents:
        # the lay question names the day, and the service too where the day alone is ambiguous
        when = _long_date(i.date)
        if day_count[i.date] > 1:
            if day_service_count[(i.date, i.service)] > 1:
                continue
            when = f"{when} in {w.service[i.service].name}"
        if rng.random() < 0.5:
            text = rng.choice((f"Why was it that {i.lay} on {when}?", f"What caused it when {i.lay} on {when}?"))
            out.append(_q(text, "mismatch", i.cause, [i.iid], 1, "incident_lay_cause"))
        else:
            text = rng.choice((f"How was it fixed when {i.lay} on {when}?",
                               f"What did we do to fix things after {i.lay} on {when}?"))
            out.append(_q(text, "mismatch", i.fix, [i.iid], 1, "incident_lay_fix"))
    return out


def alias(w: World, rng: random.Random) -> list[dict]:
    out: list[dict] = []
    for s in w.services:
        if s.former_name:
            out.append(_q(rng.choice((f"Which port does {s.former_name} listen on?",
                                      f"On which port is {s.former_name} served?")),
                          "alias", str(s.port), [f"rename-{s.sid}", s.sid], 2, "former_name_port",
                          bridge_entity=s.name))
    for f in w.flags:
        out.append(_q(rng.choice((f"Which service evaluates the flag behind {f.business}?",
                                  f"{f.business} is behind a feature flag. Which service reads that flag?")),
                      "alias", w.service[f.service].name, [f"launch-{f.fid}", f.fid], 2,
                      "business_name_service", bridge_entity=f.code))
    for p in w.people:
        out.append(_q(rng.choice((f"Which office is {p.handle} based in?", f"Where does {p.handle} sit?")),
                      "alias", p.office, [p.pid], 1, "handle_office"))
    return out


def vague(w: World, rng: random.Random) -> list[dict]:
    out: list[dict] = []
    first_words = Counter(s.name.split("-")[0] for s in w.services)
    for s in w.services:
        stem = s.name.split("-")[0]
        if first_words[stem] != 1:
            continue
        gold = [s.sid]
        out.append(_q(rng.choice((f"the {stem} thing — how many copies of it do we run?",
                                  f"how many boxes is the {stem} service on these days")),
                      "vague", str(s.replicas), gold, 1, "vague_replicas", aliases=_replica_aliases(s.replicas)))
        out.append(_q(rng.choice((f"what does the {stem} service keep its data in again?",
                                  f"{stem} stuff, which database?")),
                      "vague", s.datastore, gold, 1, "vague_datastore"))
    for t in w.teams:
        out.append(_q(rng.choice((f"who's in charge over at {t.name}?", f"{t.name} folks — who is the boss?")),
                      "vague", w.person[t.lead].name, [t.tid], 1, "vague_team_lead"))
    first_in_team = Counter((p.team, p.name.split()[0]) for p in w.people)
    for p in w.people:
        first = p.name.split()[0]
        if first_in_team[(p.team, first)] == 1:
            team = w.team[p.team].name
            out.append(_q(rng.choice((f"what does {first} from {team} do again?",
                                      f"{first} on the {team} team, what's their job?")),
                          "vague", p.role, [p.pid], 1, "vague_person_role"))
    return out


def unanswerable(w: World, rng: random.Random) -> list[dict]:
    out: list[dict] = []
    used = {s.name for s in w.services}
    ghosts = [f"{a}-{b}" for a in ("quasar", "nebula", "photon", "vortex", "zenith", "lattice")
              for b in ("relay", "sync", "gateway", "keeper", "engine")]
    for g in ghosts:
        if g not in used:
            out.append(_q(rng.choice((f"Which port does {g} listen on?", f"What language is {g} written in?")),
                          "unanswerable", None, [], 0, "ghost_service"))
    for s in w.services:
        out.append(_q(rng.choice((f"What is the monthly cloud bill of {s.name}?",
                                  f"Which cloud region hosts {s.name}'s disaster-recovery copy?",
                                  f"What is the CPU limit of one {s.name} replica?")),
                      "unanswerable", None, [], 0, "undocumented_attribute"))
    for p in w.people:
        out.append(_q(f"What is {p.name}'s desk phone extension?", "unanswerable", None, [], 0, "undocumented_person"))
    return out


def stale(w: World, rng: random.Random) -> list[dict]:
    out: list[dict] = []
    for s in w.services:
        if s.old_replicas is None:
            continue
        gold = [s.sid]
        out.append(_q(rng.choice((f"How many replicas does {s.name} run in production now?",
                                  f"What is the current replica count of {s.name}?")),
                      "stale", str(s.replicas), gold, 1, "current_replicas",
                      aliases=_replica_aliases(s.replicas), outdated_answer=str(s.old_replicas)))
        out.append(_q(rng.choice((f"Where do pages for {s.name} go today?",
                                  f"What is the current on-call channel for {s.name}?")),
                      "stale", s.oncall, gold, 1, "current_oncall", outdated_answer=s.old_oncall))
    for f in w.flags:
        if f.old_rollout is None:
            continue
        out.append(_q(rng.choice((f"What share of traffic has {f.code} enabled right now?",
                                  f"What is the current rollout percentage of {f.code}?")),
                      "stale", f"{f.rollout}%", [f.fid], 1, "current_rollout",
                      aliases=(f"{f.rollout} percent",), outdated_answer=f"{f.old_rollout}%"))
    return out


#: The question builders by question type (each function is named after its type).
BUILDERS = {build.__name__: build for build in (single, bridge, comparison, mismatch, alias, vague, unanswerable, stale)}


def build_questions(w: World, rng: random.Random, types: Sequence[str], per_type: int,
                    dev_per_type: int) -> list[Question]:
    """``per_type`` questions of each of ``types``, the first ``dev_per_type`` of each in ``dev``."""
    questions: list[Question] = []
    for qtype in types:
        pool = BUILDERS[qtype](w, rng)
        rng.shuffle(pool)
        seen: set[str] = set()
        picked = []
        for cand in pool:
            if cand["text"] not in seen:
                seen.add(cand["text"])
                picked.append(cand)
            if len(picked) == per_type:
                break
        if len(picked) < per_type:
            raise ConfigError(f"the world has only {len(picked)} distinct {qtype!r} questions; "
                             f"{per_type} were asked for (make the world larger)")
        for n, cand in enumerate(picked):
            split = "dev" if n < dev_per_type else "test"
            questions.append(Question(qid=f"{qtype}-{n:03d}", split=split, **cand))
    return questions
