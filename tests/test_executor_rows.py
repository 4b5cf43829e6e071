"""Executors are rows of :data:`rag_lab.experiments.engine.executors.EXECUTORS`: :func:`execute` runs a unit through
its row, so a registered executor runs without touching ``execute``, and ``rag-lab sweep --executor`` offers (and
explains) exactly the registered rows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rag_lab.cli import build_parser
from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.executors import EXECUTORS, Executor, execute


class _State:
    """Stands in for a WorkerState: a unit's outcomes are the unit itself, tagged."""

    def run(self, unit: str) -> list[str]:
        return [f"ran {unit}"]


def _backwards(units, context, local_state, workers, address) -> Iterator[list[str]]:
    for unit in reversed(units):
        yield local_state.run(unit)


@pytest.fixture
def backwards() -> Iterator[str]:
    EXECUTORS.add("backwards", Executor(_backwards, True, "the units last to first (a test's toy)"))
    yield "backwards"
    EXECUTORS.remove("backwards")


def test_a_registered_executor_runs_through_its_row(backwards: str) -> None:
    outcomes = list(execute(["a", "b", "c"], None, _State(), executor=backwards))  # type: ignore[arg-type]
    assert outcomes == [["ran c"], ["ran b"], ["ran a"]]


def test_an_in_process_row_needs_this_process_state(backwards: str) -> None:
    with pytest.raises(ConfigError, match="the backwards executor needs this process's WorkerState"):
        list(execute(["a"], None, None, executor=backwards))  # type: ignore[arg-type]


def test_an_unknown_executor_names_the_rows() -> None:
    with pytest.raises(ConfigError, match="unknown executor 'gpu'; choose one of serial, threads, processes, dask"):
        list(execute(["a"], None, _State(), executor="gpu"))  # type: ignore[arg-type]


def _executor_option():
    sweep = next(a for a in build_parser()._subparsers._group_actions[0].choices.values()  # type: ignore[union-attr]
                 if a.prog.endswith(" sweep"))
    return next(a for a in sweep._actions if "--executor" in a.option_strings)


def test_the_cli_choices_and_help_are_the_rows(backwards: str) -> None:
    option = _executor_option()
    assert list(option.choices) == [*EXECUTORS.names()] and "backwards" in option.choices
    assert all(f"{name}: {row.what}" in option.help for name, row in EXECUTORS.items())
