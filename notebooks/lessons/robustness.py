"""Robustness of the headline findings: the registry and the shipped table a notebook reads.
:data:`HEADLINE_FINDINGS` registers the findings notebooks 01–13 assert and what each guard that refuses buys on
unanswerable questions, read from the lessons' sweep files (``sweeps/lessons/``, through the records of
:mod:`lessons.settings`): each file's ``findings:`` declare the claim — its sentence, metric, arms, direction or
equivalence margin, kind and name — once, and the file its base, model and world questions; a notebook states the
sentence with :func:`claim`. The table that re-tests every one on the world, the real samples (or their
unanswerable twins) and two simulator seeds ships as :data:`SHIPPED_TABLE`; a notebook quotes its row with
:func:`quote`. The course's tooling writes it (``python -m tools.course robustness``, outside the library);
``tests/test_robustness.py`` fails when it is stale against the simulator. The method: docs/decisions.md, "The
robustness table"."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from lessons import settings
from lessons.settings import LessonSetting
from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.candidate_configs import changes_label
from rag_lab.figures.where_grid import STATUSES, cell_status
from rag_lab.paths import DATA_DIR
from rag_lab.stats.paired import interval_text
from rag_lab.stats.significance import p_text

__all__ = ["CELL_DATASETS", "GUARD_DATASETS", "HEADLINE_FINDINGS", "HeadlineFinding", "RobustnessTable", "SHIPPED_TABLE", "SEEDS",
           "check_current", "claim", "finding", "load_table", "quote"]

Direction = Literal["above", "below", "none"]
#: The datasets a finding is re-run on unless it names its own (shipped names).
CELL_DATASETS = ("world", "hotpotqa_sample", "musique_sample")
#: The datasets of a claim on unanswerable questions: the world (its ``unanswerable`` questions) and the real
#: samples' unanswerable twins (:mod:`rag_lab.loaders.twins`; the flagged ones are kept out of the test).
GUARD_DATASETS = ("world", "hotpotqa_sample_twins", "musique_sample_twins")
#: Simulator seeds of every cell (seed 0 is the notebooks' own).
SEEDS = (0, 1)
#: Questions of each real sample or its twins (its first ones, every type).
REAL_LIMIT = 60
#: Questions of each real sample for a no-change claim (enough to decide one; the samples hold 200 and 100).
NO_CHANGE_LIMIT = 200
#: The two families of the table: claimed differences, and no-change claims.
FAMILIES = ("difference", "no change")
ALPHA = 0.05
#: The shipped table (JSON) and its markdown beside it.
SHIPPED_TABLE = DATA_DIR / "robustness.json"
SHIPPED_MARKDOWN = DATA_DIR / "robustness.md"
#: The command that regenerates the shipped files.
COMMAND = "python -m tools.course robustness"


@dataclass(frozen=True)
class HeadlineFinding:
    """One notebook's finding as its sweep file declares it (``key``: the finding's ``name``), as the robustness
    table re-runs it: ``candidate`` against ``reference`` (dotted
    pipeline settings over ``base``) on ``metric``, claimed ``direction`` (``above``/``below``: the candidate's
    metric is higher/lower; ``none``: within ±``margin``); ``knobs``: the simulator knob overrides of the
    notebook (over ``profile``); ``world_types`` / ``world_per_type``: the notebook's world questions (test
    split); ``kind`` as the file declares it (:mod:`rag_lab.experiments.engine.findings`); ``datasets``: the
    datasets of its cells (default :data:`CELL_DATASETS`; a claim on unanswerable questions: :data:`GUARD_DATASETS`)."""

    key: str
    notebook: str
    claim: str
    metric: str
    candidate: Mapping[str, Any]
    reference: Mapping[str, Any]
    direction: Direction
    kind: str = "measured"
    margin: float | None = None
    base: Mapping[str, Any] = field(default_factory=dict)
    knobs: Mapping[str, float] = field(default_factory=dict)
    profile: str = "typical"
    world_types: tuple[str, ...] | None = None
    world_per_type: int | None = None
    datasets: tuple[str, ...] = CELL_DATASETS

    def __post_init__(self) -> None:
        if (self.direction == "none") != (self.margin is not None):
            raise ConfigError(f"{self.key}: a margin goes with direction 'none', and only with it")
        if not self.datasets or len(set(self.datasets)) != len(self.datasets):
            raise ConfigError(f"{self.key}: datasets must name at least one dataset, each once; got {self.datasets!r}")

    def sweep(self) -> dict[str, Any]:
        """The lesson's sweep stating this finding alone, on the world's questions of the finding (every test
        question of its types for a no-change claim): what each of its cells re-runs."""
        claim: dict[str, Any] = {"metric": self.metric, "candidate": dict(self.candidate),
                                 "reference": dict(self.reference), "direction": self.direction, "claim": self.claim,
                                 "kind": self.kind, "name": self.key}
        if self.margin is not None:
            claim["margin"] = self.margin
        return {"name": f"robustness_{self.key}", "dataset": "world", "split": "test",
                "types": list(self.world_types) if self.world_types else None, "per_type": self.world_per_type,
                "base": dict(self.base), "backend": {"kind": "sim", "profile": self.profile, "knobs": dict(self.knobs)},
                "grid": [{k: [v] for k, v in arm.items()} for arm in (self.reference, self.candidate)],
                "seeds": [0], "findings": [claim]}

    def real_limit(self, real_limit: int) -> int:
        """Questions of a real sample for this finding: ``real_limit``, or at least :data:`NO_CHANGE_LIMIT` for a
        no-change claim (enough to decide one)."""
        return real_limit if self.direction != "none" else max(real_limit, NO_CHANGE_LIMIT)

    def spec(self, dataset: str, seed: int, real_limit: int) -> dict[str, Any]:
        """The two-candidate sweep of one cell (:func:`rag_lab.experiments.robustness.cell_spec`)."""
        from rag_lab.experiments.robustness import cell_spec

        return cell_spec(self.sweep(), dataset, seed, self.real_limit(real_limit))

    @property
    def family(self) -> str:
        """The table's family this finding's cells are corrected in (:data:`FAMILIES`)."""
        return "no change" if self.direction == "none" else "difference"


def _headlines(setting: LessonSetting) -> tuple[HeadlineFinding, ...]:
    """The findings the sweep file of ``setting`` declares (:mod:`lessons.settings`, the record the notebook reads
    too): its arms, base, model and world questions — every test question of its types for a no-change claim, which
    needs many questions to be decidable; a claim on the world's unanswerable questions runs on
    :data:`GUARD_DATASETS`, every other on :data:`CELL_DATASETS`."""
    datasets = GUARD_DATASETS if setting.types == ("unanswerable",) else CELL_DATASETS
    if not setting.findings or not all(c.name and c.claim for c in setting.findings):
        raise ConfigError(f"{setting.notebook}: each finding of a lesson's sweep file has a name and a claim")
    return tuple(HeadlineFinding(c.name, setting.notebook, c.claim, c.metric, dict(c.candidate), dict(c.reference),
                                 c.direction, c.kind, c.margin, dict(setting.base), dict(setting.knobs), setting.profile,
                                 setting.types, setting.per_type if c.direction != "none" else None, datasets)
                 for c in setting.findings)


#: The headline findings of notebooks 01–13 (each notebook's asserted claims, as its sweep files declare them), then
#: what each guard that refuses buys on unanswerable questions (the ``guard_`` rows: the world's unanswerable test
#: questions and the real samples' twins), in the order of :data:`lessons.settings.LESSON_SETTINGS`. The
#: controller's own INSUFFICIENT has no row: no setting switches it alone (docs/decisions.md, "The robustness table").
HEADLINE_FINDINGS: tuple[HeadlineFinding, ...] = tuple(f for s in settings.LESSON_SETTINGS.values() for f in _headlines(s))


def finding(key: str) -> HeadlineFinding:
    """The headline finding ``key`` of :data:`HEADLINE_FINDINGS`."""
    for f in HEADLINE_FINDINGS:
        if f.key == key:
            return f
    raise ConfigError(f"no headline finding {key!r}; known: {', '.join(f.key for f in HEADLINE_FINDINGS)}")


def claim(key: str) -> str:
    """The sentence of headline finding ``key``: its notebook states it as its claim (``paired_finding(...,
    claim=robustness.claim(key))``), so the sentence is typed once, in the lesson's sweep file."""
    return finding(key).claim


# --- the table -----------------------------------------------------------------------------------------


@dataclass
class RobustnessTable:
    """The table as written to JSON: ``findings`` (each a :class:`HeadlineFinding`'s fields plus ``cells``,
    one per dataset × seed, and ``summary``) and how it was made."""

    sim_version: str
    findings: list[dict[str, Any]]
    datasets: list[str]
    seeds: list[int]
    real_limit: int
    alpha: float
    seconds: float
    command: str = COMMAND
    #: the real-model columns' labels (written by ``tools/course/robustness_recorded.py``); each row's cells for
    #: them are under ``recorded``
    recorded: list[str] = field(default_factory=list)
    #: the contrasts the recorded studies declared, one row each, their cells the studies' verdicts
    #: (``tools/course/robustness_study.py``)
    studies: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RobustnessTable:
        try:
            return cls(**{k: data[k] for k in ("sim_version", "findings", "datasets", "seeds", "real_limit", "alpha",
                                               "seconds")}, command=data.get("command", COMMAND),
                       recorded=list(data.get("recorded", [])), studies=list(data.get("studies", [])))
        except KeyError as exc:
            raise ConfigError(f"not a robustness table: missing {exc}") from None

    def row(self, key: str) -> dict[str, Any]:
        """The finding row or study row ``key``."""
        for f in self.findings + self.studies:
            if f["key"] == key:
                return f
        raise ConfigError(f"the robustness table has no finding {key!r}; it holds "
                          f"{', '.join(f['key'] for f in self.findings + self.studies)}")


# --- reading and quoting the shipped table -------------------------------------------------------------


def load_table(path: str | Path = SHIPPED_TABLE) -> RobustnessTable:
    """The robustness table in ``path`` (default: the shipped one)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the robustness table ({exc.strerror or exc}); "
                          f"write it with `{COMMAND}`") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON ({exc})") from None
    return RobustnessTable.from_dict(data)


def check_current(table: RobustnessTable) -> None:
    """Raise :class:`ConfigError` when ``table`` was made with another simulator than the current one."""
    from rag_lab.llm.simulator import SIM_VERSION

    if table.sim_version != SIM_VERSION:
        raise ConfigError(f"the robustness table was made with simulator {table.sim_version}, the current one is "
                          f"{SIM_VERSION}: regenerate it with `{COMMAND}`")


def cell_verdict(row: Mapping[str, Any], cell: Mapping[str, Any]) -> tuple[str, str]:
    """(mark, words) of a cell: its status in the where-it-holds grid (:func:`~rag_lab.figures.where_grid.cell_status`)."""
    status = cell_status(row, cell)
    return STATUSES[status][0], status


def adjusted_text(cell: Mapping[str, Any]) -> str:
    """A cell's corrected p: ``Holm 0.037`` within the table's family, or a study's declared claim's p within its
    family and Holm's over its study."""
    if "p_family" in cell:
        study = f"; Holm over the study {p_text(cell['p_study'])}" if "p_study" in cell else ""
        return f"{p_text(cell['p_family'])} within its family: {cell['correction']}{study}"
    return f"Holm {p_text(cell['p_holm'])}"


def measured_as_text(cell: Mapping[str, Any]) -> str:
    """`` [measured as …; the study's declared claim `key`]`` for a cell measured on other arms than its row's."""
    if not cell.get("measured_as"):
        return ""
    declared = f"; the declared claim of study row {cell['declared']}" if cell.get("declared") else ""
    return f" [measured as {cell['measured_as']}{declared}]"


def _cell_text(row: Mapping[str, Any], cell: Mapping[str, Any]) -> str:
    mark = cell_verdict(row, cell)[1]
    return (f"{interval_text(cell)}, p={p_text(cell['p'])} ({adjusted_text(cell)}, n={cell['n']}): {mark}"
            f"{detectable_text(cell)}{measured_as_text(cell)}")


def detectable_text(cell: Mapping[str, Any], table_cell: bool = False) -> str:
    """``; detectable: |Δ| ≥ 0.083 (…)`` for a cell that does not hold ('' for one that does); ``table_cell``
    escapes the bars of ``|Δ|`` for a markdown table."""
    found = cell.get("detectable")
    text = f"; {found['text']}" if found else ""
    return text.replace("|", "\\|") if table_cell else text


def quote(key: str, table: RobustnessTable | None = None) -> str:
    """Where finding ``key`` holds and where it does not, in one paragraph a notebook prints: for each dataset,
    its seeds' Δ [interval], p (Holm-adjusted) and verdict; from the shipped table unless ``table`` is given."""
    table = table if table is not None else load_table()
    row = table.row(key)
    if "study" in row:
        return _study_quote(row)
    held = [f"{c['dataset']} s{c['seed']}" for c in row["cells"] if c["holds"]]
    failed = [f"{c['dataset']} s{c['seed']}" for c in row["cells"] if not c["holds"]]
    lines = [f"{row['notebook']} · {row['claim']} ({row['metric']}, candidate "
             f"{settings_text(row['candidate'])} vs {settings_text(row['reference'])}): holds in "
             f"{row['summary']['hold']} of {row['summary']['cells']} cells, sign agrees in "
             f"{row['summary']['agree']} ({table.sim_version})."]
    lines += [f"  {c['dataset']} seed {c['seed']} (n={c['n']}): {_cell_text(row, c)}" for c in row["cells"]]
    lines.append(f"  holds: {', '.join(held) or 'nowhere'}; does not hold: {', '.join(failed) or 'none'}")
    for c in row.get("recorded", []):
        text = _cell_text(row, c) if c["status"] == "tested" else f"{c['status']} ({c['why']})"
        lines.append(f"  {c['dataset']}: {text}")
    return "\n".join(lines)


def _study_quote(row: Mapping[str, Any]) -> str:
    """:func:`quote` of a study row: each cell its part's declared claim, as the study tested it."""
    lines = [f"study {row['study']} · {row['claim']} ({row['metric']}, {settings_text(row['candidate'])} vs "
             f"{settings_text(row['reference'])}; declared, tested outside the pilot)"]
    for c in row["recorded"]:
        head = f"  {c['dataset']}: {c['part']} claim {c['index']}"
        lines.append(f"{head}: {_cell_text(row, c)}{provisional_text(c)}" if c["status"] == "tested" else
                     f"{head}: {c['status']} ({c['why']})")
    return "\n".join(lines)


def provisional_text(cell: Mapping[str, Any]) -> str:
    """`` (provisional: …)`` for a cell of a study still being recorded, else ''."""
    return f" (provisional: {cell['provisional']})" if cell.get("provisional") else ""


def settings_text(settings: Mapping[str, Any]) -> str:
    """Dotted settings as a label: ``round_cap.max_rounds=1``."""
    return changes_label(settings)
