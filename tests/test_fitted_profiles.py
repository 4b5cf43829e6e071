"""Every shipped fitted profile states each estimated knob inside its own interval (issue 50: the MuSiQue
disclosure profile printed budget_thrift 0.000 [0.184, 1.000])."""

from __future__ import annotations

import pytest
import yaml

from rag_lab.paths import DATA_DIR

PROFILES = sorted((DATA_DIR / "recorded").glob("*profile.yaml"))


@pytest.mark.parametrize("path", PROFILES, ids=[p.name for p in PROFILES])
def test_every_estimate_lies_inside_its_interval(path):
    knobs = yaml.safe_load(path.read_text(encoding="utf-8"))["calibration"]["knobs"]
    outside = {name: (k["value"], k["lo"], k["hi"]) for name, k in knobs.items()
               if k.get("status") == "estimated" and not k["lo"] - 1e-9 <= k["value"] <= k["hi"] + 1e-9}
    assert not outside, f"{path.name}: estimates outside their intervals {outside}"


def test_there_are_fitted_profiles_to_check():
    assert len(PROFILES) >= 5
