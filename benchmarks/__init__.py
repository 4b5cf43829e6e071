"""Speed and memory benchmarks, run by hand: ``python -m benchmarks [--quick] [--sections NAME ...]``.

A section is a module ``benchmarks/bench_<name>.py`` that defines ``run(quick: bool, work: Path) ->
Section``; the runner (``benchmarks/__main__.py``) discovers every such module, runs the chosen
sections one after the other in one process, and writes one JSON and one markdown table. Modules
without ``run`` stay plain scripts (``python benchmarks/bench_x.py``) and are listed as such.

A :class:`Ratio` is two numbers measured side by side in the same run (PyTorch vs ONNX, 1 vs 8
workers, cold vs warm, HNSW vs exact) and their ratio, with the target it is held to; a
:class:`Measure` is one number with an optional bound. Nothing here asserts: a missed target is
reported as missed.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import resource
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Ratio:
    """``candidate`` over ``baseline`` (or the inverse when lower is better, e.g. seconds), so a ratio
    above 1 always means the candidate is better; ``target`` is the least ratio wanted."""

    name: str
    baseline: str
    candidate: str
    baseline_value: float
    candidate_value: float
    unit: str
    higher_is_better: bool = True
    target: float | None = None
    note: str = ""

    @property
    def ratio(self) -> float:
        a, b = self.baseline_value, self.candidate_value
        if self.higher_is_better:
            return b / a if a else float("inf")
        return a / b if b else float("inf")

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.ratio >= self.target

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio, "met": self.met}


@dataclass
class Measure:
    """One measured number; ``at_most``/``at_least`` is its target, if any."""

    name: str
    value: float
    unit: str
    at_most: float | None = None
    at_least: float | None = None
    note: str = ""

    @property
    def met(self) -> bool | None:
        if self.at_most is not None:
            return self.value <= self.at_most
        if self.at_least is not None:
            return self.value >= self.at_least
        return None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "met": self.met}


@dataclass
class Section:
    """What one benchmark module measured."""

    name: str
    ratios: list[Ratio] = field(default_factory=list)
    measures: list[Measure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "seconds": self.seconds, "notes": self.notes,
                "ratios": [r.to_dict() for r in self.ratios], "measures": [m.to_dict() for m in self.measures]}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(wall seconds, result) of ``fn()``."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


@contextmanager
def stopwatch() -> Iterator[list[float]]:
    """``with stopwatch() as t: ...`` then ``t[0]`` is the wall seconds of the block."""
    box: list[float] = [0.0]
    start = time.perf_counter()
    try:
        yield box
    finally:
        box[0] = time.perf_counter() - start


def _burn(stop: Any) -> None:  # a CPU-bound neighbour
    while not stop.is_set():
        sum(i * i for i in range(10_000))


@contextmanager
def busy_neighbours(n: int) -> Iterator[int]:
    """``n`` busy-loop processes running for the duration of the block (one per core is a fully loaded
    machine); yields ``n``. The threads benchmarks measure "idle" with 0 and "busy" with 2."""
    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=_burn, args=(stop,), daemon=True) for _ in range(n)]
    for p in burners:
        p.start()
    try:
        yield n
    finally:
        stop.set()
        for p in burners:
            p.join(5)


def peak_rss_mb() -> float:
    """This process's peak resident set size so far, in MB: ``VmHWM`` of ``/proc/self/status`` (its own
    address space; ``ru_maxrss`` would carry the parent's peak into a child across fork and exec)."""
    with contextlib.suppress(OSError), open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> dict[str, Any]:
    """Cores, load and versions: the header of a benchmark table."""
    import platform

    info: dict[str, Any] = {"cores": os.cpu_count(), "load_avg_1_5_15": [round(x, 2) for x in os.getloadavg()],
                            "python": platform.python_version(), "platform": platform.platform()}
    from importlib.metadata import PackageNotFoundError, version

    for name in ("torch", "onnxruntime", "hnswlib", "bm25s", "numpy"):
        try:
            info[name] = version(name)
        except PackageNotFoundError:
            info[name] = None
    return info
