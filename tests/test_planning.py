"""The study planner (rag_lab.experiments.planning, ``rag-lab plan``): the questions it says a claim needs do reach
80% power — by the exact power of the lab's test and in a simulation of studies of that size drawn from the
pilot's discordance — and the effect it says a size detects is the one the claim's own test reaches."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.errors import ConfigError
from rag_lab.experiments.planning import plan_claim, plan_study, power_at
from rag_lab.stats import power as pw
from rag_lab.stats.significance import difference_p


class Pilot:
    """The part of SweepResult the planner reads: configs with per-question values of one metric."""

    def __init__(self, **arms: list[float]) -> None:
        self.values = {k: np.asarray(v, dtype=float)[:, None] for k, v in arms.items()}

    def reference(self, ref):
        key = "base" if ref is None else ref if isinstance(ref, str) else ref["arm"]
        return {"config_id": key, "candidate_id": key}

    def paired_values(self, metric, candidate, reference=None):
        return self.values[candidate], self.values[reference]


def _pilot(n: int, wins: int, losses: int) -> Pilot:
    base = np.zeros(n)
    base[wins:wins + losses] = 1.0
    cand = np.zeros(n)
    cand[:wins] = 1.0
    return Pilot(base=base.tolist(), cap1=cand.tolist())


def test_the_questions_a_binary_claim_needs_reach_its_power_exactly_and_in_simulation():
    pilot = _pilot(80, 1, 3)          # the v2 HotpotQA pilot's cap-1 contrast: +1 / −3 of 80
    plan = plan_claim(pilot, "quality_answer_containment_strict", {"arm": "cap1"}, direction="below", target=0.05,
                      claim="cap 1 loses answers", sizes=(200,))
    assert (plan.pilot_n, plan.discordance, plan.binary) == (80, 0.05, True)
    assert plan.pilot_delta == pytest.approx(-0.025)
    d = pw.Differences(80, 4, 1.0, 0.0, True)
    assert power_at(plan.needed, d, "below", 0.05, 0.05) >= 0.8 > power_at(int(plan.needed * 0.9), d, "below", 0.05, 0.05)
    assert plan.pilot_power == pytest.approx(pw.sign_test_power(80, *pw.effect_probabilities(-0.05, 0.05),
                                                                0.05, "less"))
    assert plan.detectable_at[200] == pytest.approx(pw.sign_detectable_effect(200, 0.05, alternative="less"))
    # studies of the planned size, drawn from the planned effect, are shown 80% of the time by the lab's own test
    rng = np.random.default_rng(11)
    p_win, p_loss = pw.effect_probabilities(-0.05, 0.05)
    draws = rng.random((2000, plan.needed))
    studies = np.where(draws < p_win, 1.0, np.where(draws < p_win + p_loss, -1.0, 0.0))
    shown = np.mean([difference_p(s, "less")[0] <= 0.05 for s in studies])
    assert shown >= 0.8 - 3 * np.sqrt(0.16 / 2000)


@pytest.mark.slow   # out of the quick loop: exact TOST power over many sizes
def test_a_no_change_claim_is_planned_for_its_margin():
    pilot = _pilot(80, 1, 3)
    plan = plan_claim(pilot, "quality_answer_containment_strict", {"arm": "cap1"}, direction="none", margin=0.06,
                      sizes=(200,), claim="cap 1 changes no answer")
    assert plan.method == "exact TOST power" and plan.target == 0.06
    assert pw.tost_power(plan.needed, 0.025, 0.025, 0.06) >= 0.8
    assert plan.detectable_at[200] == pytest.approx(pw.tost_detectable_margin(200, 0.05), abs=1e-3)
    with pytest.raises(ConfigError, match="margin"):
        plan_claim(pilot, "quality_answer_containment_strict", {"arm": "cap1"}, direction="none")


def test_a_count_is_planned_by_a_simulation_of_its_permutation_test_and_a_family_by_its_correction():
    rng = np.random.default_rng(0)
    base = rng.poisson(3, 60).astype(float)
    cap1 = base - rng.integers(0, 2, 60)
    pilot = Pilot(base=base.tolist(), cap1=cap1.tolist())
    claims = [{"metric": "cost_llm_calls", "candidate": {"arm": "cap1"}, "direction": "below", "claim": "saves calls"}]
    (fixed,) = plan_study(pilot, claims, sizes=(100,))
    (holm,) = plan_study(pilot, claims * 1, correction="holm", sizes=(100,))
    assert fixed.method == "simulated permutation-test power" and fixed.alpha == holm.alpha == 0.05
    two = plan_study(pilot, claims * 2, correction="holm", sizes=(100,))
    assert two[0].alpha == 0.025 and two[0].detectable_at[100] > fixed.detectable_at[100]
    assert two[0].needed > fixed.needed
    # the planned size reaches 80% power under the lab's own test, drawn as the plan models the study (the pilot's
    # share and sizes of differences, signs tilted to the pilot's mean difference)
    from tests.test_power import sign_model_sample

    sizes = np.abs(cap1 - base)
    draws = np.random.default_rng(1)
    shown = []
    for i in range(300):
        x = -sign_model_sample(sizes, fixed.needed, abs(fixed.pilot_delta), draws)
        shown.append(difference_p(x, "less", method="permutation", n_permutations=2000, seed=i)[0] <= 0.05)
    assert np.mean(shown) >= 0.8 - 0.06
    with pytest.raises(ConfigError, match="no difference"):
        plan_claim(Pilot(base=base.tolist(), cap1=base.tolist()), "cost_llm_calls", {"arm": "cap1"}, direction="below")


def test_rag_lab_plan_plans_a_declared_family_from_a_pilot_run(tmp_path, capsys):
    from rag_lab.cli import main
    from rag_lab.experiments import run_sweep

    pilot = {"name": "pilot", "dataset": "world", "split": "test", "types": ["bridge"], "per_type": 8,
             "base": {"round_cap.max_rounds": 3}, "grid": {"round_cap.max_rounds": [1, 3]},
             "findings": [{"metric": "cost_llm_calls", "candidate": {"round_cap.max_rounds": 1}, "direction": "below",
                           "claim": "cap 1 saves calls"}]}
    run_sweep(pilot, tmp_path / "pilot", progress="quiet")
    assert main(["plan", str(tmp_path / "pilot"), "--n", "100"]) == 0
    out = capsys.readouterr().out
    assert "fixed-sequence family of 1 at α=0.05" in out and "1. cap 1 saves calls (cost_llm_calls, below" in out
    assert "questions for 80%" in out and "detectable effect at n=100" in out
    assert main(["plan", str(tmp_path / "pilot"), "--delta", "1=x"]) == 2     # a clear error, not a traceback
    assert "--delta takes I=DELTA" in capsys.readouterr().err


def test_rag_lab_plan_records_the_pilot_into_the_study_file_once(tmp_path, capsys):
    """The pilot's questions go into the sweep file as its pilot:, which every declared claim's test then leaves
    out; a second recording is refused, so a pilot cannot be re-chosen after the data."""
    import yaml

    from rag_lab.cli import main
    from rag_lab.experiments import run_sweep
    from rag_lab.experiments.engine.findings import sweep_findings
    from rag_lab.experiments.engine.sweep_file import load_sweep_spec

    common = {"dataset": "world", "split": "test", "types": ["bridge"], "base": {"round_cap.max_rounds": 3},
              "grid": {"round_cap.max_rounds": [1, 3]},
              "findings": [{"metric": "cost_llm_calls", "candidate": {"round_cap.max_rounds": 1},
                            "direction": "below", "claim": "cap 1 saves calls"}]}
    run_sweep({"name": "pilot", "per_type": 6, **common}, tmp_path / "pilot", progress="quiet")
    study = tmp_path / "study.yaml"
    study.write_text("# the study\n" + yaml.safe_dump({"name": "study", "per_type": 10, **common}))
    assert main(["plan", str(tmp_path / "pilot"), "--findings", str(study), "--record-pilot", str(study)]) == 0
    spec = load_sweep_spec(study)
    assert len(spec.pilot) == 6 and study.read_text().startswith("# the study\n")
    result = run_sweep(spec, tmp_path / "study", progress="quiet")
    (finding,) = sweep_findings(result)
    assert finding.n == 4                                        # the 10 questions but the pilot's 6
    capsys.readouterr()
    assert main(["plan", str(tmp_path / "pilot"), "--findings", str(study), "--record-pilot", str(study)]) == 2
    assert "already names its pilot" in capsys.readouterr().err
