"""A study's claims (rag_lab.experiments.study), and the numbers the pages give for the v3 study, which come from its
replays: the study tables are rendered from the shipped
claims files (and equal their render), the claims files equal a fresh replay's findings, and the sentences that
carry numbers of their own say what the replay counts."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lessons.notebook import lesson_sweep
from rag_lab.experiments.engine.findings import sweep_findings
from rag_lab.experiments.study import (
    BLOCK_END,
    BLOCK_START,
    block_of,
    first_declared,
    markdown_table,
    part_claims,
    read_claims,
    render_block,
    study_parts,
)
from rag_lab.paths import DATA_DIR, SWEEPS_DIR
from rag_lab.stats.significance import holm

REPO = DATA_DIR.parent
V3 = ("real_qwen_hotpotqa_v3", "real_qwen_hotpotqa_v3_answer", "real_qwen_musique_v3", "real_qwen_musique_disclosure")
DISCLOSURE = "real_qwen_hotpotqa_disclosure"   # the like-for-like study (prompt set v4)


def test_every_study_block_equals_its_render_from_the_claims_files():
    done = subprocess.run([sys.executable, "scripts/study_docs.py", "--check"], cwd=REPO, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_study_table_gives_the_family_p_holm_over_the_study_and_the_first_declared_test():
    claims = study_parts("v3", SWEEPS_DIR, DATA_DIR / "recorded")
    assert set(claims) == set(V3)
    table = markdown_table(claims)
    every = [c for cs in claims.values() for c in cs]
    assert len(every) == 8 and table.count("\n| ") == 8   # a row for each of the eight claims, below the header
    assert holm(c.p for c in every)[0] >= every[0].p
    for c in every:
        assert c.all_n is not None and c.all_n > c.n   # every part names its pilot: fresh questions only
    text = (REPO / "docs" / "simulate-then-verify.md").read_text(encoding="utf-8")
    assert block_of(text, "v3") == table
    with pytest.raises(ValueError, match="no study block"):
        render_block("no markers here", "v3", table)
    for half in (BLOCK_START, BLOCK_END):   # reading a block and writing one find its markers by one rule
        with pytest.raises(ValueError, match=r"no study block 'v3' \(markers"):
            block_of(half.format(name="v3"), "v3")


def _replay(name: str):
    return lesson_sweep(SWEEPS_DIR / f"{name}.yaml", replay=True)   # the session's one replay of it


@pytest.mark.slow   # replays the four v3 sweeps and the v4 disclosure sweep (about a minute)
def test_the_claims_files_are_what_a_fresh_replay_finds():
    for name in (*V3, DISCLOSURE):
        real = _replay(name)
        fresh = part_claims(name, sweep_findings(real), first_declared(real))
        assert fresh == read_claims(DATA_DIR / "recorded" / f"{name}_claims.json"), name


@pytest.mark.slow   # replays the answer-path sweep
def test_the_answer_path_sentences_say_what_the_replay_counts():
    real = _replay("real_qwen_hotpotqa_v3_answer")
    rows = real.all_rows()
    rows["label"] = rows.candidate_id.map(real.labels())

    def by(metric: str):
        return rows.pivot_table(index="qid", columns="label", values=metric)

    right, wrong, refused, pipeline = (by(m) for m in ("quality_right", "quality_confident_error", "quality_refused",
                                                       "quality_refused_pipeline"))
    plain, unguarded = "generation.reader=plain", "citations.require_citation=false"
    gains = (right[plain] == 1) & (right["base"] == 0)
    losses = (right[plain] == 0) & (right["base"] == 1)
    refusals = pipeline["base"] == 1
    text = " ".join((REPO / "docs" / "simulate-then-verify.md").read_text(encoding="utf-8").split())
    expected = [
        f"{right[plain].mean():.3f} against {right['base'].mean():.3f} on all 200 ({gains.sum()} questions up, "
        f"{losses.sum()} down)",
        f"of the {gains.sum()} questions the plain reader gains, the pipeline refused {(gains & refusals).sum()} and "
        f"answered {(gains & (wrong['base'] == 1)).sum()} wrong",
        f"The pipeline refuses {pipeline['base'].mean():.1%} of the questions itself",
        f"on those {refusals.sum()} pipeline refusals: the same answer without the guard "
        f"(`citations.require_citation=false`'s reading) would have been right on "
        f"{(refusals & (right[unguarded] == 1)).sum()} and **wrong on {(refusals & (wrong[unguarded] == 1)).sum()}**, "
        f"the plain reader right on {(refusals & (right[plain] == 1)).sum()} and wrong on "
        f"{(refusals & (wrong[plain] == 1)).sum()}",
        f"the plain reader only the model's {refused[plain].mean():.1%}",
    ]
    missing = [e for e in expected if e not in text]
    assert not missing, missing


@pytest.mark.slow   # replays the disclosure sweep
def test_the_disclosure_sentences_say_what_the_replay_counts():
    """docs/simulate-then-verify.md's table of what the model did in each arm of the v4 disclosure study, and the
    numbers of its prose, are the replay's."""
    from rag_lab.experiments.engine.behaviour import decisions_by_round, loop_ends

    real = _replay(DISCLOSURE)
    ends = loop_ends(real).set_index("configuration")
    decisions = decisions_by_round(real).set_index(["configuration", "round"])
    hidden, shown = "base", "disclosure.disclosed=true"
    rows = real.all_rows()
    rows["label"] = rows.candidate_id.map(real.labels())
    strict = rows.groupby("label")["quality_answer_containment_strict"].mean()
    calls = rows.groupby("label")["cost_llm_calls"].mean()
    by_type = rows.groupby(["type", "label"])["cost_rounds"].mean()
    rounds = rows.pivot_table(index="qid", columns="label", values="cost_rounds")

    def both(cell) -> str:
        return f"| {cell(hidden)} | {cell(shown)} |"

    text = " ".join((REPO / "docs" / "simulate-then-verify.md").read_text(encoding="utf-8").split())
    expected = [
        "| mean rounds a question " + both(lambda c: f"{ends.loc[c, 'mean rounds']:.2f}"),
        "| mean LLM calls a question " + both(lambda c: f"{calls[c]:.2f}"),
        "| questions ending after 1 / 2 / 3 / 4 rounds "
        + both(lambda c: " / ".join(str(ends.loc[c, f"rounds {r}"]) for r in (1, 2, 3, 4))),
        "| loops ended by the model's answer / the cap / insufficient "
        + both(lambda c: " / ".join(str(ends.loc[c, f"ended: {k}"]) for k in ("answered", "cap_reached", "insufficient"))),
        "| after round 1, the controller answered / searched again "
        + both(lambda c: f"{decisions.loc[(c, 1), 'answer']} / {decisions.loc[(c, 1), 'retrieve_again']}"),
        "| after round 4, it asked for a fifth round (refused by the cap) "
        + both(lambda c: str(decisions.loc[(c, 4), "retrieve_again"])),
        "| strict answer containment " + both(lambda c: f"{strict[c]:.2f}"),
        f"the sd of the paired round differences is {(rounds[shown] - rounds[hidden]).std():.2f} a question",
        f"as often told that four is the most ({decisions.loc[(shown, 4), 'retrieve_again']} times) as not "
        f"({decisions.loc[(hidden, 4), 'retrieve_again']})",
        f"hiding it saved {ends.loc[shown, 'mean rounds'] - ends.loc[hidden, 'mean rounds']:.2f} rounds "
        f"({ends.loc[shown, 'mean rounds']:.2f} → {ends.loc[hidden, 'mean rounds']:.2f})",
        f"bridge questions {by_type['bridge', hidden]:.2f} → {by_type['bridge', shown]:.2f} rounds, comparison "
        f"questions {by_type['comparison', hidden]:.2f} → {by_type['comparison', shown]:.2f}",
        f"the questions that ran one round are about as many in both arms ({ends.loc[hidden, 'rounds 1']} hidden, "
        f"{ends.loc[shown, 'rounds 1']} disclosed)",
    ]
    missing = [e for e in expected if e not in text]
    assert not missing, missing


class _Declared:
    """The part of SweepResult sweep_findings reads, with one declared claim (8 of 8 differing questions better:
    one-sided exact p = 0.0039) and the family its spec declares."""

    def __init__(self, family: dict | None) -> None:
        from tests.test_findings import TinyResult, flips

        on, off = flips(40, better=8)
        self._tiny = TinyResult({"off": off, "on": on})
        self.qids = [f"q{i}" for i in range(40)]
        self.spec = {"name": "declared", "findings": [{"metric": "quality_f1", "candidate": {"arm": "on"},
                                                       "direction": "above", "claim": "on helps"}],
                     **({"family": family} if family else {})}

    def __getattr__(self, name):
        return getattr(self._tiny, name)

    def reference(self, ref=None):
        return self._tiny.reference(ref)

    def rows(self, candidate_id):
        import pandas as pd

        return pd.DataFrame({"qid": self.qids})


def test_a_sweep_files_family_sets_the_level_its_claims_are_tested_at():
    (default,) = sweep_findings(_Declared(None))
    (strict,) = sweep_findings(_Declared({"alpha": 0.001, "study": "s"}))
    assert default.p == strict.p == pytest.approx(0.5**8)
    assert default.alpha == 0.05 and default.holds
    assert strict.alpha == 0.001 and not strict.holds


def test_a_family_is_declared_but_is_no_part_of_a_runs_identity():
    from rag_lab.experiments.engine.resolved_sweep import ResolvedSweep
    from rag_lab.experiments.engine.sweep import SweepSpec
    from rag_lab.loaders import load_dataset

    evalset = load_dataset("world").evalset

    base = {"name": "tiny", "dataset": "world", "limit": 4, "grid": {"round_cap.max_rounds": [1, 2]},
            "findings": [{"metric": "cost_llm_calls", "candidate": {"round_cap.max_rounds": 1}, "direction": "below"}]}
    plain = ResolvedSweep.build(SweepSpec.model_validate(base), evalset)
    declared = ResolvedSweep.build(SweepSpec.model_validate({**base, "family": {"alpha": 0.01, "study": "s"}}), evalset)
    assert plain.fingerprint == declared.fingerprint
    assert "family" not in plain.describe()["spec"] and declared.describe()["spec"]["family"]["study"] == "s"
    with pytest.raises(ValueError, match="procedure"):
        SweepSpec.model_validate({**base, "family": {"procedure": "holm"}})
