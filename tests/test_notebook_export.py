"""`python -m tools.course export`: executes notebooks in a real kernel, writes HTML with the outputs and an
index; a failing notebook is written too, marked failed, and the others still run."""

from __future__ import annotations

import nbformat
import pytest

from tools.course.__main__ import main
from tools.course.export import export_notebooks

pytestmark = [pytest.mark.timeout(300), pytest.mark.notebook]


def _notebook(path, *sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {path.stem} title")] + [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, path)


def test_export_writes_html_with_outputs_and_an_index(tmp_path, capsys):
    src, out = tmp_path / "nb", tmp_path / "out"
    src.mkdir()
    _notebook(src / "00_good.ipynb", "import os\nprint('cwd', os.path.basename(os.getcwd()), 6 * 7)",
              "import plotly.graph_objects as go\ngo.Figure(go.Bar(y=[1, 2]))")
    _notebook(src / "01_bad.ipynb", "raise ValueError('the broken cell')", "print('never')")
    _notebook(src / "02_after.ipynb", "print('still ran')")
    (src / "scratch.ipynb").write_text("not a course notebook")  # not NN_*: ignored

    results = export_notebooks(src, out, echo=lambda _line: None)
    assert [r.name for r in results] == ["00_good", "01_bad", "02_after"]
    assert [r.ok for r in results] == [True, False, True] and "the broken cell" in results[1].error
    good = (out / "00_good.html").read_text()
    assert "cwd nb 42" in good  # executed in the notebooks folder, output kept
    assert "plotly" in good and len(good) > 1_000_000  # plotly.js itself is embedded: opens offline
    assert "the broken cell" in (out / "01_bad.html").read_text()
    assert "still ran" in (out / "02_after.html").read_text()
    index = (out / "index.html").read_text()
    assert "00_good title" in index and "failed: ValueError: the broken cell" in index and index.count("<tr>") == 4

    assert main(["export", "--notebooks", str(src), "--out", str(out), "--only", "02"]) == 0
    assert "1 of 1 notebooks ok" in capsys.readouterr().out
    assert main(["export", "--notebooks", str(src), "--out", str(out), "--only", "01_bad"]) == 1
    assert main(["export", "--notebooks", str(src), "--out", str(out), "--only", "99"]) == 2
    assert "no notebook matches ['99']" in capsys.readouterr().err
