"""The course's notebooks are built the way notebooks/README.md says: every listed notebook exists with
its Jupytext pair in sync and no stored outputs, a banner, a story, a widget cell that runs the full
pipeline, a paired-difference finding that is asserted, exercises and working previous/next links; every
asserted finding declares its kind, joins the notebook's family (fixed sequence), and the banner names the kinds; and every
notebook is thin: at most 50 lines of code, no function or class defined in it (the package holds the logic).

(nbmake runs each notebook; this checks the structure nbmake cannot see.)"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import jupytext
import nbformat
import pytest

from rag_lab.evaluation.catalog import is_outcome
from tools.course.banners import quoted_keys

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
COURSE = [
    "00_quickstart", "01_round_cap", "02_budget_disclosure", "03_zero_yield_stop", "04_hyde", "05_crag_thresholds",
    "06_truncation", "07_search_budget", "08_query_rewrite", "09_judge_input", "10_router", "11_source_contract",
    "12_controller_validation", "13_citation_guard", "14_capstone", "15_real_data", "16_real_model",
]
WIDGET = re.compile(r"\b(PolicyExplorer|SweepPanel)\(")
RUN = re.compile(r"\.run\(")
LINK = re.compile(r"\]\((\d\d_[a-z_]+)\.ipynb\)")


def _cells(name: str) -> list[tuple[str, str]]:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    return [(c.cell_type, c.source) for c in nb.cells]


def test_the_course_lists_every_notebook_and_nothing_else():
    present = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    assert present == COURSE, f"notebooks/ has {present}, the course lists {COURSE}"
    readme = (NOTEBOOKS / "README.md").read_text()
    missing = [n for n in COURSE if f"({n}.ipynb)" not in readme]
    assert not missing, f"notebooks/README.md does not link {missing}"


@pytest.mark.parametrize("name", [*COURSE, "explorer_demo"])
def test_pair_is_in_sync_and_outputs_are_stripped(name):
    ipynb, py = NOTEBOOKS / f"{name}.ipynb", NOTEBOOKS / f"{name}.py"
    assert py.exists(), f"{py.name} missing: run `jupytext --set-formats ipynb,py:percent notebooks/{name}.ipynb`"
    from_py = jupytext.read(py)
    from_ipynb = nbformat.read(ipynb, as_version=4)
    a = [(c.cell_type, c.source.strip()) for c in from_ipynb.cells]
    b = [(c.cell_type, c.source.strip()) for c in from_py.cells]
    assert a == b, (f"{ipynb.name} and {py.name} differ (first differing cell "
                    f"{next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))}); "
                    f"run `jupytext --sync notebooks/{py.name}`")
    nbformat.validate(from_ipynb)  # e.g. cell ids in an nbformat 4.4 file (scripts/sync_notebooks.sh fixes it)
    with_outputs = [i for i, c in enumerate(from_ipynb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert not with_outputs, f"{ipynb.name}: cells {with_outputs} have stored outputs (the HTML export keeps them)"


@pytest.mark.parametrize("name", COURSE)
def test_notebook_has_every_part_of_a_lesson(name):
    cells = _cells(name)
    markdown = "\n".join(s for t, s in cells if t == "markdown")
    code = "\n".join(s for t, s in cells if t == "code")
    assert cells and cells[0][0] == "markdown" and cells[0][1].startswith("# "), f"{name}: the first cell is the title"
    assert "> **Finding type:**" in cells[0][1], f"{name}: no '> **Finding type:**' banner in the first cell"
    assert "## The story" in markdown, f"{name}: no '## The story' section"
    assert "## Try this" in markdown, f"{name}: no '## Try this' exercises"
    assert WIDGET.search(code) and RUN.search(code), f"{name}: no widget cell (PolicyExplorer/SweepPanel) that runs"
    if name in ASSERTS_FACTS:
        return
    assert "paired_finding(" in code and re.search(r"assert \w+\.holds, \w+\.message", code), (
        f"{name}: no asserted paired finding (`assert finding.holds, finding.message`)")
    assert "cost_quality_figure(" in code or name in ("00_quickstart", "16_real_model"), (
        f"{name}: no static cost-vs-quality figure from rag_lab.figures")
    assert "DESIGN.md §" not in markdown, f"{name}: 'DESIGN.md §' points outside the repository"


@pytest.mark.parametrize("name", COURSE)
def test_previous_and_next_links(name):
    last = next(s for t, s in reversed(_cells(name)) if t == "markdown")
    links = LINK.findall(last)
    i = COURSE.index(name)
    expected = [n for n in (COURSE[i - 1] if i > 0 else None, COURSE[i + 1] if i + 1 < len(COURSE) else None) if n]
    assert links == expected, f"{name}: the last markdown cell links {links}, expected previous/next {expected}"


# ---------------------------------------------------------------- the kinds of the asserted findings

#: The phrase a banner uses for each kind of finding.
KIND_PHRASES = {"measured": "measured", "by_construction": "by construction", "definitional": "definitional"}
#: Notebooks that assert plain facts instead of paired findings, with the reason.
ASSERTS_FACTS: dict[str, str] = {}
#: Notebooks exempt from "a measured headline and a measured outcome finding", with the reason.
EXEMPT = {
    "14_capstone": "its two measured findings (one round, append) are printed with their tests, not asserted (notebooks "
                   "01 and 06 assert them); only HyDE's definitional price is",
    "09_judge_input": "its measured effect (with-evidence vs draft-only judge: a handful of discordant questions) is not "
                      "significant: reported, not asserted; only the definitional price is",
    "08_query_rewrite": "its measured effects (the alias gain, the comparison loss: a handful of discordant questions "
                        "each) are printed with their tests, not asserted; only the definitional price is",
}


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to string constants (``COST, QUALITY = "cost_llm_calls", "quality_..."``)."""
    out: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = (zip(target.elts, node.value.elts, strict=False)
                     if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) else [(target, node.value)])
            for name, value in pairs:
                if isinstance(name, ast.Name) and isinstance(value, ast.Constant) and isinstance(value.value, str):
                    out[name.id] = value.value
    return out


def asserted_findings(code: str) -> tuple[list[dict], list[int]]:
    """Each finding the notebook asserts (``assert x.holds, x.message``), in assert order: its variable, the
    declared ``kind`` (None when not a literal), its metric, whether it joins a family and has a control; and
    the ``size`` of every ``FindingFamily`` the notebook declares."""
    tree = ast.parse(code)
    consts = _constants(tree)
    calls: dict[str, ast.Call] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "paired_finding" and isinstance(node.targets[0], ast.Name)):
            calls[node.targets[0].id] = node.value
    asserts = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Assert) and isinstance(n.test, ast.Attribute)
                      and n.test.attr == "holds"), key=lambda n: n.lineno)
    asserted = [n.test.value.id for n in asserts]
    out = []
    for name in asserted:
        call = calls.get(name)
        keywords = {k.arg: k.value for k in call.keywords} if call else {}
        kind = keywords.get("kind")
        metric = call.args[1] if call and len(call.args) > 1 else None
        metric = (metric.value if isinstance(metric, ast.Constant) else consts.get(metric.id)
                  if isinstance(metric, ast.Name) else None)
        out.append({"name": name, "call": call is not None, "metric": metric, "family": "family" in keywords,
                    "kind": kind.value if isinstance(kind, ast.Constant) else None,
                    "control": "control" in keywords})
    sizes = [int(k.value.value) for n in ast.walk(tree) if isinstance(n, ast.Call)
             and getattr(n.func, "id", None) == "FindingFamily" for k in n.keywords if k.arg == "size"]
    return out, sizes


def _banner_kinds(banner: str) -> list[str]:
    """The kinds a banner names, in the order it first names them."""
    text = " ".join(line.lstrip("> ").strip() for line in banner.splitlines() if line.startswith(">")).lower()
    found = [(text.find(phrase), kind) for kind, phrase in KIND_PHRASES.items() if phrase in text]
    return [kind for _, kind in sorted(found)]


@pytest.mark.parametrize("name", COURSE)
def test_asserted_findings_declare_a_kind_that_the_banner_names(name):
    cells = _cells(name)
    code = "\n".join(s for t, s in cells if t == "code")
    if name in ASSERTS_FACTS:
        return
    findings, sizes = asserted_findings(code)
    assert findings, f"{name}: no asserted finding"
    for f in findings:
        assert f["call"], f"{name}: {f['name']} is asserted but not made by paired_finding(...)"
        assert f["kind"] in KIND_PHRASES, (f"{name}: paired_finding for {f['name']} declares no kind= "
                                           f"(measured | by_construction | definitional)")
        assert f["family"], f"{name}: {f['name']} is asserted without family= (the notebook's family of findings)"
        assert f["kind"] != "by_construction" or f["control"], f"{name}: by-construction {f['name']} has no control="
    assert sizes == [len(findings)], (f"{name}: FindingFamily(size=...) must be declared once with the number of "
                                      f"asserted findings ({len(findings)}), got {sizes}")
    banner = cells[0][1][cells[0][1].index("> **Finding type:**"):]
    named = _banner_kinds(banner)
    kinds = {f["kind"] for f in findings}
    assert kinds <= set(named), f"{name}: the banner names {named}, the asserted findings are {sorted(kinds)}"
    headline = findings[0]
    if name in EXEMPT:
        return
    assert headline["kind"] != "definitional", f"{name}: the headline (first asserted) finding is definitional"
    assert named[0] == headline["kind"], (f"{name}: the banner names {KIND_PHRASES[named[0]]!r} first, but the "
                                          f"headline finding {headline['name']} is {headline['kind']}")
    if headline["kind"] == "measured":
        outcome = [f for f in findings if f["kind"] == "measured" and is_outcome(f["metric"])]
        assert outcome, f"{name}: a measured headline notebook asserts no measured finding on an outcome metric"


def test_the_kind_check_can_fail():
    """The parser sees a missing kind, a missing family, a definitional headline and a banner that names the
    wrong kind first."""
    code = ('QUALITY = "quality_answer_containment_strict"\nF = FindingFamily(size=2)\n'
            'a = paired_finding(r, QUALITY, candidate={}, kind="definitional", family=F)\n'
            'b = paired_finding(r, "cost_llm_calls", candidate={})\nassert a.holds, a.message\nassert b.holds, b.message\n')
    findings, sizes = asserted_findings(code)
    assert [(f["name"], f["kind"], f["family"], f["metric"]) for f in findings] == [
        ("a", "definitional", True, "quality_answer_containment_strict"), ("b", None, False, "cost_llm_calls")]
    assert sizes == [2]
    assert _banner_kinds("> **Finding type:** by construction (a knob), the rest measured.") == [
        "by_construction", "measured"]


# ---------------------------------------------------------------- thin notebooks

#: The most lines of code (non-blank, non-comment lines of code cells) a notebook may hold.
MAX_CODE_LINES = 50
#: Notebooks still above the limit, with the size they may not exceed (they only shrink; thin one, then
#: lower or remove its entry).
NOT_YET_THIN: dict[str, int] = {}


def code_lines(cells: list[tuple[str, str]]) -> int:
    """Non-blank lines of the code cells that are not comments."""
    return sum(1 for t, s in cells if t == "code" for line in s.splitlines()
               if line.strip() and not line.strip().startswith("#"))


def definitions(cells: list[tuple[str, str]]) -> list[str]:
    """``def``/``class`` statements in the code cells (IPython magics are dropped before parsing)."""
    code = "\n".join(line for t, s in cells if t == "code" for line in s.splitlines()
                     if not line.lstrip().startswith(("%", "!")))
    return [f"{type(n).__name__} {n.name} (line {n.lineno})" for n in ast.walk(ast.parse(code))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


@pytest.mark.parametrize("name", [*COURSE, "explorer_demo"])
def test_notebook_is_thin(name):
    cells = _cells(name)
    defined = definitions(cells)
    assert not defined, f"{name} defines {defined}: move the helper into the package (and test it there)"
    limit = NOT_YET_THIN.get(name, MAX_CODE_LINES)
    n = code_lines(cells)
    assert n <= limit, (f"{name} has {n} lines of code, more than {limit}: move logic into the package "
                        f"(lessons.contrasts, the lesson's own module in lessons, rag_lab.evaluation.trace_facts, "
                        f"lessons.notebook)")
    if name in NOT_YET_THIN:
        assert n > MAX_CODE_LINES, f"{name} is thin now ({n} lines): remove it from NOT_YET_THIN"


def test_the_thinness_check_can_fail():
    fat = [("markdown", "# title"), ("code", "import x\n\n# a comment\n" + "y = 1\n" * 50)]
    assert code_lines(fat) == 51
    helper = [("code", "%matplotlib inline\ndef helper(a):\n    return a\nclass K:\n    pass\nf = lambda a: a")]
    assert definitions(helper) == ["FunctionDef helper (line 1)", "ClassDef K (line 3)"]


def _banner_text(name: str) -> str:
    first = _cells(name)[0][1]
    return " ".join(line.lstrip(">").strip() for line in first.splitlines() if line.startswith(">"))


def test_every_headline_notebook_quotes_where_its_findings_hold():
    """Each finding of the robustness table is quoted by its notebook (``robustness.quote("key")`` or
    ``findings_markdown(..., where=["key"])``), so the notebook says where its finding holds and where it does not."""
    from lessons.robustness import HEADLINE_FINDINGS

    for finding in HEADLINE_FINDINGS:
        code = "\n".join(src for kind, src in _cells(finding.notebook) if kind == "code")
        assert finding.key in quoted_keys(code), f"{finding.notebook} does not quote its robustness row {finding.key!r}"


@pytest.mark.parametrize("name", COURSE)
def test_banner_says_where_the_findings_hold(name):
    """Every banner has a "Where it holds:" clause; for each robustness row the notebook quotes, the clause
    carries :func:`~tools.course.banners.where_line` of the shipped table word for word (so it changes
    when the table does)."""
    from tools.course.banners import where_line

    banner = _banner_text(name)
    assert "**Where it holds:**" in banner, f"{name}: the banner does not say where its finding holds"
    code = "\n".join(s for t, s in _cells(name) if t == "code")
    for key in quoted_keys(code):
        words = where_line(key)
        assert words in banner, f"{name}: the banner does not say where {key!r} holds; the robustness table says: {words!r}"


# ---------------------------------------------------------------- numbers in prose come from the run

#: Shapes of a measured number typed into prose: a p-value, questions lost or gained, a count of discordant
#: or differing questions, a signed difference.
MEASURED_NUMBER = re.compile(
    r"\bp\s*(?:[=≈]|<(?!\s*0?\.05\b))\s*0?\.\d"
    r"|\b\d+\s+(?:questions?\s+)?(?:lost|gained|lose|gain|gains|loses)\b"
    r"|\b\d+ of (?:the )?\d+ (?:discordant|answerable questions differ|questions differ)"
    r"|\b(?:one|two|three|\d+) questions? of \d+ differs?"
    r"|(?<![\w.])[+−]0\.\d{2,}")
#: Numbers a lesson quotes from a source outside the run (a paper, an article), with the source.
EXTERNAL_NUMBERS = {
    "05_crag_thresholds": ["0.59 / −0.99"],  # the CRAG paper's thresholds
}


def typed_measurements(name: str, cells: list[tuple[str, str]]) -> list[str]:
    """The measured numbers typed into a lesson's markdown or code comments (not rendered from a result)."""
    text = "\n".join(s if t == "markdown" else "\n".join(line for line in s.splitlines() if line.lstrip().startswith("#"))
                     for t, s in cells)
    for quote in EXTERNAL_NUMBERS.get(name, []):
        text = text.replace(quote, "")
    return [m.group(0) for m in MEASURED_NUMBER.finditer(text)]


@pytest.mark.parametrize("name", COURSE)
def test_prose_quotes_no_typed_measurement(name):
    """A measured number in a lesson's prose is rendered from the run (``findings_markdown``, a printed table),
    never typed: typed numbers go stale when the simulator or the world changes."""
    typed = typed_measurements(name, _cells(name))
    assert not typed, (f"{name}: measured numbers typed into the prose {typed}: render them from the finding "
                       f"(lessons.findings_markdown) or print them from the result")


def test_the_typed_measurement_check_can_fail():
    cells = [("markdown", "it loses 7 questions lost and 1 gained of 105 (exact p = 0.070), Δ +0.117"),
             ("code", "# (one question of 56 differs)\nx = 1  # p = 0.5 in code is not prose"),
             ("markdown", "thresholds 0.59 / −0.99, margin ±0.05, cap 0.5, sweep 0.2 to 0.5, alpha p < 0.05")]
    assert typed_measurements("05_crag_thresholds", cells) == ["7 questions lost", "1 gained", "p = 0.0", "+0.117",
                                                               "one question of 56 differs"]


# ---------------------------------------------------------------- exercises cite names that exist

NAME_IN_TICKS = re.compile(r"`([^`]+)`")


def _exercise_text(cells: list[tuple[str, str]], code: bool = False) -> str:
    """The markdown from ``## Try this`` on; without the answers' fenced code unless ``code``."""
    md = "\n".join(s for t, s in cells if t == "markdown")
    text = md[md.index("## Try this"):] if "## Try this" in md else ""
    return text if code else FENCE.sub("", text)


FENCE = re.compile(r"```python\n(.*?)```", re.S)
EXERCISE = re.compile(r"^(\d+)\. ", re.M)


def _code_of(cells: list[tuple[str, str]]) -> str:
    """The notebook's code cells as one program, without IPython magics and shell lines."""
    return "\n".join(line for t, s in cells if t == "code" for line in s.splitlines()
                     if not line.lstrip().startswith(("%", "!")))


def _bound_names(tree: ast.AST) -> set[str]:
    """Names ``tree`` assigns or imports (the head of a dotted import)."""
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return bound | {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                    if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}


def unresolved_names(cells: list[tuple[str, str]]) -> list[str]:
    """Names an exercise cites in backticks that do not exist: a ``rag_lab.…`` name that does not import or
    resolve, an UPPER_CASE variable or a ``name[...]``/``name.attr``/``name(...)`` reference whose head the
    notebook's code never binds."""
    import importlib

    bound = _bound_names(ast.parse(_code_of(cells)))
    missing = []
    for token in NAME_IN_TICKS.findall(_exercise_text(cells)):
        token = token.strip()
        dotted = re.fullmatch(r"rag_lab(?:\.\w+)+", token)
        if dotted:
            parts = token.split(".")
            for i in range(len(parts), 0, -1):
                try:
                    obj = importlib.import_module(".".join(parts[:i]))
                except ImportError:
                    continue
                try:
                    for attr in parts[i:]:
                        obj = getattr(obj, attr)
                except AttributeError:
                    missing.append(token)
                break
            else:
                missing.append(token)
            continue
        head = re.match(r"([A-Za-z_]\w*)(?=[\[(.]|$)", token)
        if not head:
            continue
        name = head.group(1)
        is_variable = re.fullmatch(r"[A-Z][A-Z0-9_]+", name) or (token != name and re.match(r"[a-z_]\w*[\[(]", token))
        if is_variable and name not in bound:
            missing.append(token)
    return missing


@pytest.mark.parametrize("name", COURSE)
def test_exercises_cite_names_that_exist(name):
    missing = unresolved_names(_cells(name))
    assert not missing, f"{name}: the exercises cite {missing}, which the notebook does not define"


def test_the_exercise_name_check_can_fail():
    cells = [("code", "from rag_lab.figures import cost_quality_info\nspec = {}\nKNOBS = {}"),
             ("markdown", "## Try this\n1. Set it in `BACKEND`, `KNOBS` or `spec[\"backend\"]`; call "
                          "`cost_quality_info(...)`, `lost[0]`, `rag_lab.figures.cost_quality_info`, "
                          "`rag_lab.figures.no_such_thing`, `rag_lab.nope`; keys `crag.lower`, `\"sloppy\"`.")]
    assert unresolved_names(cells) == ["BACKEND", "lost[0]", "rag_lab.figures.no_such_thing", "rag_lab.nope"]


# ---------------------------------------------------------------- exercises with answers


def exercise_answers(cells: list[tuple[str, str]]) -> list[dict]:
    """Each numbered exercise of ``## Try this``: whether it has an unfoldable answer (``<details>``) that says
    what to expect (``**Expect:**``), and the names its answer code reads that neither it nor the notebook binds."""
    import builtins

    bound = _bound_names(ast.parse(_code_of(cells))) | set(dir(builtins)) | {"display"}
    text = _exercise_text(cells, code=True)
    starts = [m.start() for m in EXERCISE.finditer(text)]
    out = []
    for i, start in enumerate(starts):
        item = text[start:starts[i + 1] if i + 1 < len(starts) else len(text)]
        details = re.search(r"<details>(.*?)</details>", item, re.S)
        unbound: list[str] = []
        for snippet in FENCE.findall(item):
            snippet_tree = ast.parse(snippet)
            lambda_args = {a.arg for n in ast.walk(snippet_tree) if isinstance(n, ast.Lambda) for a in n.args.args}
            own = _bound_names(snippet_tree) | lambda_args
            unbound += sorted({n.id for n in ast.walk(snippet_tree) if isinstance(n, ast.Name)
                               and isinstance(n.ctx, ast.Load)} - bound - own)
        out.append({"n": int(EXERCISE.match(item).group(1)), "answer": bool(details),
                    "expect": bool(details and "**Expect:**" in details.group(1)), "unbound": unbound})
    return out


@pytest.mark.parametrize("name", COURSE)
def test_every_exercise_says_what_to_expect_and_has_an_answer(name):
    answers = exercise_answers(_cells(name))
    assert answers, f"{name}: no numbered exercises under '## Try this'"
    assert [a["n"] for a in answers] == list(range(1, len(answers) + 1)), f"{name}: exercises are not numbered 1..n"
    bare = [a["n"] for a in answers if not (a["answer"] and a["expect"])]
    assert not bare, f"{name}: exercises {bare} have no <details> answer saying **Expect:**"
    unbound = {a["n"]: a["unbound"] for a in answers if a["unbound"]}
    assert not unbound, f"{name}: answer code reads names the notebook does not bind: {unbound}"


def test_the_answer_check_can_fail():
    cells = [("code", "spec = {}\nCOST = 'c'"),
             ("markdown", "## Try this\n\n1. Do it.\n\n<details><summary>a</summary>\n\n**Expect:** x\n\n"
                          "```python\nnew = lesson_sweep(spec, COST)\nnew.table\n```\n\n</details>\n\n"
                          "2. And this.\n\n3. And that.\n<details>no expectation</details>\n")]
    assert exercise_answers(cells) == [{"n": 1, "answer": True, "expect": True, "unbound": ["lesson_sweep"]},
                                       {"n": 2, "answer": False, "expect": False, "unbound": []},
                                       {"n": 3, "answer": True, "expect": False, "unbound": []}]


# ---------------------------------------------------------------- the lesson map


def test_the_committed_lesson_map_is_the_generated_one():
    """notebooks/README.md's lesson map is what ``python -m tools.course map`` writes from the notebooks and
    notebooks/run_times.json; every lesson has a run time."""
    from tools.course.map import committed_map, lesson_map

    generated = lesson_map(NOTEBOOKS)
    assert committed_map(NOTEBOOKS) == generated, "notebooks/README.md's lesson map is stale: run `python -m tools.course map`"
    untimed = [line.split(" | ")[1] for line in generated.splitlines() if line.rstrip().endswith("| – |")]
    assert not untimed, f"lessons without a run time in notebooks/run_times.json: {untimed}"


def test_the_library_imports_none_of_the_course_tooling():
    """``tools/`` (the lesson map, the banners, the robustness table's run and writer) is not in the wheel: no module
    of ``rag_lab`` imports it, so the library runs without the repository around it."""
    package = NOTEBOOKS.parent / "rag_lab"
    offenders = [str(p.relative_to(package.parent)) for p in sorted(package.rglob("*.py"))
                 if re.search(r"^\s*(from|import)\s+tools\b", p.read_text(encoding="utf-8"), re.M)]
    assert not offenders, f"library modules importing the course tooling in tools/: {offenders}"


def test_the_lesson_map_reads_each_notebook(tmp_path):
    """A lesson's row: the first asserted finding's claim (an f-string over a constant too), its kind, a
    definitional-only lesson's printed measured effects, the banner's where clause and the run time."""
    import json

    from tools.course.map import BEGIN, END, lesson_map, write_lesson_map

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 07 · A lesson\n\n> **Finding type:** definitional.\n>\n"
                                              "> **Where it holds:** on the world | only."),
                nbformat.v4.new_code_cell('N = 600\nm = paired_finding(r, "q", candidate={}, kind="measured", '
                                          'claim=f"{N} tokens")\n'
                                          'd = paired_finding(r, "c", candidate={}, kind="definitional", family=F, '
                                          'claim="a " "call")\nassert d.holds, d.message')]
    nbformat.write(nb, tmp_path / "07_lesson.ipynb")
    (tmp_path / "README.md").write_text(f"intro\n{BEGIN}\nSTALE ROW\n{END}\nrest\n")
    (tmp_path / "times.json").write_text(json.dumps({"seconds": {"07_lesson": 41.26}}))
    write_lesson_map(tmp_path, tmp_path / "times.json")
    row = ("| 07 | [A lesson](07_lesson.ipynb) | a call | definitional; measured effects printed, not asserted | "
           "on the world \\| only. | 41 s |")
    assert row in lesson_map(tmp_path).splitlines()
    readme = (tmp_path / "README.md").read_text()
    assert readme.startswith(f"intro\n{BEGIN}\n") and "STALE ROW" not in readme and readme.endswith(f"{END}\nrest\n")


# ---------------------------------------------------------------- the lesson's code, findable

PRIVATE_METHOD = re.compile(r"`(_[A-Z]\w*)\.(\w+)`")
SOURCE_PATH = re.compile(r"`(rag_lab/[\w/]+\.py)`")


@functools.cache
def _package_sources(root: Path) -> tuple[str, ...]:
    """The text of every module of the package under ``root``, read once per test session."""
    return tuple(p.read_text(encoding="utf-8") for p in (root / "rag_lab").rglob("*.py"))


def missing_code(text: str, root: Path = NOTEBOOKS.parent) -> list[str]:
    """The private ``_Class.method`` names and ``rag_lab/….py`` paths ``text`` cites in backticks that the package
    does not have (a class of that name with that method in one module; a file at that path)."""
    missing = [path for path in SOURCE_PATH.findall(text) if not (root / path).is_file()]
    for cls, method in PRIVATE_METHOD.findall(text):
        if not any(re.search(rf"^class {cls}\b", s, re.M) and re.search(rf"^    def {method}\(", s, re.M)
                   for s in _package_sources(root)):
            missing.append(f"{cls}.{method}")
    return missing


@pytest.mark.parametrize("name", COURSE)
def test_the_code_a_lesson_points_to_exists(name):
    text = "\n".join(s for t, s in _cells(name) if t == "markdown")
    assert not missing_code(text), f"{name} points to code the package does not have: {missing_code(text)}"


def test_the_code_pointer_check_can_fail():
    text = "In `_OneQuestion._act` of `rag_lab/pipeline/pipeline.py`; `_QuestionRun._act`, `rag_lab/nope.py`."
    assert missing_code(text) == ["rag_lab/nope.py", "_QuestionRun._act"]
