"""LLM infrastructure: cost ledger, response cache, scripted backend, structured-output validation."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from recording import Recording

from rag_lab.llm.base import Completion, LLMBackend, LLMRequest, Message, SamplingParams, Usage
from rag_lab.llm.cache import CachedBackend, ResponseCache
from rag_lab.llm.ledger import (
    DEFAULT_PRICES,
    CostSummary,
    Ledger,
    Price,
    PricedCall,
    PriceTable,
)
from rag_lab.llm.schemas import CONTROLLER_ACTIONS, ControllerDecision, JudgeVerdict, Rewrites, RouteDecision
from rag_lab.llm.scripted import ScriptedBackend, ScriptExhaustedError
from rag_lab.llm.structured import validate_output

PROPERTY = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def request(role: str = "answer", text: str = "what is x", schema: type[BaseModel] | None = None, **params) -> LLMRequest:
    return LLMRequest(
        role=role,
        messages=(Message(role="system", content="be brief"), Message(role="user", content=text)),
        response_schema=schema,
        params=SamplingParams(**params),
    )


class Modelled(LLMBackend):
    """A deterministic backend with a speed model; counts its ``_generate`` calls."""

    name = "modelled"

    def __init__(self, model: str = "m1", fail: bool = False) -> None:
        super().__init__(model)
        self.calls = 0
        self.fail = fail

    def _generate(self, request: LLMRequest) -> Completion:
        self.calls += 1
        if self.fail:
            raise ConnectionError("server down")
        words = request.messages[-1].content.split()
        text = " ".join(reversed(words))
        return Completion(
            text=text, usage=Usage(prompt_tokens=10 * len(words), completion_tokens=len(words)), modelled_latency_s=0.25
        )


def run_pipeline(backend: LLMBackend) -> None:
    for role, text in [("route", "a b"), ("controller", "c d e"), ("controller", "f"), ("answer", "g h i j")]:
        backend.complete(request(role, text))


# ---------------------------------------------------------------- prices and ledger


def test_price_lookup_by_model_then_backend_then_default():
    table = PriceTable(
        models={"big-1": Price(input_per_m=5.0, output_per_m=15.0)},
        backends={"openai": Price(input_per_m=1.0, output_per_m=2.0)},
        default=Price(input_per_m=0.5, output_per_m=0.5),
    )
    assert table.price_for("openai", "big-1").input_per_m == 5.0
    assert table.price_for("openai", "other").input_per_m == 1.0
    assert table.price_for("simulator", "other").input_per_m == 0.5
    # 1000 prompt, 200 completion tokens of big-1: (1000*5 + 200*15) / 1e6
    assert table.cost("x", "big-1", 1000, 200) == pytest.approx(0.008)
    assert DEFAULT_PRICES.cost("simulator", "sim", 1_000_000, 1_000_000) == pytest.approx(0.75)
    wider = table.with_prices(models={"small": Price(input_per_m=0.1, output_per_m=0.2)})
    assert wider.price_for("openai", "small").output_per_m == 0.2 and "small" not in table.models
    with pytest.raises(ValueError):
        Price(input_per_m=-1.0, output_per_m=0.0)
    with pytest.raises(ValueError):
        PriceTable(models={" ": Price(input_per_m=1, output_per_m=1)})
    with pytest.raises(ValueError):
        table.default = Price(input_per_m=0, output_per_m=0)  # frozen


def test_ledger_prices_calls_by_hand():
    prices = PriceTable(backends={"modelled": Price(input_per_m=2.0, output_per_m=8.0)})
    recording = Recording(Modelled(), prices)
    run_pipeline(recording)
    ledger = recording.ledger
    # words per call 2, 3, 1, 4 -> prompt 10x, completion 1x
    total = ledger.incurred()
    assert (total.calls, total.prompt_tokens, total.completion_tokens) == (4, 100, 10)
    assert total.cost_usd == pytest.approx((100 * 2.0 + 10 * 8.0) / 1e6)
    assert total.modelled_latency_s == pytest.approx(1.0)
    assert total.total_tokens == 110
    assert ledger.spent() == total
    rec = ledger.records[1]
    assert (rec.role, rec.backend, rec.model, rec.outcome, rec.cached) == ("controller", "modelled", "m1", "text", False)
    assert rec.cost_usd == pytest.approx((30 * 2.0 + 3 * 8.0) / 1e6)


def test_by_role_outcomes_and_rows():
    schema_backend = ScriptedBackend(
        {
            "route": ['{"route": "SIMPLE"}', 'sure: {"route": "COMPLEX"}', "no idea"],
            "controller": ["nope"],
            "answer": ["42 [1]"],
        }
    )
    fallback = RouteDecision(route="COMPLEX", reason="fallback")
    recording = Recording(schema_backend)
    for _ in range(3):
        recording.complete(request("route", schema=RouteDecision), fallback=fallback)
    recording.complete(request("controller", schema=ControllerDecision))
    recording.complete(request("answer"))
    ledger = recording.ledger
    assert ledger.outcomes() == {"valid": 1, "repaired": 1, "fallback": 1, "invalid": 1, "text": 1}
    roles = ledger.by_role()
    assert list(roles) == ["route", "controller", "answer"]
    assert roles["route"].incurred.calls == 3 and roles["route"].spent.calls == 3
    incurred, spent = roles["answer"]
    assert incurred.completion_tokens == 2 and spent == incurred
    invalid = next(r for r in ledger.records if r.outcome == "invalid")
    assert "invalid JSON" in invalid.reason
    rows = ledger.to_dicts()
    assert len(rows) == 5 and set(rows[0]) == set(PricedCall.model_fields)
    frame = ledger.to_frame()
    assert list(frame.columns) == list(PricedCall.model_fields) and len(frame) == 5
    assert ledger.cache_hit_rate == 0.0


def test_empty_ledger():
    ledger = Ledger()
    assert ledger.incurred() == CostSummary() and ledger.cache_hit_rate == 0.0 and ledger.outcomes() == {}
    with pytest.raises(TypeError):
        Ledger(prices={"default": 1})  # type: ignore[arg-type]


def test_a_call_is_recorded_nowhere_behind_the_callers_back():
    """The backend interface writes no ledger (it did on every call, for the tests alone): importing it loads no
    ledger, and a ledger is made from responses in hand."""
    probe = "import sys, rag_lab.llm.base; print('rag_lab.llm.ledger' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "False", "rag_lab.llm.base imports the ledger: does complete() record calls again?"
    responses = [Modelled().complete(request(text=t)) for t in ("a", "b c")]
    assert [r.completion_tokens for r in Ledger.of_responses(responses).records] == [1, 2]


def test_ledgers_add_up():
    backend = Modelled()
    ledgers = []
    for text in ["a", "b c", "d e f"]:
        ledgers.append(Ledger.of_responses([backend.complete(request(text=text))]))
    total = sum(ledgers)
    assert isinstance(total, Ledger) and total.incurred().completion_tokens == 6
    assert (ledgers[0] + ledgers[1]).incurred().calls == 2
    merged = Ledger()
    merged.extend(ledgers[2])
    merged.extend(ledgers[0].records)
    assert [r.completion_tokens for r in merged.records] == [3, 1]
    assert len(ledgers[0]) == 1  # operands unchanged
    with pytest.raises(TypeError):
        merged.extend(["not a record"])  # type: ignore[list-item]


def test_a_ledger_records_from_many_threads():
    recording = Recording(ScriptedBackend({}, default="ok"))
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(recording.complete, [request(text=f"q{i}") for i in range(200)]))
    assert len(recording.ledger) == 200 and len(recording.inner.requests) == 200


# ---------------------------------------------------------------- response cache


def test_second_identical_run_is_all_cache_hits(tmp_path):
    inner = Modelled()
    backend = CachedBackend(inner, ResponseCache(tmp_path / "c.sqlite"))
    assert (backend.name, backend.model, backend.cache_identity()) == ("modelled", "m1", ("modelled", "m1"))
    recording_first, recording_second = Recording(backend), Recording(backend)
    run_pipeline(recording_first)
    assert inner.calls == 4
    run_pipeline(recording_second)
    first, second = recording_first.ledger, recording_second.ledger
    assert inner.calls == 4  # zero backend calls the second time
    one, two = first.incurred(), second.incurred()
    assert (two.calls, two.prompt_tokens, two.completion_tokens) == (one.calls, one.prompt_tokens, one.completion_tokens)
    assert two.cost_usd == pytest.approx(one.cost_usd) and two.cost_usd > 0
    assert two.modelled_latency_s == pytest.approx(one.modelled_latency_s)
    assert second.spent() == CostSummary()
    assert first.spent().cost_usd == pytest.approx(one.cost_usd)
    assert second.cache_hit_rate == 1.0 and first.cache_hit_rate == 0.0
    assert {r.backend for r in second.records} == {"modelled"}
    assert (backend.cache.hits, backend.cache.misses) == (4, 4)
    assert all(r.spent.calls == 0 for r in second.by_role().values())


def test_a_roles_spent_is_what_its_calls_spent(tmp_path):
    """One rule for what was spent (the calls the cache did not answer), for a ledger and for each of its roles."""
    backend = CachedBackend(Modelled(), ResponseCache(tmp_path / "c.sqlite"))
    first, second = Recording(backend), Recording(backend)
    run_pipeline(first)
    run_pipeline(second)  # every call a cache hit
    ledger = first.ledger + second.ledger
    roles = ledger.by_role()
    assert sum(c.spent.calls for c in roles.values()) == ledger.spent().calls == len(ledger) // 2
    assert all(c.spent.calls * 2 == c.incurred.calls for c in roles.values())


def test_cache_is_shared_by_two_instances_on_one_file(tmp_path):
    path = tmp_path / "shared.sqlite"
    a = CachedBackend(Modelled(), ResponseCache(path))
    b_inner = Modelled()
    b = CachedBackend(b_inner, ResponseCache(path))
    first = a.complete(request(text="one two"))
    second = b.complete(request(text="one two"))
    assert b_inner.calls == 0 and second.cached and not first.cached
    assert second.text == first.text == "two one" and second.usage == first.usage
    assert second.modelled_latency_s == first.modelled_latency_s
    assert len(a.cache) == len(b.cache) == 1
    b.cache.clear()
    assert len(a.cache) == 0 and (b.cache.hits, b.cache.misses) == (0, 0)


def test_cache_stores_only_the_generation(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = CachedBackend(Modelled(), cache)
    backend.complete(request(text="secret question"))
    with sqlite3.connect(cache.path) as conn:
        key, name, model, blob = conn.execute("SELECT key, backend, model, generation FROM responses").fetchone()
    assert key == request(text="secret question").cache_key("modelled", "m1")
    assert (name, model) == ("modelled", "m1")
    stored = json.loads(blob)
    assert set(stored) == {"text", "usage", "modelled_latency_s", "knobs"}  # knobs: the simulator's draws
    assert stored["knobs"] == []  # a backend without behaviour knobs stores none


def test_failed_calls_are_not_cached(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    failing = Modelled(fail=True)
    with pytest.raises(ConnectionError):
        CachedBackend(failing, cache).complete(request())
    assert len(cache) == 0
    with pytest.raises(ConnectionError):
        CachedBackend(failing, cache).complete(request())
    assert failing.calls == 2  # tried again: nothing was stored


def test_cache_keys_depend_on_what_determines_the_response():
    base = request(text="q", schema=ControllerDecision)
    key = base.cache_key("openai", "m")
    variants = [
        request(text="q", schema=JudgeVerdict).cache_key("openai", "m"),
        request(text="q").cache_key("openai", "m"),
        request(text="q", schema=ControllerDecision, temperature=0.7).cache_key("openai", "m"),
        request(text="q", schema=ControllerDecision, max_tokens=64).cache_key("openai", "m"),
        request(text="q", schema=ControllerDecision, seed=1).cache_key("openai", "m"),
        request(text="q ", schema=ControllerDecision).cache_key("openai", "m"),
        base.cache_key("openai", "m2"),
        base.cache_key("simulator", "m"),
    ]
    assert len({key, *variants}) == len(variants) + 1
    assert request("judge", text="q", schema=ControllerDecision).cache_key("openai", "m") == key  # role is a label


def test_cache_is_safe_with_several_processes(tmp_path):
    path = tmp_path / "multi.sqlite"
    writer = textwrap.dedent(
        f"""
        import sys
        from rag_lab.llm.base import Completion, Usage
        from rag_lab.llm.cache import ResponseCache
        cache = ResponseCache({str(path)!r})
        for i in range(100):
            cache.put(f"{{sys.argv[1]}}-{{i}}", "b", "m", Completion(text=str(i), usage=Usage()))
            cache.get(f"{{sys.argv[1]}}-{{i // 2}}")
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", writer, name], stderr=subprocess.PIPE) for name in ("p", "q", "r")]
    errors = [p.communicate(timeout=60)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    cache = ResponseCache(path)
    assert len(cache) == 300 and cache.get("q-99").text == "99"


def test_cache_and_wrapper_reject_bad_arguments(tmp_path):
    with pytest.raises(IsADirectoryError):
        ResponseCache(tmp_path)
    with pytest.raises(ValueError):
        ResponseCache(tmp_path / "c.sqlite", timeout_s=0)
    with pytest.raises(TypeError):
        CachedBackend("not a backend")  # type: ignore[arg-type]


# ---------------------------------------------------------------- scripted backend


def test_scripted_backend_plays_scripts_in_order():
    backend = ScriptedBackend(
        {
            "controller": ['{"action": "retrieve_again", "queries": ["x"]}', '{"action": "answer"}'],
            "answer": ["42 [1]"],
            "judge": lambda req: f"saw {len(req.messages)} messages",
        }
    )
    first = backend.complete(request("controller", schema=ControllerDecision))
    second = backend.complete(request("controller", schema=ControllerDecision))
    assert first.parsed == ControllerDecision(action="retrieve_again", queries=["x"]) and first.outcome == "valid"
    assert second.parsed.action == "answer"
    assert backend.remaining("controller") == 0 and backend.remaining("answer") == 1
    answer = backend.complete(request("answer", text="one two three"))
    assert answer.text == "42 [1]" and answer.backend == "scripted"
    assert answer.usage == Usage(prompt_tokens=5, completion_tokens=2)  # "be brief" + "one two three"; "42 [1]"
    assert backend.complete(request("judge")).text == "saw 2 messages"
    assert [r.role for r in backend.requests] == ["controller", "controller", "answer", "judge"]
    assert len(backend.requests_for("controller")) == 2
    with pytest.raises(ScriptExhaustedError, match="'controller' is used up"):
        backend.complete(request("controller"))
    with pytest.raises(ScriptExhaustedError, match="no script for role 'route'"):
        backend.complete(request("route"))


def test_scripted_backend_defaults():
    backend = ScriptedBackend({"answer": ["first"]}, default=lambda req: f"default for {req.role}")
    assert backend.complete(request("answer")).text == "first"
    assert backend.complete(request("answer")).text == "default for answer"
    assert backend.complete(request("route")).text == "default for route"
    assert ScriptedBackend({}, default="same").complete(request()).text == "same"


def test_scripted_backend_validates_its_scripts():
    with pytest.raises(TypeError, match="list of strings"):
        ScriptedBackend({"answer": "42"})
    with pytest.raises(TypeError, match="must hold strings"):
        ScriptedBackend({"answer": ["ok", 42]})
    with pytest.raises(TypeError):
        ScriptedBackend({}, default=42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="returned int"):
        ScriptedBackend({"answer": lambda req: 42}).complete(request())  # type: ignore[arg-type,return-value]


# ---------------------------------------------------------------- structured output (property-based)

OUTCOMES = {"valid", "repaired", "fallback", "invalid"}
FALLBACK = ControllerDecision(action="insufficient", reason="fallback")


@st.composite
def schema_objects(draw) -> BaseModel:
    kind = draw(st.sampled_from(["controller", "judge", "route", "rewrites"]))
    text = st.text(max_size=30)
    if kind == "controller":
        action = draw(st.sampled_from(CONTROLLER_ACTIONS))
        queries = draw(st.lists(text, max_size=3))
        if action == "retrieve_again":
            queries.append(draw(st.text(min_size=1, max_size=20).filter(str.strip)))
        return ControllerDecision(action=action, queries=queries, reason=draw(text))
    if kind == "judge":
        score = draw(st.floats(min_value=0.0, max_value=1.0))
        return JudgeVerdict(verdict=draw(st.sampled_from(["supported", "unsupported"])), score=score, reason=draw(text))
    if kind == "route":
        return RouteDecision(route=draw(st.sampled_from(["SIMPLE", "COMPLEX"])), reason=draw(text))
    return Rewrites(queries=draw(st.lists(text, max_size=3)) + [draw(st.text(min_size=1).filter(str.strip))])


@st.composite
def dumped(draw) -> tuple[BaseModel, str]:
    obj = draw(schema_objects())
    style = draw(st.sampled_from(["pydantic", "indent", "ascii"]))
    if style == "pydantic":
        return obj, obj.model_dump_json()
    return obj, json.dumps(obj.model_dump(), indent=2 if style == "indent" else None, ensure_ascii=style == "ascii")


JSONISH = st.text(alphabet='{}[]":,0123456789.-aeinrstu \n`\\', max_size=200)
ANY_TEXT = st.one_of(st.text(max_size=300), JSONISH)


@PROPERTY
@given(text=ANY_TEXT, schema=st.sampled_from([ControllerDecision, JudgeVerdict, RouteDecision, Rewrites]))
def test_arbitrary_text_never_raises(text, schema):
    parsed, outcome, reason = validate_output(text, schema)
    assert outcome in OUTCOMES
    if outcome == "invalid":
        assert parsed is None and reason
    else:
        assert isinstance(parsed, schema)
    if outcome == "repaired":
        assert reason
    assert validate_output(text, None) == (None, "text", "")


@pytest.mark.slow
@settings(max_examples=3, deadline=None, database=None)
@given(depth=st.integers(min_value=1000, max_value=1200), opener=st.sampled_from(['{"a":', '{"a":[', '{"queries":[{"x":']))
@example(depth=1000, opener='{"a":')
def test_deeply_nested_text_does_not_crash(depth, opener):
    """The repair scan once raised RecursionError from the json module on deeply nested text."""
    text = opener * depth
    assert validate_output(text, ControllerDecision).outcome == "invalid"
    assert validate_output(text, ControllerDecision, FALLBACK).outcome == "fallback"


@PROPERTY
@given(item=dumped(), prefix=st.text(max_size=80), suffix=st.text(max_size=80))
def test_embedded_object_is_recovered(item, prefix, suffix):
    obj, blob = item
    parsed, outcome, reason = validate_output(prefix + blob + suffix, type(obj))
    if not (prefix + suffix).strip():
        assert (outcome, reason, parsed) == ("valid", "", obj)
        return
    assert outcome == "repaired" and reason
    if "{" not in prefix + suffix:  # otherwise the prose may hold another valid object first
        assert parsed == obj


@PROPERTY
@given(item=dumped(), prose=st.text(max_size=60), tag=st.sampled_from(["", "json", "JSON"]), tail=st.text(max_size=60))
def test_fenced_object_is_recovered(item, prose, tag, tail):
    obj, blob = item
    parsed, outcome, reason = validate_output(f"{prose}```{tag}\n{blob}\n```{tail}", type(obj))
    assert outcome == "repaired" and reason
    if "{" not in prose + tail:
        assert parsed == obj


@PROPERTY
@given(text=ANY_TEXT, use_callable=st.booleans())
def test_with_a_fallback_the_outcome_is_never_invalid(text, use_callable):
    reasons: list[str] = []

    def make(reason: str) -> ControllerDecision:
        reasons.append(reason)
        return FALLBACK

    parsed, outcome, reason = validate_output(text, ControllerDecision, make if use_callable else FALLBACK)
    assert outcome in {"valid", "repaired", "fallback"}
    assert isinstance(parsed, ControllerDecision)
    if outcome == "fallback":
        assert parsed == FALLBACK and reason
        assert reasons == ([reason] if use_callable else [])


@PROPERTY
@given(text=st.text(max_size=300).filter(lambda t: "{" not in t))
def test_text_without_braces_is_fallback_or_invalid(text):
    assert validate_output(text, RouteDecision, RouteDecision(route="COMPLEX"))[1] == "fallback"
    parsed, outcome, reason = validate_output(text, RouteDecision)
    assert (parsed, outcome) == (None, "invalid") and reason


def test_a_requests_schema_is_built_once_a_class_and_each_caller_gets_its_own_copy():
    from rag_lab.llm.schemas import ControllerDecision
    from rag_lab.llm.types import LLMRequest, Message, _schema_text

    request = LLMRequest(role="controller", messages=(Message(role="user", content="q"),),
                         response_schema=ControllerDecision)
    first = request.schema_json()
    assert first == ControllerDecision.model_json_schema()
    first["title"] = "changed by a caller"
    assert request.schema_json() == ControllerDecision.model_json_schema()
    assert _schema_text.cache_info().hits >= 1
