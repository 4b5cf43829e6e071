"""What a calibration found (:func:`rag_lab.experiments.calibration.calibrate.calibrate`): per-role rate estimates,
each profile knob's value and where it came from, the calibrated profile, and how they are shown — the
printed table and the profile file (YAML: the profile's fields, then a ``calibration`` block the
simulator ignores)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from rag_lab.llm.sim.profile import CALIBRATION_KEY, SimulatorProfile

#: What each profile knob's estimate uses, for the table and the YAML file.
USES: dict[str, str] = {
    "invalid_json": "raw route/controller outputs: no JSON object in the text",
    "hallucinated_action": "raw route/controller outputs that are JSON: action/route outside the allowed labels",
    "wrong_types": "raw route/controller outputs that are JSON with an allowed label: rejected by the schema",
    "synonym_spinning": "controller calls the reader finds sufficient, no budget stated: model searched again",
    "premature_stop": "controller calls on a partly covered multi-part question (no budget stated) and "
                      "answer calls the reader finds partial: model answered",
    "bridge_drop": "controller calls whose ideal query carries a bridge entity (thrift not applicable), model "
                   "searched again: bridge missing",
    "comparison_underrate": "route calls the reader reads as a comparison (COMPLEX): model routed SIMPLE",
    "route_underrate": "route calls the reader routes COMPLEX that are no comparison: model routed SIMPLE",
    "budget_anchoring": "controller calls with an unspent stated budget: re-search rate of those the reader finds "
                        "insufficient (= a) and sufficient (= s + (1-s)a), fitted with spinning",
    "budget_thrift": "controller calls with a stated budget whose ideal search the reader could settle without: "
                     "model stopped (fitted given premature_stop, budget_anchoring, bridge_drop)",
}


class RateEstimate(NamedTuple):
    """One estimated rate: ``fired`` of ``opportunities`` (``rate`` with its interval ``lo``–``hi``) for
    ``knob`` in ``role``; ``in_profile`` is False for rows only reported (other roles, cross-checks)."""

    knob: str
    role: str
    fired: int
    opportunities: int
    rate: float
    lo: float
    hi: float
    uses: str
    in_profile: bool = True


@dataclass
class KnobCalibration:
    """The profile's value of one knob: ``value`` (the estimate, or the base profile's), ``status``
    (``estimated`` or ``unidentified``), ``reason`` when unidentified, and the estimate it came from."""

    knob: str
    value: float
    status: str
    base: float
    estimate: RateEstimate | None = None
    reason: str = ""


@dataclass
class Calibration:
    """What :func:`calibrate` found: per-role ``estimates`` (profile rows and reported-only rows), the
    profile-level ``knobs``, the calibrated ``profile``, the ``source`` description and ``notes``."""

    estimates: list[RateEstimate]
    knobs: dict[str, KnobCalibration]
    profile: SimulatorProfile
    base_name: str
    source: str
    notes: list[str]
    configured: dict[str, float] | None = None

    @property
    def unidentified(self) -> list[str]:
        return [k for k, c in self.knobs.items() if c.status != "estimated"]

    def rows(self) -> list[dict[str, Any]]:
        """One row per knob: the profile's value and where it came from."""
        out = []
        for knob, c in self.knobs.items():
            e = c.estimate
            out.append({"knob": knob, "value": c.value, "status": c.status, "base": c.base,
                        "rate": e.rate if e else math.nan, "lo": e.lo if e else math.nan, "hi": e.hi if e else math.nan,
                        "fired": e.fired if e else 0, "opportunities": e.opportunities if e else 0,
                        "configured": (self.configured or {}).get(knob), "reason": c.reason,
                        "uses": USES[knob]})
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "base": self.base_name, "profile": self.profile.model_dump(),
                "knobs": self.rows(), "estimates": [e._asdict() for e in self.estimates],
                "unidentified": self.unidentified, "notes": self.notes}

    def to_yaml(self) -> str:
        """The profile file: the profile's fields, then ``calibration`` (what each came from; ignored
        by the simulator), under a header comment naming the unidentified knobs."""
        head = [f"# Simulator profile calibrated by `rag-lab calibrate` from {self.source}.",
                f"# Base profile: {self.base_name}. Load it with --profile THIS_FILE (rag-lab eval / sweep / serve)",
                "# or `backend: {kind: sim, profile: THIS_FILE}` in a sweep file.",
                ("# Unidentified (kept at the base profile's value): " + ", ".join(self.unidentified))
                if self.unidentified else "# Every knob was estimated from the traces."]
        fields = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in self.profile.model_dump().items()}
        meta = {"source": self.source, "base": self.base_name, "unidentified": self.unidentified,
                "knobs": {r["knob"]: {k: _plain(r[k]) for k in ("status", "value", "rate", "lo", "hi", "fired",
                                                                 "opportunities", "reason", "uses")}
                          for r in self.rows()},
                "notes": self.notes}
        return "\n".join(head) + "\n" + yaml.safe_dump({**fields, CALIBRATION_KEY: meta}, sort_keys=False,
                                                         allow_unicode=True, width=110)

    def write(self, path: str | Path) -> Path:
        """Write :meth:`to_yaml` to ``path`` (parents created, replaced atomically)."""
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(self.to_yaml(), encoding="utf-8")
        tmp.replace(out)
        return out

    def table_text(self) -> str:
        """The printed table: per knob the profile's value, its estimate and interval, fired/opportunities;
        then the per-role and reported-only rows, and the notes."""
        configured = self.configured is not None
        lines = [f"calibrated from {self.source}; base profile {self.base_name}",
                 f"{'knob':21s} {'profile':>8s} {'estimate':>8s} {'95% interval':>15s} {'fired/opp':>10s}"
                 + (f" {'configured':>10s}" if configured else "") + "  source"]
        for r in self.rows():
            est = "-" if math.isnan(r["rate"]) else f"{r['rate']:.3f}"
            ci = "-" if math.isnan(r["lo"]) else f"[{r['lo']:.3f}, {r['hi']:.3f}]"
            conf = f" {r['configured']:10.3f}" if configured and r["configured"] is not None else (" " * 11 if configured else "")
            src = "estimated" if r["status"] == "estimated" else f"base ({r['reason']})"
            lines.append(f"{r['knob']:21s} {r['value']:8.3f} {est:>8s} {ci:>15s} {r['fired']:>4d}/{r['opportunities']:<5d}"
                         f"{conf}  {src}")
        lines.append("per role (* reported only: not a knob of the simulator's profile):")
        for e in self.estimates:
            ci = "-" if math.isnan(e.lo) else f"[{e.lo:.3f}, {e.hi:.3f}]"
            rate = "-" if math.isnan(e.rate) else f"{e.rate:.3f}"
            lines.append(f"  {e.role:17s} {e.knob:24s} {e.fired:4d}/{e.opportunities:<5d} = {rate:>5s} {ci}"
                         + ("" if e.in_profile else "  *"))
        if self.unidentified:
            lines.append("unidentified (kept at the base profile's value): " + ", ".join(self.unidentified))
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _plain(value: Any) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 4)
    return value
