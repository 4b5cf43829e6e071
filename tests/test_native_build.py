"""What the compiled extensions were built for (rag_lab.native_build): the installed hnswlib and
llama-cpp-python must be portable x86-64-v3 code, on whatever machine the tests run. A build made with
the compiler's native flags fails here on the machine it was built on too — AMD included — not only on
the other kind of machine, where it would die with SIGILL.

The checks read what was compiled in: the compile lines that ``-frecord-gcc-switches`` keeps in each
library, and ggml's own ``llama_print_system_info()``. The planted cases build a real shared library
with the compiler's native flags and show it caught."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rag_lab import native_build
from rag_lab.llm.local.backend import llama_cpp_available

REQUIRE_LOCAL = os.environ.get("RAG_LAB_REQUIRE_LOCAL_MODEL") == "1"
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc to build the planted libraries")


def build(tmp_path: Path, *flags: str) -> Path:
    source = tmp_path / "dot.c"
    source.write_text("float dot(const float *a, const float *b, int n) { float s = 0;"
                      " for (int i = 0; i < n; i++) s += a[i] * b[i]; return s; }\n")
    out = tmp_path / f"lib{abs(hash(flags))}.so"
    subprocess.run(["gcc", "-O3", "-shared", "-fPIC", *flags, str(source), "-o", str(out)], check=True)
    return out


def test_installed_hnswlib_is_portable() -> None:
    report = native_build.check_hnswlib()
    assert report.portable, report.text()


@pytest.mark.skipif(not llama_cpp_available() and not REQUIRE_LOCAL, reason="llama-cpp-python is not installed")
def test_installed_llama_cpp_is_portable() -> None:
    report = native_build.check_llama_cpp()
    assert report.portable, report.text()
    info = native_build.parse_system_info(native_build.llama_system_info())
    assert info["AVX2"] == "1" and all(info.get(k, "0") == "0" for k in native_build.LLAMA_FORBIDDEN), info


@needs_gcc
def test_a_native_build_is_caught_on_any_machine(tmp_path: Path) -> None:
    """-march=native is recorded as what it expanded to on this CPU (znver4, sapphirerapids …), never a baseline."""
    lines = native_build.recorded_switches(build(tmp_path, "-march=native", "-frecord-gcc-switches"))
    assert lines and native_build.non_portable(lines)


@needs_gcc
def test_the_portable_baseline_passes_and_avx512_or_amx_does_not(tmp_path: Path) -> None:
    portable = native_build.recorded_switches(build(tmp_path, "-march=x86-64-v3", "-mtune=generic",
                                                    "-frecord-gcc-switches"))
    assert portable and native_build.non_portable(portable) == []
    avx512 = native_build.recorded_switches(build(tmp_path, "-march=x86-64-v3", "-mavx512f", "-frecord-gcc-switches"))
    assert native_build.non_portable(avx512) == ["-mavx512f"]
    amx = native_build.recorded_switches(build(tmp_path, "-march=x86-64-v3", "-mamx-tile", "-frecord-gcc-switches"))
    assert native_build.non_portable(amx) == ["-mamx-tile"]


@needs_gcc
def test_a_library_without_recorded_switches_cannot_pass(tmp_path: Path) -> None:
    library = build(tmp_path, "-march=x86-64-v3")
    assert native_build.recorded_switches(library) is None
    problems, _ = native_build._switch_problems([library])
    assert problems and "no recorded compile switches" in problems[0]


def test_a_native_llama_system_info_is_caught() -> None:
    """The string an AMX build printed on the Intel machine where it died."""
    amx = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | "
           "AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 |")
    report = native_build.check_llama_cpp(system_info=amx)
    assert not report.portable and any("AMX_INT8" in p for p in report.problems)
    baseline = amx.replace("AVX512 = 1", "AVX512 = 0").replace("_VBMI = 1", "_VBMI = 0").replace(
        "_VNNI = 1", "_VNNI = 0").replace("_BF16 = 1", "_BF16 = 0").replace("AMX_INT8 = 1", "AMX_INT8 = 0")
    assert not any("compiled with" in p for p in native_build.check_llama_cpp(system_info=baseline).problems)


def test_not_an_elf_file_is_a_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "x.so"
    bogus.write_text("not a library")
    with pytest.raises(ValueError, match="not a 64-bit little-endian ELF"):
        native_build.recorded_switches(bogus)
