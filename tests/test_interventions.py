"""Interventions carry a code beside their text: every one the pipeline records has exactly one code, the
codes survive a trace's JSON round trip, a trace stored before codes refuses to answer ``has`` instead of
saying False, and no code in the package or the notebooks finds an event by matching intervention text."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_pipeline import AGAIN, FILLERS, Q, backend, run

from rag_lab.llm.scripted import ScriptedBackend
from rag_lab.pipeline import Intervention, Pipeline, PipelineConfig, Trace, TraceStep
from rag_lab.testing import ScriptedResources, corpus_of

ROOT = Path(__file__).resolve().parents[1]


def _every_step_has_one_code_per_intervention(trace: Trace) -> None:
    for step in trace.steps:
        assert len(step.codes) == len(step.interventions), (step.kind, step.interventions, step.codes)
        assert all(isinstance(c, Intervention) for c in step.codes)


def test_the_pipeline_codes_each_intervention_it_records():
    res = ScriptedResources(corpus_of(FILLERS, source="wiki"), {Q: ["f0", "f1"], "q2": ["f2"], "q3": ["f3"]})
    seen: set[Intervention] = set()
    cases = [
        (backend([AGAIN.format(q="x")] * 3, answer="rescheduled [1]", route='{"route": "SIMPLE"}'),
         {"sources.simple": ("runbook",)}),
        (backend([], answer="rescheduled [1]", route='{"route": "SIMPLE"}'),
         {"sources.simple": ("runbook",), "sources.mode": "fail_open"}),
        (backend([AGAIN.format(q="q2"), AGAIN.format(q="q3"), AGAIN.format(q="q3")], answer="rescheduled [1] [7]"),
         {"round_cap.max_rounds": 2}),
        (backend(["not json"], answer="rescheduled [1]"), {"validation.on_invalid": "refuse"}),
        (backend([AGAIN.format(q="x")], answer="rescheduled [1]"), {"router.enabled": False}),
    ]
    for be, params in cases:
        _, trace = run(res, be, **params)
        _every_step_has_one_code_per_intervention(trace)
        seen |= set(trace.codes)
    assert {Intervention.SOURCE_REMOVED, Intervention.SOURCE_FAIL_OPEN, Intervention.REJECTED_CAP,
            Intervention.INVALID_REFUSED, Intervention.ROUTER_DISABLED} <= seen, seen


def test_a_comparison_upgrade_is_coded_and_uses_the_routers_own_rule():
    res = ScriptedResources(corpus_of(FILLERS), {"Compare f0 and f1": ["f0", "f1"]})
    be = ScriptedBackend({"route": ['{"route": "SIMPLE"}'], "controller": ['{"action": "answer", "queries": []}'],
                          "answer": ["f0 [1]"]})
    config = PipelineConfig().with_params({"crag.enabled": False, "citations.refusal_threshold": -1.0})
    _, trace = Pipeline(config, res, be).run("Compare f0 and f1")
    assert trace.has(Intervention.COMPARISON_UPGRADE, kind="route")
    router = config.router
    assert router.has_comparison_wording("Compare f0 and f1") and router.has_comparison_wording("A VS b?")
    assert not router.has_comparison_wording("Which comparisons ran in vsphere?")  # on word boundaries only


def test_codes_round_trip_and_must_match_the_texts():
    step = TraceStep(kind="guard")
    step.intervene(Intervention.ECHO, "not an answer (echo): copied")
    trace = Trace(qid="q", question="?", steps=[step])
    again = Trace.model_validate_json(trace.model_dump_json())
    assert again.steps[0].codes == [Intervention.ECHO] and again.has(Intervention.ECHO, kind="guard")
    assert not again.has(Intervention.ECHO, kind="judge") and not again.has(Intervention.JUDGE_REFUSED)
    with pytest.raises(ValueError, match="2 interventions but 1 codes"):
        TraceStep(kind="guard", interventions=["a", "b"], codes=[Intervention.ECHO])


def test_a_trace_stored_before_codes_cannot_answer():
    legacy = TraceStep.model_validate({"kind": "guard", "interventions": ["not an answer (echo): copied"]})
    with pytest.raises(ValueError, match="before interventions carried codes"):
        legacy.has(Intervention.ECHO)
    assert TraceStep(kind="guard").has(Intervention.ECHO) is False  # no interventions at all: a plain no


def _text_matches(tree: ast.AST) -> list[int]:
    """Lines where a loop over ``….interventions`` tests its items with ``in`` or ``startswith``/``endswith``,
    or where ``"…" in ….interventions`` / ``" ".join(….interventions)`` is matched."""
    def over_interventions(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "interventions"

    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            for gen in node.generators:
                if not over_interventions(gen.iter) or not isinstance(gen.target, ast.Name):
                    continue
                var = gen.target.id
                for sub in ast.walk(node):
                    if (isinstance(sub, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn)) for o in sub.ops)
                            and any(isinstance(x, ast.Name) and x.id == var for x in [sub.left, *sub.comparators])):
                        found.append(node.lineno)
                    if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
                            and sub.func.attr in ("startswith", "endswith")
                            and isinstance(sub.func.value, ast.Name) and sub.func.value.id == var):
                        found.append(node.lineno)
        if isinstance(node, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn)) for o in node.ops):
            for x in node.comparators:
                joined = (isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and x.func.attr == "join"
                          and x.args and over_interventions(x.args[0]))
                if over_interventions(x) or joined:
                    found.append(node.lineno)
    return sorted(set(found))


def _sources() -> list[Path]:
    return sorted([*ROOT.glob("rag_lab/**/*.py"), *ROOT.glob("notebooks/*.py")])


def test_no_consumer_matches_intervention_text():
    offenders = {str(p.relative_to(ROOT)): lines for p in _sources()
                 if (lines := _text_matches(ast.parse(p.read_text(), filename=str(p))))}
    assert not offenders, f"match the intervention's code (trace.has(Intervention.X)), not its text: {offenders}"


def test_the_text_match_check_can_fail():
    planted = ('a = [q for q, t in traces if any("upgraded" in i for s in t.steps for i in s.interventions)]\n'
               'b = any(i.startswith("not an answer") for i in guard.interventions)\n'
               'c = "zero-yield" in " ".join(trace.interventions)\n'
               'd = trace.has(Intervention.ECHO)\n')
    assert _text_matches(ast.parse(planted)) == [1, 2, 3]


def test_the_pipeline_records_every_intervention_with_its_code():
    """No ``.interventions.append(text)`` and no ``interventions=[…]`` without ``codes=[…]`` in the pipeline."""
    for path in sorted((ROOT / "rag_lab" / "pipeline").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "interventions"
                    and path.name != "trace.py"):
                pytest.fail(f"{path.name}:{node.lineno} appends an intervention without its code: use step.intervene")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "TraceStep":
                keys = {k.arg for k in node.keywords}
                assert "interventions" not in keys or "codes" in keys, f"{path.name}:{node.lineno}: interventions= without codes="
