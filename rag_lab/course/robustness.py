"""Robustness of the headline findings as a table (``rag-lab robustness``). :data:`HEADLINE_FINDINGS` registers
the findings notebooks 01–13 assert (each notebook's contrast, metric and claimed direction or equivalence
margin; arms, base, model and questions from the lesson's record in :mod:`rag_lab.course.settings`) and what each
guard that refuses buys on unanswerable questions, and :func:`run_robustness` re-tests every one in every cell of
its datasets — the world and the shipped HotpotQA and MuSiQue samples, or, for a claim on unanswerable
questions, the world's unanswerable questions and the samples' unanswerable twins; each with simulator seeds 0
and 1 — as a sweep that states it, with the claim's one test and Holm within its family. The table ships
(:data:`SHIPPED_TABLE`, its markdown beside it) so a notebook quotes its row with :func:`quote`;
``tests/test_robustness.py`` fails when it is stale against the simulator. The method: docs/decisions.md, "The
robustness table"; the command: docs/cli.md."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from rag_lab.course import settings
from rag_lab.course.settings import LessonSetting
from rag_lab.errors import ConfigError
from rag_lab.experiments.engine.labels import changes_label
from rag_lab.figures.where_grid import STATUSES, cell_status, where_grid_info, where_grid_markdown
from rag_lab.paths import DATA_DIR, template
from rag_lab.stats.paired import interval_text
from rag_lab.stats.power import paired_differences
from rag_lab.stats.significance import holm, p_text, paired_test

__all__ = ["CELL_DATASETS", "GUARD_DATASETS", "HEADLINE_FINDINGS", "HeadlineFinding", "RobustnessTable", "SHIPPED_TABLE", "SEEDS",
           "check_current", "claim", "load_table", "quote", "run_robustness"]

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
COMMAND = "rag-lab robustness"


@dataclass(frozen=True)
class HeadlineFinding:
    """One notebook's finding, as the robustness table re-runs it: ``candidate`` against ``reference`` (dotted
    pipeline settings over ``base``) on ``metric``, claimed ``direction`` (``above``/``below``: the candidate's
    metric is higher/lower; ``none``: within ±``margin``); ``knobs``: the simulator knob overrides of the
    notebook (over ``profile``); ``world_types`` / ``world_per_type``: the notebook's world questions (test
    split); ``kind`` as the notebook declares it (:mod:`rag_lab.experiments.engine.findings`); ``datasets``: the
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

    def spec(self, dataset: str, seed: int, real_limit: int) -> dict[str, Any]:
        """The two-candidate sweep of one cell."""
        grid = [{k: [v] for k, v in arm.items()} for arm in (self.reference, self.candidate)]
        spec: dict[str, Any] = {
            "name": f"robustness_{self.key}_{dataset}_s{seed}",
            "dataset": dataset,
            "base": dict(self.base),
            "backend": {"kind": "sim", "profile": self.profile, "knobs": dict(self.knobs)},
            "grid": grid,
            "seeds": [seed],
        }
        if dataset == "world":
            spec.update({"split": "test", "types": list(self.world_types) if self.world_types else None,
                         "per_type": self.world_per_type})
        else:
            spec["limit"] = real_limit if self.direction != "none" else max(real_limit, NO_CHANGE_LIMIT)
        claim: dict[str, Any] = {"metric": self.metric, "candidate": dict(self.candidate),
                                 "reference": dict(self.reference), "direction": self.direction, "claim": self.claim}
        if self.margin is not None:
            claim["margin"] = self.margin
        spec["findings"] = [claim]
        return spec

    @property
    def family(self) -> str:
        """The table's family this finding's cells are corrected in (:data:`FAMILIES`)."""
        return "no change" if self.direction == "none" else "difference"


def _headline(key: str, setting: LessonSetting, claim: str, metric: str, direction: Direction, kind: str = "measured",
              margin: float | None = None, datasets: tuple[str, ...] = CELL_DATASETS) -> HeadlineFinding:
    """Finding ``key`` of the lesson whose comparison ``setting`` declares (:mod:`rag_lab.course.settings`, the record
    the notebook reads too): its arms, base, model and world questions — every test question of its types for a
    no-change claim, which needs many questions to be decidable — on ``datasets``."""
    return HeadlineFinding(key, setting.notebook, claim, metric, dict(setting.candidate), dict(setting.reference),
                           direction, kind, margin, dict(setting.base), dict(setting.knobs), setting.profile,
                           setting.types, setting.per_type if direction != "none" else None, tuple(datasets))


def _guard(key: str, setting: LessonSetting, claim: str) -> HeadlineFinding:
    """What a guard that refuses buys: on unanswerable questions (``setting``'s world questions are the world's
    unanswerable ones; the real cells are the samples' twins), the guard on (``setting.candidate``) answers fewer
    of them than the guard off (``setting.reference``) — ``quality_unsupported_answer`` lower."""
    return _headline(key, setting, claim, UNSUPPORTED, "below", datasets=GUARD_DATASETS)


_STRICT = "quality_answer_containment_strict"
UNSUPPORTED = "quality_unsupported_answer"
#: The headline findings of notebooks 01–13 (each notebook's asserted claims, on its setting's record), then what
#: each guard that refuses buys on unanswerable questions (the ``guard_`` rows: the world's unanswerable test
#: questions and the real samples' twins). The controller's own INSUFFICIENT has no row: no setting switches it
#: alone (docs/decisions.md, "The robustness table").
HEADLINE_FINDINGS: tuple[HeadlineFinding, ...] = (
    _headline("round_cap_calls", settings.ROUND_CAP, "capping retrieval at one round instead of two cuts LLM calls",
              "cost_llm_calls", "below"),
    _headline("round_cap_bridge", settings.ROUND_CAP_BRIDGE,
              "on two-hop questions, capping at one round loses answers that round 2 finds", _STRICT, "below"),
    _headline("disclosure_calls", settings.BUDGET_DISCLOSURE, "told its budget, the anchored model spends more LLM calls",
              "cost_llm_calls", "above", kind="by_construction"),
    _headline("disclosure_thrift_calls", settings.BUDGET_THRIFT, "told its budget, the thrifty model spends fewer LLM calls",
              "cost_llm_calls", "below", kind="by_construction"),
    _headline("zero_yield_calls", settings.ZERO_YIELD,
              "stopping on an empty round cuts the LLM calls a spinning controller spends", "cost_llm_calls", "below",
              kind="by_construction"),
    _headline("zero_yield_answers", settings.ZERO_YIELD,
              "the zero-yield stop costs no answers (strict containment within ±0.05)", _STRICT, "none", margin=0.05),
    _headline("hyde_recall", settings.HYDE, "the mean embedding of 4 passages that only rephrase the question brings "
              "no more gold evidence (evidence recall within ±0.10)", "quality_evidence_recall", "none", margin=0.10),
    _headline("crag_abstention", settings.CRAG,
              "raising crag.lower to 0.5 refuses answerable questions and lowers abstention accuracy",
              "quality_abstention_accuracy", "below"),
    _headline("truncation_retained", settings.TRUNCATION, "with a tight snippet limit (5), ranking before the cut keeps "
              "the gold evidence later rounds found, appending loses it", "quality_later_gold_retained", "above"),
    _headline("truncation_answers", settings.TRUNCATION, "and the answers are better for it", _STRICT, "above"),
    _headline("search_budget_tokens", settings.SEARCH_BUDGET, "a 600-token search budget cuts tokens per question",
              "cost_tokens", "below"),
    _headline("search_budget_answers", settings.SEARCH_BUDGET,
              "the 600-token budget costs answers (strict containment drops)", _STRICT, "below"),
    _headline("rewrite_calls", settings.REWRITE, "rewriting costs an extra LLM call per question (the rewrite role)",
              "cost_llm_calls", "above", kind="definitional"),
    _headline("judge_calls", settings.JUDGE, "the judge costs LLM calls", "cost_llm_calls", "above",
              kind="definitional"),
    _headline("router_upgrade", settings.ROUTER, "upgrading comparison wording to COMPLEX answers comparisons the "
              "under-rating router sent to one-shot retrieval", _STRICT, "above", kind="by_construction"),
    _headline("source_contract_leak", settings.SOURCE_CONTRACT,
              "when the filter leaves nothing, fail-open answers cite sources outside the contract",
              "quality_off_contract_citation", "above", kind="definitional"),
    _headline("source_contract_price", settings.SOURCE_CONTRACT_PRICE, "fail-closed costs at most 0.10 strict "
              "containment against fail-open (it gives up only the answers fail-open took from forbidden sources)",
              _STRICT, "none", margin=0.10),
    _headline("validation_fallback", settings.CONTROLLER_VALIDATION, "the deterministic fallback answers from gathered "
              "evidence where a pipeline that refuses invalid controller output gives up", _STRICT, "above",
              kind="by_construction"),
    _headline("citation_threshold_unanswerable", settings.CITATION_THRESHOLD,
              "a refusal threshold of 0.5 refuses unanswerable questions that 0.1 answers",
              "quality_abstention_accuracy", "above", datasets=GUARD_DATASETS),
    _headline("citation_threshold_price", settings.CITATION_PRICE, "and it refuses answerable questions too",
              "quality_refused", "above"),
    _headline("citation_cap", settings.CITATION_CAP, "a cap of one citation removes citations",
              "quality_citation_validity", "below", kind="definitional"),
    _guard("guard_citation_rule", settings.CITATION_RULE_UNANSWERABLE,
           "refusing an answer left with no valid citation answers fewer unanswerable questions"),
    _guard("guard_citation_threshold", settings.CITATION_THRESHOLD_UNANSWERABLE,
           "a citation-guard refusal threshold of 0.3 answers fewer unanswerable questions than the default 0.1"),
    _guard("guard_crag_lower", settings.CRAG_UNANSWERABLE,
           "CRAG's lower threshold at 0.5 answers fewer unanswerable questions than the default 0.2"),
    _guard("guard_source_contract", settings.SOURCE_CONTRACT_UNANSWERABLE,
           "a fail-closed source contract answers fewer unanswerable questions than fail-open"),
    _guard("guard_zero_yield", settings.ZERO_YIELD_UNANSWERABLE,
           "the zero-yield stop answers fewer unanswerable questions"),
)


def _finding(key: str) -> HeadlineFinding:
    for f in HEADLINE_FINDINGS:
        if f.key == key:
            return f
    raise ConfigError(f"no headline finding {key!r}; known: {', '.join(f.key for f in HEADLINE_FINDINGS)}")


def claim(key: str) -> str:
    """The sentence of headline finding ``key``: its notebook states it as its claim (``paired_finding(...,
    claim=robustness.claim(key))``), so the sentence is typed once, in :data:`HEADLINE_FINDINGS`."""
    return _finding(key).claim


# --- one cell ----------------------------------------------------------------------------------------


def _cell(finding: HeadlineFinding, dataset: str, seed: int, real_limit: int, work_dir: Path) -> dict[str, Any]:
    """Run one cell's two-candidate sweep (resumable in ``work_dir``) and test its stated finding (p not yet
    corrected over the table)."""
    from rag_lab.experiments.sweep_runner import run_sweep
    from rag_lab.llm.simulator import SIM_VERSION

    spec = finding.spec(dataset, seed, real_limit)
    run_dir = work_dir / SIM_VERSION / spec["name"]  # a new simulator never resumes an old one's rows
    result = run_sweep(spec, run_dir, progress="quiet", overwrite=True)
    return tested_cell(finding, result, dataset, seed)


def tested_cell(finding: HeadlineFinding, result: Any, dataset: str, seed: int) -> dict[str, Any]:
    """The cell of ``finding`` from a finished two-candidate sweep that states it (p not yet corrected); its
    differences (what the cell could have detected) are over the questions the claim is tested on (flagged twins
    left out, :func:`~rag_lab.experiments.engine.findings.claim_qids`)."""
    import numpy as np

    from rag_lab.experiments.engine.findings import claim_qids, sweep_findings

    (found,) = sweep_findings(result)
    values, reference = result.paired_values(finding.metric, dict(finding.candidate), dict(finding.reference))
    tested = set(claim_qids(result))
    kept = np.array([q in tested for q in result.qids], dtype=bool)
    values, reference = values[kept], reference[kept]
    cell: dict[str, Any] = {"dataset": dataset, "seed": seed, "n": found.n, "delta": found.delta, "lo": found.lo,
                            "hi": found.hi, "test": found.method, "n_better": found.n_better,
                            "n_worse": found.n_worse, "p": found.p,
                            "differences": paired_differences(values, reference)._asdict()}
    if finding.direction == "none":
        cell.update({"p_difference": paired_test(values, reference).p,
                     "agrees": bool(abs(found.delta) < finding.margin)})  # type: ignore[operator]
    else:
        sign = 1.0 if finding.direction == "above" else -1.0
        cell["agrees"] = bool(sign * found.delta > 0)
    return cell


def add_detectable(row: Mapping[str, Any], cells: Sequence[dict[str, Any]], alpha: float, family_size: int) -> None:
    """Give each of ``cells`` (tested, with ``holds`` set) that does not hold the smallest effect its sample could
    have detected (:func:`rag_lab.stats.power.detectable`: 80% power, the claim's own test) at Holm's strictest
    level over the ``family_size`` cells of its family, ``alpha / family_size``: at that effect the cell would be
    shown whatever the other cells show."""
    from rag_lab.evaluation.catalog import value_range
    from rag_lab.stats.power import Differences, detectable

    level = alpha / max(1, family_size)
    for cell in cells:
        if cell["holds"] or "differences" not in cell:
            continue
        found = detectable(Differences(**cell["differences"]), direction=row["direction"], alpha=level,
                           margin=row.get("margin"), value_range=value_range(row["metric"]))
        cell["detectable"] = {"effect": found.effect, "bound": found.bound, "text": found.text}


def holds(finding: HeadlineFinding | Mapping[str, Any], cell: Mapping[str, Any], alpha: float) -> bool:
    """Whether a tested cell shows its finding: the one rule (:func:`rag_lab.stats.holds.holds`) on its Holm p."""
    from rag_lab.stats.holds import holds as shows

    direction, margin = ((finding["direction"], finding.get("margin")) if isinstance(finding, Mapping)
                         else (finding.direction, finding.margin))
    return shows(direction, cell["p_holm"], cell["lo"], cell["hi"], alpha, delta=cell["delta"],
                 margin=float(margin or 0.0), n=cell["n"])


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
    #: the real-model columns' labels (:mod:`rag_lab.course.robustness_recorded`); each row's cells for
    #: them are under ``recorded``
    recorded: list[str] = field(default_factory=list)
    #: the contrasts the recorded studies declared, one row each, their cells the studies' verdicts
    #: (:mod:`rag_lab.course.robustness_study`)
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

    def write(self, json_path: Path, markdown_path: Path | None) -> list[Path]:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=False) + "\n", encoding="utf-8")
        written = [json_path]
        if markdown_path is not None:
            markdown_path.parent.mkdir(parents=True, exist_ok=True)
            markdown_path.write_text(markdown(self), encoding="utf-8")
            written.append(markdown_path)
        return written


def run_robustness(
    findings: Iterable[str] | None = None,
    datasets: Sequence[str] | None = None,
    seeds: Sequence[int] = SEEDS,
    real_limit: int = REAL_LIMIT,
    work_dir: str | Path | None = None,
    alpha: float = ALPHA,
    on_cell: Callable[[str, dict[str, Any]], None] | None = None,
) -> RobustnessTable:
    """Run every registered finding (or the ``findings`` named) on each of its datasets (only those among
    ``datasets`` when given; a finding left with none is not run) × seed and build the table (see the module
    doc); the table's ``datasets`` are those of its findings, in order of first use. ``work_dir`` keeps each
    cell's sweep (resumable; default ``$RAG_LAB_CACHE/robustness``); ``on_cell(key, cell)`` is called as each
    cell finishes."""
    from rag_lab.llm.simulator import SIM_VERSION
    from rag_lab.paths import cache_dir

    chosen = [_finding(k) for k in findings] if findings is not None else list(HEADLINE_FINDINGS)
    if datasets is not None:
        chosen = [f for f in chosen if any(d in datasets for d in f.datasets)]
    if not chosen or not seeds:
        raise ConfigError("the robustness table needs at least one finding on one of its datasets, and one seed")
    if isinstance(real_limit, bool) or not isinstance(real_limit, int) or real_limit < 2:
        raise ConfigError(f"real_limit must be an integer >= 2, got {real_limit!r}")
    work = Path(work_dir) if work_dir is not None else cache_dir() / "robustness"
    start = time.perf_counter()
    rows, used = [], []
    for finding in chosen:
        cells = []
        for dataset in [d for d in finding.datasets if datasets is None or d in datasets]:
            used += [dataset] if dataset not in used else []
            for seed in seeds:
                cell = _cell(finding, dataset, seed, real_limit, work)
                cells.append(cell)
                if on_cell is not None:
                    on_cell(finding.key, cell)
        row = {k: (dict(v) if isinstance(v, Mapping) else list(v) if isinstance(v, tuple) else v)
               for k, v in asdict(finding).items()}
        rows.append({**row, "cells": cells})
    for family in FAMILIES:   # Holm within each family the registry declares
        members = [(row, finding) for row, finding in zip(rows, chosen, strict=True) if finding.family == family]
        adjusted = iter(holm([c["p"] for row, _ in members for c in row["cells"]]))
        for row, finding in members:
            row["family"] = family
            for cell in row["cells"]:
                cell["p_holm"] = next(adjusted)
                cell["holds"] = holds(finding, cell, alpha)
        size = sum(len(row["cells"]) for row, _ in members)
        for row, _ in members:
            add_detectable(row, row["cells"], alpha, size)
    for row in rows:
        n = len(row["cells"])
        row["summary"] = {"cells": n, "agree": sum(c["agrees"] for c in row["cells"]),
                          "hold": sum(c["holds"] for c in row["cells"])}
    return RobustnessTable(SIM_VERSION, rows, used, list(seeds), real_limit, alpha,
                           round(time.perf_counter() - start, 1))


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


def _verdict(row: Mapping[str, Any], cell: Mapping[str, Any]) -> tuple[str, str]:
    """(mark, words) of a cell: its status in the where-it-holds grid (:func:`~rag_lab.figures.where_grid.cell_status`)."""
    status = cell_status(row, cell)
    return STATUSES[status][0], status


def _adjusted(cell: Mapping[str, Any]) -> str:
    """A cell's corrected p: ``Holm 0.037`` within the table's family, or a study's declared claim's p within its
    family and Holm's over its study."""
    if "p_family" in cell:
        study = f"; Holm over the study {p_text(cell['p_study'])}" if "p_study" in cell else ""
        return f"{p_text(cell['p_family'])} within its family: {cell['correction']}{study}"
    return f"Holm {p_text(cell['p_holm'])}"


def _as_measured(cell: Mapping[str, Any]) -> str:
    """`` [measured as …; the study's declared claim `key`]`` for a cell measured on other arms than its row's."""
    if not cell.get("measured_as"):
        return ""
    declared = f"; the declared claim of study row {cell['declared']}" if cell.get("declared") else ""
    return f" [measured as {cell['measured_as']}{declared}]"


def _cell_text(row: Mapping[str, Any], cell: Mapping[str, Any]) -> str:
    mark = _verdict(row, cell)[1]
    return (f"{interval_text(cell)}, p={p_text(cell['p'])} ({_adjusted(cell)}, n={cell['n']}): {mark}"
            f"{_detectable(cell)}{_as_measured(cell)}")


def _detectable(cell: Mapping[str, Any], table_cell: bool = False) -> str:
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
             f"{_settings(row['candidate'])} vs {_settings(row['reference'])}): holds in "
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
    lines = [f"study {row['study']} · {row['claim']} ({row['metric']}, {_settings(row['candidate'])} vs "
             f"{_settings(row['reference'])}; declared, tested outside the pilot)"]
    for c in row["recorded"]:
        head = f"  {c['dataset']}: {c['part']} claim {c['index']}"
        lines.append(f"{head}: {_cell_text(row, c)}{_provisional(c)}" if c["status"] == "tested" else
                     f"{head}: {c['status']} ({c['why']})")
    return "\n".join(lines)


def _provisional(cell: Mapping[str, Any]) -> str:
    return f" (provisional: {cell['provisional']})" if cell.get("provisional") else ""


def _settings(settings: Mapping[str, Any]) -> str:
    return changes_label(settings)


def recorded_markdown(table: RobustnessTable) -> list[str]:
    """The real-model columns (:mod:`rag_lab.course.robustness_recorded`) as a second table, if any."""
    if not table.recorded:
        return []
    lines = ["", "## A real model (recorded)", "", template(__package__, "templates/robustness_recorded.md").substitute(),
             "", "| finding | claim | " + " | ".join(table.recorded) + " |",
             "|" + "---|" * (2 + len(table.recorded))]
    for row in table.findings:
        cells = [f"{c['status']} ({c['why']})" if c["status"] != "tested" else
                 "no question to test (n=0)" if not c["n"] else
                 f"{_verdict(row, c)[0]} {interval_text(c)} p={p_text(c['p'])} ({_adjusted(c)}, n={c['n']})"
                 f"{_detectable(c, table_cell=True)}{_as_measured(c)}" for c in row.get("recorded", [])]
        lines.append(f"| {row['key']} ({row['notebook']}, {row['kind']}) | {row['claim']} | " + " | ".join(cells) + " |")
    return lines


def studies_markdown(table: RobustnessTable) -> list[str]:
    """The studies' declared contrasts (:mod:`rag_lab.course.robustness_study`) as a third table, if any."""
    if not table.studies:
        return []
    lines = ["", "## The recorded studies' declared contrasts", "",
             template(__package__, "templates/robustness_studies.md").substitute(), "",
             "| study row | claim | column | part, claim | n | Δ [95% interval] | p | p within its family | p, Holm "
             "over the study | verdict | could have detected |", "|" + "---|" * 11]
    for row in table.studies:
        for c in row["recorded"]:
            if c["status"] != "tested":
                lines.append(f"| {row['key']} | {c['claim']} | {c['dataset']} | {c['part']} #{c['index']} | "
                             f"{c['status']} ({c['why']}) |" + " |" * 6)
                continue
            within = f" within ±{row['margin']:g}" if row["direction"] == "none" else ""
            verdict = f"{_verdict(row, c)[0]} {'holds' if c['holds'] else 'not shown'}{within}{_provisional(c)}"
            found = (c.get("detectable") or {}).get("text", "")
            cells = [row["key"], c["claim"], c["dataset"], f"{c['part']} #{c['index']}",
                     f"{c['n']} of {c['questions']} ({c['pilot_left_out']} in the pilot)", interval_text(c), p_text(c["p"]),
                     p_text(c["p_family"]), p_text(c["p_study"]), verdict, found]
            lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    return lines


def markdown(table: RobustnessTable) -> str:
    """The table as the report's markdown: one row per finding, one column per dataset × seed."""
    cols = [(d, s) for d in table.datasets for s in table.seeds]
    head = "| finding | claim | metric | " + " | ".join(f"{d} s{s}" for d, s in cols) + " | holds | sign agrees |"
    lines = [
        "# Robustness of the headline findings",
        "",
        template(__package__, "templates/robustness_intro.md").substitute(
            command=table.command, sim_version=table.sim_version, seconds=f"{table.seconds:.0f}",
            real_limit=table.real_limit, seeds=", ".join(map(str, table.seeds)), no_change_limit=NO_CHANGE_LIMIT,
            alpha=f"{table.alpha:g}"),
        "",
        "## At a glance",
        "",
        where_grid_markdown(where_grid_info(table)),
        "",
        "## Every cell",
        "",
        head,
        "|" + "---|" * (5 + len(cols)),
    ]
    for row in table.findings:
        by = {(c["dataset"], c["seed"]): c for c in row["cells"]}
        claim = row["claim"] + (f" (±{row['margin']:g})" if row["margin"] is not None and "±" not in row["claim"] else "")
        cells = []
        for key in cols:
            c = by.get(key)
            if c is None:
                cells.append("–")
                continue
            mark = _verdict(row, c)[0]
            cells.append(f"{mark} {interval_text(c)} p={p_text(c['p'])} (Holm {p_text(c['p_holm'])}, n={c['n']})"
                         f"{_detectable(c, table_cell=True)}")
        s = row["summary"]
        family = row.get("family", "–")
        lines.append(f"| {row['key']} ({row['notebook']}, {row['kind']}; family: {family}) | {claim} | {row['metric']} | "
                     + " | ".join(cells) + f" | {s['hold']}/{s['cells']} | {s['agree']}/{s['cells']} |")
    lines += recorded_markdown(table)
    lines += studies_markdown(table)
    lines += ["", "Candidates and references (dotted settings over each finding's base):", ""]
    for row in table.findings:
        knobs = f"; simulator knobs {_settings(row['knobs'])}" if row["knobs"] else ""
        base = f"; base {_settings(row['base'])}" if row["base"] else ""
        own = row.get("datasets", list(CELL_DATASETS))
        datasets = f"; datasets {', '.join(own)}" if list(own) != list(CELL_DATASETS) else ""
        world = f"; world questions: {', '.join(row['world_types'])}" if row.get("world_types") else ""
        lines.append(f"- `{row['key']}`: {_settings(row['candidate'])} vs {_settings(row['reference'])}{base}"
                     f"{knobs}; profile {row['profile']}{world}{datasets}")
    return "\n".join(lines) + "\n"
