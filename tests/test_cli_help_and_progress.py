"""The command line's own rough edges (issue 38): help on every option, a top-level help without RST markup,
``sweep --help`` pointing to the sweep-file format, a bad sweep file refused before the heavy imports, progress
bars on ``eval`` with the model's loading bar kept out of them, Ctrl-C on a sweep saying how to resume, and
``run`` saying right or wrong."""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time

import pytest
import yaml
from killing import REPO, stored_rows
from timing import scaled

from rag_lab.cli import build_parser, main


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...]):
    """Every (command path, action) of ``parser`` and its sub-commands, help actions left out."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*path, name))
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_option_and_positional_of_every_command_has_help():
    actions = list(_walk(build_parser(), ("rag-lab",)))
    assert len(actions) > 100  # the walk reaches the sub-commands
    missing = [f"{' '.join(path)} {'/'.join(a.option_strings) or a.dest}" for path, a in actions
               if not a.help or a.help == argparse.SUPPRESS]
    assert not missing, f"options without help: {missing}"


def test_top_level_help_has_no_rst_markup(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "rag-lab command line" in out and "``" not in out


def test_sweep_help_points_to_the_sweep_file_format(capsys):
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "docs/cli.md, section 'Sweep files'" in out and "--rows CSV" in out
    assert "\n## Sweep files\n" in (REPO / "docs" / "cli.md").read_text(encoding="utf-8")


def test_the_main_job_prints_the_quickstart_report_once():
    script = (REPO / "scripts" / "main.sh").read_text(encoding="utf-8")
    assert script.count('echo "quickstart report:') == 1


def test_a_bad_sweep_file_is_refused_before_the_heavy_imports(tmp_path):
    """The sweep file is validated before the runner imports pandas, scipy.stats or torch (which took ~9 s)."""
    sweep = tmp_path / "bad.yaml"
    sweep.write_text("name: bad\ndataset: world\ngrid: {round_cap.max_rounds: [1, 2]}\nseeds: [0, 0]\n")
    code = ("import sys\nfrom rag_lab.cli import main\n"
            f"status = main(['sweep', {str(sweep)!r}, '--out', {str(tmp_path / 'run')!r}])\n"
            "heavy = [m for m in ('torch', 'sentence_transformers', 'pandas', 'scipy.stats') if m in sys.modules]\n"
            "print(status, heavy)")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=scaled(120))
    seconds = time.perf_counter() - start
    assert "seeds must be distinct" in done.stderr
    assert done.stdout.split() == ["2", "[]"], done.stdout
    assert seconds < 15  # under 2 s on an idle machine; generous for a loaded one


# --- progress --------------------------------------------------------------------------------------------------


def test_eval_shows_a_progress_bar_on_stderr_unless_quiet(capsys):
    assert main(["eval", "--dataset", "world", "--split", "test", "--limit", "3"]) == 0
    captured = capsys.readouterr()
    assert "eval world" in captured.err and "3/3" in captured.err and "eval world" not in captured.out
    assert main(["eval", "--dataset", "world", "--split", "test", "--limit", "3", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.slow   # loads torch and the model in a fresh interpreter: ~15 s idle, 40 s beside a recording
def test_loading_the_embedding_model_draws_no_loading_bar():
    code = ("from rag_lab.embedding.base import packaged_model_path\n"
            "from rag_lab.embedding.sentence_transformer import _load_sentence_transformer\n"
            "from transformers.utils import logging\n"
            "_load_sentence_transformer(str(packaged_model_path()), 'cpu')\n"
            "print(logging.is_progress_bar_enabled())")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=scaled(300))
    assert done.returncode == 0, done.stderr
    assert "Loading weights" not in done.stderr and done.stdout.strip() == "True"  # and the setting is restored


# --- Ctrl-C ----------------------------------------------------------------------------------------------------


@pytest.mark.slow   # a real sweep in a subprocess, interrupted: ~10 s
def test_ctrl_c_on_a_sweep_says_how_to_resume_without_a_traceback(tmp_path):
    sweep = tmp_path / "s.yaml"
    # large and uncached, so that it cannot finish between the first stored rows and the signal (240 cached
    # question runs once finished in 4 s on a busy machine, before the test saw its rows)
    sweep.write_text(yaml.safe_dump({"name": "ctrlc", "dataset": "world", "split": "test", "per_type": 40,
                                     "grid": {"round_cap.max_rounds": [1, 2, 3, 4]}, "backend": {"cache": False}}))
    run_dir = tmp_path / "run"
    args = ["sweep", str(sweep), "--out", str(run_dir)]
    # SIGINT at its default in the child: a test suite started as a background job (nohup, `cmd &` without job
    # control) ignores SIGINT, the child would inherit that and Python would never raise KeyboardInterrupt
    proc = subprocess.Popen([sys.executable, "-m", "rag_lab.cli", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while stored_rows(run_dir) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    last = err.strip().splitlines()[-1]
    assert last == (f"rag-lab: interrupted; the finished questions are kept in {run_dir}; to resume, run the same "
                    f"command: rag-lab {' '.join(args)}")
    assert stored_rows(run_dir) >= 2


def test_ctrl_c_on_another_command_is_one_line_and_status_130(monkeypatch, capsys):
    import rag_lab.cli

    class Parser:  # the real parser, with a handler that Ctrl-C stops
        def parse_args(self, argv):
            args = build_parser().parse_args(argv)
            args.handler = interrupted
            return args

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(rag_lab.cli, "build_parser", Parser)
    assert main(["data", "info", "--dataset", "world"]) == 130
    assert capsys.readouterr().err == "rag-lab: interrupted\n"


# --- run: right or wrong ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("qid", "line"), [
    ("single-000", "verdict: right by the strict answer metric (quality_answer_containment_strict"),
    ("bridge-025", "verdict: wrong by the strict answer metric (quality_answer_containment_strict"),
    ("unanswerable-000", "verdict: no gold answer to match; right (quality_abstention_accuracy"),
])
def test_run_says_right_or_wrong(capsys, qid, line):
    assert main(["run", "--dataset", "world", "--question", qid]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith(line)


def test_run_json_has_the_verdict(capsys):
    assert main(["run", "--dataset", "world", "--question", "single-000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == {"strict": True, "lenient": True, "abstention": True}

