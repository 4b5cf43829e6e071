"""The lessons' claims are declared once, in their sweep files (``sweeps/lessons/``): every file is one record of
:mod:`lessons.settings` and a valid sweep, its findings compare its two arms, and no claim sentence is typed again in
the course's Python (notebooks, their helpers, tools/course) — the notebooks read it with ``robustness.claim``."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessons.robustness import HEADLINE_FINDINGS
from lessons.settings import LESSON_SETTINGS, LESSON_SWEEPS, LessonSetting
from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.sweep_file import load_sweep_spec

ROOT = Path(__file__).resolve().parents[1]
COURSE_PYTHON = sorted([*(ROOT / "notebooks").rglob("*.py"), *(ROOT / "tools" / "course").rglob("*.py")])


def test_every_lesson_sweep_file_is_one_settings_record_and_a_valid_sweep():
    files = sorted(LESSON_SWEEPS.glob("*.yaml"))
    assert len(files) == len(LESSON_SETTINGS) == 23
    for path in files:
        spec = load_sweep_spec(path)
        assert spec.name == path.stem and spec.findings, path.name
        setting = LessonSetting.read(*_notebook_and_part(path.stem))
        assert setting in LESSON_SETTINGS.values(), path.name
        for claim in spec.findings:   # each finding compares the file's two arms: the candidate, then the reference
            assert (claim.candidate, claim.reference) == (dict(setting.candidate), dict(setting.reference)), path.name
    assert [f.key for f in HEADLINE_FINDINGS] == [c.name for s in LESSON_SETTINGS.values() for c in s.findings]


def _notebook_and_part(stem: str) -> tuple[str, str]:
    notebooks = sorted((p.stem for p in (ROOT / "notebooks").glob("[01][0-9]_*.py")), key=len, reverse=True)
    notebook = next(n for n in notebooks if stem == n or stem.startswith(f"{n}_"))
    return notebook, stem.removeprefix(notebook).removeprefix("_")


def test_no_claim_sentence_is_typed_again_in_the_course_python():
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in COURSE_PYTHON}
    for f in HEADLINE_FINDINGS:
        typed = [name for name, text in texts.items() if f.claim in text]
        assert not typed, f"the claim of {f.key} is typed in {typed}; it is declared once, in sweeps/lessons/"


def test_a_lesson_sweep_that_is_not_two_arms_on_the_world_or_names_no_claim_is_refused(tmp_path):
    good = (LESSON_SWEEPS / "04_hyde.yaml").read_text(encoding="utf-8")
    (tmp_path / "04_hyde.yaml").write_text(good.replace("dataset: world", "dataset: hotpotqa_sample"))
    with pytest.raises(ConfigError, match="two arms .* on the world's test questions"):
        LessonSetting.read("04_hyde", folder=tmp_path)
    (tmp_path / "04_hyde_x.yaml").write_text(good.replace("  - name: hyde_recall\n    claim:", "  - claim:"))
    from lessons.robustness import _headlines

    with pytest.raises(ConfigError, match="has a name and a claim"):
        _headlines(LessonSetting.read("04_hyde", "x", folder=tmp_path))
