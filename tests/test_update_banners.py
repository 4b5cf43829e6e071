"""scripts/update_banners.py: a banner quoting a robustness row's where-it-holds words gets the regenerated
table's words in their place, re-wrapped, the prose around them untouched; a banner that no longer carries the
old words is named, not silently left stale."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path

from lessons.robustness import SHIPPED_TABLE, load_table
from tools.course.banners import where_line

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("update_banners", REPO / "scripts" / "update_banners.py")
update_banners = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(update_banners)


def _notebook(path: Path, words: str) -> None:
    lines = ["# %% [markdown]", "# # 99 · A lesson", "#", "# > **Finding type:** measured.", "# >",
             *("# > " + w for w in textwrap.wrap(f"**Where it holds:** the saving: {words} — a note.", 100)),
             "#", "# Prose after the banner.", "", "# %%", 'robustness.quote("round_cap_calls")', ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def test_the_old_words_are_replaced_by_the_new_and_rewrapped(tmp_path):
    old_table = load_table()
    data = json.loads(SHIPPED_TABLE.read_text(encoding="utf-8"))
    row = next(f for f in data["findings"] if f["key"] == "round_cap_calls")
    row["cells"][1]["holds"] = False  # world, seed 1 no longer holds (its sign still agrees)
    (tmp_path / "new.json").write_text(json.dumps(data), encoding="utf-8")
    new_table = load_table(tmp_path / "new.json")
    old, new = where_line("round_cap_calls", old_table), where_line("round_cap_calls", new_table)
    assert old != new and new.startswith("world ✓~,")

    path = tmp_path / "99_lesson.py"
    _notebook(path, old)
    assert update_banners.update(path, old_table, new_table, ["round_cap_calls"]) == []
    text = path.read_text(encoding="utf-8")
    banner = " ".join(line[4:] for line in text.splitlines() if line.startswith("# > "))
    assert new in banner and old not in banner and banner.endswith("— a note.")
    assert all(len(line) <= update_banners.WIDTH for line in text.splitlines())
    assert "# Prose after the banner." in text and 'robustness.quote("round_cap_calls")' in text

    _notebook(path, "words a writer changed by hand")
    assert update_banners.update(path, old_table, new_table, ["round_cap_calls"]) == ["round_cap_calls"]


def test_a_row_new_to_the_table_is_left_to_the_writer(tmp_path):
    """A key the old table lacks has no old words: nothing is replaced, nothing fails, the banner is left as is."""
    data = json.loads(SHIPPED_TABLE.read_text(encoding="utf-8"))
    data["findings"] = [f for f in data["findings"] if f["key"] != "round_cap_calls"]
    (tmp_path / "old.json").write_text(json.dumps(data), encoding="utf-8")
    path = tmp_path / "99_lesson.py"
    _notebook(path, "words for a row the old table did not have")
    before = path.read_text(encoding="utf-8")
    assert update_banners.update(path, load_table(tmp_path / "old.json"), load_table(), ["round_cap_calls"]) == []
    assert path.read_text(encoding="utf-8") == before
