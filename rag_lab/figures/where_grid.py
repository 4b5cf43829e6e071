"""Where each finding holds, as a grid: findings × settings (each dataset at each simulator seed, then each recorded
real-model column), each cell one symbol of :data:`STATUSES` — split into plain data (:func:`where_grid_info`), a
plotly figure (:func:`where_grid_figure`) and one finding's row as a line (:func:`where_line`).

Input: a robustness table as written to JSON (``data/robustness.json``, by ``python -m tools.course robustness``):
``findings`` (``key``, ``claim``, ``direction``, ``cells`` and ``recorded`` cells), ``datasets``, ``seeds``,
``recorded`` and optionally ``studies``; a mapping or any object with those attributes."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import plotly.graph_objects as go

from rag_lab.errors import ConfigError
from rag_lab.stats.paired import interval_text

#: Every status a cell can have: name → (symbol, colour, legend text), in legend order.
STATUSES = {
    "holds": ("✓", "#2e7d32", "holds: the interval on the claimed side and Holm p < 0.05"),
    "sign agrees": ("~", "#c98a00", "the sign agrees, not shown"),
    "no difference": ("·", "#777777", "no difference at all: no question differs"),
    "sign disagrees": ("✗", "#c62828", "the sign does not agree (a no-change claim: outside its margin)"),
    "undefined": ("∅", "#777777", "no question where the metric applies"),
    "not recorded": ("?", "#9e9e9e", "not recorded: the cassette lacks a call the finding needs"),
    "not applicable": ("–", "#bdbdbd", "not applicable: the finding rests on a simulator knob, or the recording "
                                         "holds none of its questions"),
    "not run": ("", "#ffffff", "not run: not one of the finding's datasets (a study's row: not declared there)"),
}
#: How columns name the shipped datasets.
DATASET_NAMES = {"world": "world", "hotpotqa_sample": "HotpotQA", "musique_sample": "MuSiQue",
                 "hotpotqa_sample_twins": "HotpotQA twins", "musique_sample_twins": "MuSiQue twins"}


class WhereCell(NamedTuple):
    """One cell: its ``status`` (a :data:`STATUSES` name), ``symbol``, and the numbers behind it (``delta``,
    ``lo``, ``hi``, ``n``, the adjusted ``p_holm`` — Holm's within the table's family, or, where ``correction``
    says so, the declared family's) with ``detectable``: what its sample could have shown where it does not hold
    ('' where it holds or was not tested), and ``measured_as``: the arms measured, where not the row's ('')."""

    status: str
    symbol: str
    delta: float
    lo: float
    hi: float
    n: int
    p_holm: float
    detectable: str
    correction: str = "Holm"
    measured_as: str = ""


class WhereGridInfo(NamedTuple):
    """The grid: ``keys`` and ``claims`` of the findings (rows), ``columns`` (short labels: ``world s0``,
    ``HotpotQA v2 (Qwen2.5-Coder-1.5B)``), ``groups`` (each column's dataset or model, for the text twins),
    ``cells[row][column]`` and ``source`` (what made the table)."""

    keys: tuple[str, ...]
    claims: tuple[str, ...]
    columns: tuple[str, ...]
    groups: tuple[str, ...]
    cells: tuple[tuple[WhereCell, ...], ...]
    source: str


def _get(table: Any, name: str) -> Any:
    return table[name] if isinstance(table, Mapping) else getattr(table, name)


def cell_status(row: Mapping[str, Any], cell: Mapping[str, Any]) -> str:
    """A robustness cell's status (a :data:`STATUSES` name), from its verdict and its Δ."""
    status = cell.get("status", "tested")
    if status == "not applicable":
        return "not applicable"
    if status != "tested":
        return "not recorded"
    delta = cell.get("delta")
    if not cell.get("n") or delta is None or delta != delta:
        return "undefined"
    if cell["holds"]:
        return "holds"
    if cell["agrees"]:
        return "sign agrees"
    if row["direction"] != "none" and delta == 0 and cell.get("lo") == 0 and cell.get("hi") == 0:
        return "no difference"
    return "sign disagrees"


def recorded_column(label: str) -> tuple[str, str]:
    """A real-model column's (short label, model): ``"Qwen2.5-Coder-1.5B, prompts v2, hotpotqa_sample
    (recorded)"`` → ``("HotpotQA v2", "Qwen2.5-Coder-1.5B")`` (prompts v1 where the label names none)."""
    parts = [p.strip() for p in label.removesuffix(" (recorded)").split(",")]
    prompts = next((p.removeprefix("prompts ") for p in parts[1:] if p.startswith("prompts ")), "v1")
    dataset = DATASET_NAMES.get(parts[-1], parts[-1])
    return f"{dataset} {prompts}", parts[0]


def _cell(row: Mapping[str, Any], cell: Mapping[str, Any] | None, missing: str = "not recorded") -> WhereCell:
    if cell is None:
        return WhereCell(missing, STATUSES[missing][0], math.nan, math.nan, math.nan, 0, math.nan, "")
    status = cell_status(row, cell)
    found = cell.get("detectable") or {}

    def number(key: str) -> float:
        return float(cell[key]) if cell.get(key) is not None else math.nan

    declared = "p_family" in cell   # a study's declared claim: its family's p, as declared
    return WhereCell(status, STATUSES[status][0], number("delta"), number("lo"), number("hi"), int(cell.get("n") or 0),
                     number("p_family" if declared else "p_holm"), str(found.get("text", "")) if status != "holds" else "",
                     str(cell.get("correction", "Holm")) if declared else "Holm", str(cell.get("measured_as", "")))


def where_grid_info(table: Any, keys: Sequence[str] | None = None) -> WhereGridInfo:
    """The grid of a robustness table (the rows ``keys``, in that order; default every finding, then every study
    row); the real-model columns are the table's, then those only a study row shown has."""
    findings = list(_get(table, "findings")) + list((_get(table, "studies") if _has(table, "studies") else None) or [])
    by_key = {f["key"]: f for f in findings}
    keys = list(keys) if keys is not None else [f["key"] for f in findings]
    unknown = [k for k in keys if k not in by_key]
    if unknown:
        raise ConfigError(f"the robustness table has no finding {unknown[0]!r}; it holds {', '.join(by_key)}")
    sim = [(d, s) for d in _get(table, "datasets") for s in _get(table, "seeds")]
    recorded = list(_get(table, "recorded") or [])
    recorded += list(dict.fromkeys(c["dataset"] for k in keys for c in by_key[k].get("recorded", [])
                                   if c["dataset"] not in recorded))   # a column only the rows shown have
    columns = [f"{DATASET_NAMES.get(d, d)} s{s}" for d, s in sim]
    groups = [DATASET_NAMES.get(d, d) for d, _ in sim]
    for label in recorded:
        short, model = recorded_column(label)
        columns.append(f"{short} ({model})")
        groups.append(model)
    cells = []
    for key in keys:
        row = by_key[key]
        mine = {(c["dataset"], c["seed"]): c for c in row["cells"]}
        real = {c["dataset"]: c for c in row.get("recorded", [])}
        cells.append(tuple([_cell(row, mine.get(k), "not run") for k in sim]
                           + [_cell(row, real.get(label), "not run") for label in recorded]))
    source = f"{_get(table, 'command')}, simulator {_get(table, 'sim_version')}" if _has(table, "command") else ""
    return WhereGridInfo(tuple(keys), tuple(by_key[k]["claim"] for k in keys), tuple(columns), tuple(groups),
                         tuple(cells), source)


def _has(table: Any, name: str) -> bool:
    return name in table if isinstance(table, Mapping) else hasattr(table, name)


def _hover(info: WhereGridInfo, r: int, c: int) -> str:
    cell = info.cells[r][c]
    lines = [f"{info.keys[r]} · {info.columns[c]}", f"{cell.symbol} {cell.status}"]
    if not math.isnan(cell.delta):
        lines.append(f"Δ = {interval_text(cell._asdict(), 3)}, n={cell.n}, p={cell.p_holm:.3g} ({cell.correction})")
    if cell.measured_as:
        lines.append(f"measured as {cell.measured_as}")
    if cell.detectable:
        lines.append(cell.detectable)
    return "<br>".join(html.escape(t) for t in lines)


def where_grid_figure(info: WhereGridInfo) -> go.Figure:
    """One symbol per cell on a findings × settings grid, coloured by status, one legend entry per status drawn
    (a cell not run — not one of the finding's datasets — is left blank; a cell measured on other arms than its
    row's is starred); Δ, n, the corrected p and the detectable effect on hover."""
    fig = go.Figure()
    rows = [html.escape(k) for k in info.keys]
    columns = [html.escape(c) for c in info.columns]
    for status, (symbol, colour, legend) in STATUSES.items():
        if status == "not run":
            continue
        at = [(r, c) for r in range(len(info.keys)) for c in range(len(info.columns))
              if info.cells[r][c].status == status]
        if not at:
            continue
        fig.add_trace(go.Scatter(
            x=[columns[c] for _, c in at], y=[rows[r] for r, _ in at], mode="markers+text",
            text=[symbol + ("*" if info.cells[r][c].measured_as else "") for r, c in at],
            textfont=dict(size=15, color="white" if status in ("holds", "sign disagrees") else "#222"),
            marker=dict(symbol="square", size=26, color=colour, opacity=0.85 if status == "holds" else 0.45),
            name=html.escape(f"{symbol} {legend}"), hovertext=[_hover(info, r, c) for r, c in at],
            hovertemplate="%{hovertext}<extra></extra>"))
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=columns, side="top", tickangle=-35,
                     showgrid=False)
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=rows, autorange="reversed", showgrid=False,
                     automargin=True)
    fig.update_layout(template="plotly_white", title=dict(text="Where each finding holds", y=0.99),
                      height=max(320, 200 + 34 * len(rows)), margin=dict(l=20, r=20, t=150, b=20),
                      legend=dict(orientation="h", yanchor="top", y=-0.02, xanchor="left", x=0))
    return fig


def where_line(info: WhereGridInfo, key: str) -> str:
    """One finding's row as one short line: ``world ✓✓, HotpotQA ~~, MuSiQue ~~; Qwen2.5-Coder-1.5B: HotpotQA v1
    ·, HotpotQA v2 ✓, …`` (the symbols of :data:`STATUSES`, seeds in order; a dataset or recording the finding is
    not run on is left out; a cell measured on other arms than the row's is starred, and the line says which)."""
    if key not in info.keys:
        raise ConfigError(f"the grid has no finding {key!r}")
    cells = info.cells[info.keys.index(key)]
    sim: dict[str, str] = {}
    real: dict[str, list[str]] = {}
    measured_as: list[str] = []
    for column, group, cell in zip(info.columns, info.groups, cells, strict=True):
        if cell.status == "not run":
            continue
        if group in DATASET_NAMES.values():
            sim[group] = sim.get(group, "") + cell.symbol
        else:
            star = "*" if cell.measured_as else ""
            real.setdefault(group, []).append(f"{column.removesuffix(f' ({group})')} {cell.symbol}{star}")
            measured_as += [cell.measured_as] if cell.measured_as and cell.measured_as not in measured_as else []
    parts = [", ".join(f"{name} {marks}" for name, marks in sim.items())]
    parts += [f"{model}: {', '.join(items)}" for model, items in real.items()]
    line = "; ".join(p for p in parts if p)
    return line + (f" (* measured as {'; '.join(measured_as)})" if measured_as else "")

