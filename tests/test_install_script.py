"""scripts/install.sh: extras are additive and recorded, so the main job (notebook) and the tests
(dev local onnx) install in either order without reinstalling or removing each other's extras; uv
installs torch's local CPU wheel with the rest when pip's find-links hold it, otherwise torch comes
from pip and the rest from uv; pip alone when uv fails. pip and uv are replaced by recorders;
nothing is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "install.sh", tmp_path / "scripts" / "install.sh")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    for tool in ("pip", "uv"):  # as if pip had installed uv
        recorder = bin_dir / tool
        recorder.write_text(f'#!/bin/sh\necho "{tool} $@" >> "$(dirname "$0")/../pip.log"\n')
        recorder.chmod(0o755)
    return tmp_path


def install(clone: Path, *extras: str, find_links: Path | None = None, bytecode: bool = False) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "RAG_LAB_BYTECODE"}  # the test command sets it
    env["PYTHON"] = shutil.which("python3.11") or sys.executable
    if bytecode:
        env["RAG_LAB_BYTECODE"] = "1"
    if find_links is not None:
        env["PIP_FIND_LINKS"] = str(find_links)
    return subprocess.run(["bash", "scripts/install.sh", *extras], cwd=clone, capture_output=True, text=True, env=env)


def calls(clone: Path) -> list[str]:
    """Every pip / uv command line the installer ran."""
    log = clone / ".venv" / "pip.log"
    return log.read_text().splitlines() if log.exists() else []


def pip_calls(clone: Path) -> list[str]:
    """The project installs (the commands that install ``-e .[extras]``), whichever tool ran them."""
    return [line.split(" -e ", 1)[1] for line in calls(clone) if " -e " in line]


def stamp(clone: Path) -> list[str]:
    return (clone / ".venv" / ".rag_lab-installed").read_text().splitlines()


def test_main_job_first_then_tests_add_their_extras_and_keep_notebook(clone):
    assert install(clone, "notebook").returncode == 0
    assert pip_calls(clone) == [".[notebook]"]
    assert install(clone, "notebook").returncode == 0
    assert len(pip_calls(clone)) == 1  # nothing to do
    assert install(clone, "dev", "local", "onnx").returncode == 0
    assert pip_calls(clone)[-1] == ".[dev,local,notebook,onnx]"
    assert stamp(clone)[1] == "dev local notebook onnx"
    assert install(clone, "notebook").returncode == 0 and install(clone, "dev", "local", "onnx").returncode == 0
    assert len(pip_calls(clone)) == 2


def test_tests_first_then_main_job_adds_notebook_only_once(clone):
    assert install(clone, "dev", "local", "onnx").returncode == 0
    assert pip_calls(clone) == [".[dev,local,onnx]"]
    assert install(clone, "notebook").returncode == 0
    assert pip_calls(clone)[-1] == ".[dev,local,notebook,onnx]"
    assert install(clone, "notebook").returncode == 0 and len(pip_calls(clone)) == 2


def test_a_changed_pyproject_reinstalls_what_was_there_and_an_old_stamp_means_dev_local(clone):
    assert install(clone, "notebook").returncode == 0
    with (clone / "pyproject.toml").open("a") as f:
        f.write("\n# changed\n")
    assert install(clone).returncode == 0
    assert pip_calls(clone)[-1] == ".[notebook]"
    (clone / ".venv" / ".rag_lab-installed").write_text(stamp(clone)[0] + "\n")  # the one-line stamp of old installers
    assert install(clone, "dev").returncode == 0
    assert len(pip_calls(clone)) == 2  # dev (and local) were what the old installer always installed


def test_bytecode_is_compiled_once_per_install_and_only_when_asked(clone):
    python = clone / ".venv" / "bin" / "python"
    python.unlink()  # a recorder of compileall in front of the real interpreter
    python.write_text(f'#!/bin/sh\n[ "$1 $2" = "-m compileall" ] && {{ echo "python $@" >> "$(dirname "$0")/../pip.log"; '
                      f'exit 0; }}\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)

    def compiled() -> int:
        return sum(line.startswith("python -m compileall") for line in calls(clone))

    assert install(clone, "notebook").returncode == 0 and compiled() == 0      # the main job does not ask
    assert install(clone, "notebook", bytecode=True).returncode == 0 and compiled() == 1
    assert install(clone, "notebook", bytecode=True).returncode == 0 and compiled() == 1  # once per install
    assert install(clone, "dev", bytecode=True).returncode == 0 and compiled() == 2       # a new install: again
    assert len(pip_calls(clone)) == 2


def test_an_unknown_extra_is_refused_before_pip_runs(clone):
    result = install(clone, "notebok")
    assert result.returncode == 2 and "unknown extra 'notebok'" in result.stderr
    assert pip_calls(clone) == []


def test_a_local_cpu_torch_wheel_goes_through_uv_with_everything_else(clone, tmp_path):
    links = tmp_path / "wheels"
    links.mkdir()
    (links / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    assert install(clone, "notebook", find_links=links).returncode == 0
    assert calls(clone) == ["pip install --quiet uv",
                            f"uv pip install --quiet --python .venv/bin/python --find-links {links} "
                            "torch==2.13.0+cpu -e .[notebook]"]


@pytest.mark.slow   # out of the quick loop: runs the installer twice over (about 4 s)
def test_torch_from_pip_then_the_project_from_uv_and_pip_alone_when_uv_fails(clone, tmp_path):
    assert install(clone, "notebook", find_links=tmp_path).returncode == 0  # no torch wheel there
    assert calls(clone) == ["pip install --quiet torch==2.13.0 uv",
                            "uv pip install --quiet --python .venv/bin/python torch==2.13.0 -e .[notebook]"]
    (clone / ".venv" / "bin" / "uv").write_text('#!/bin/sh\necho "uv $@" >> "$(dirname "$0")/../pip.log"\nexit 1\n')
    result = install(clone, "dev", find_links=tmp_path)
    assert result.returncode == 0 and "uv failed; installing with pip instead" in result.stderr
    assert calls(clone)[-1] == "pip install --quiet torch==2.13.0 -e .[dev,notebook]"
    env = {**os.environ, "PYTHON": shutil.which("python3.11") or sys.executable, "RAG_LAB_INSTALLER": "pip"}
    (clone / "pyproject.toml").write_text((clone / "pyproject.toml").read_text() + "\n# changed\n")
    n = len(calls(clone))
    assert subprocess.run(["bash", "scripts/install.sh"], cwd=clone, env=env).returncode == 0
    assert calls(clone)[n:] == ["pip install --quiet torch==2.13.0 -e .[dev,notebook]"]


def test_compiled_packages_are_built_portable_never_native(clone):
    """Every build the installer starts sees the portable flags: hnswlib without -march=native, ggml with
    GGML_NATIVE=OFF and no AVX-512 or AMX kernels, and the switches recorded for rag_lab.native_build."""
    uv = clone / ".venv" / "bin" / "uv"
    uv.write_text('#!/bin/sh\nprintf "%s\\n" "HNSWLIB_NO_NATIVE=$HNSWLIB_NO_NATIVE" "CFLAGS=$CFLAGS" "CMAKE_ARGS=$CMAKE_ARGS"'
                  ' > "$(dirname "$0")/../build-env.log"\n')
    assert install(clone, "local").returncode == 0
    env = dict(line.split("=", 1) for line in (clone / ".venv" / "build-env.log").read_text().splitlines())
    assert env["HNSWLIB_NO_NATIVE"] == "1"
    assert "-march=x86-64-v3" in env["CFLAGS"] and "-frecord-gcc-switches" in env["CFLAGS"]
    assert "native" not in env["CFLAGS"]
    cmake = env["CMAKE_ARGS"].split()
    assert "-DGGML_NATIVE=OFF" in cmake and "-DGGML_AVX2=ON" in cmake
    assert {"-DGGML_AVX512=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_TILE=OFF"} <= set(cmake)
