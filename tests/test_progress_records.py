"""Progress travels as one record: the command line's tqdm bar and any ``on_progress`` subscriber get the same
:class:`Progress` records from a sweep's counter, and one configuration's questions send the same kind."""

from __future__ import annotations

from rag_lab.experiments.engine.progress import Progress, ProgressBar, SweepProgress, per_question


def test_the_bar_and_a_subscriber_get_the_same_records(capfd):
    seen: list[Progress] = []
    with SweepProgress("small", total_pairs=4, total_runs=2, remaining={"a": 2, "b": 1},
                       callbacks=[ProgressBar(), seen.append]) as counter:
        counter.update("a", {"cost_llm_calls": 2, "spent_llm_calls": 1})
        counter.update("a", {"cost_llm_calls": 2, "spent_llm_calls": 1})
        counter.update("b", {"cost_llm_calls": 0})
    assert [(r.done, r.total, r.runs_done, r.total_runs, r.finished) for r in seen] == [
        (1, 4, 0, 2, False), (2, 4, 0, 2, False), (3, 4, 1, 2, False), (4, 4, 2, 2, False), (4, 4, 2, 2, True)]
    assert seen[-1].cache_hit_rate == 0.5
    err = capfd.readouterr().err   # the bar drew the last record
    assert seen[-1].postfix() == "candidates 2/2, cache hits 50%"
    assert "sweep small" in err and "4/4" in err and seen[-1].postfix() in err


def test_one_configurations_questions_send_the_same_records():
    seen: list[Progress] = []
    progress = per_question([seen.append], "eval", "world")
    for done in (1, 2, 3):
        progress(done, 3)
    assert [(r.label, r.name, r.done, r.total, r.finished) for r in seen] == [
        ("eval", "world", 1, 3, False), ("eval", "world", 2, 3, False), ("eval", "world", 3, 3, True)]
    assert seen[-1].postfix() == ""   # no candidates or cache hits to count
