"""What the compiled extensions were built for: portable x86-64 code, or this CPU only. ``scripts/install.sh``
builds every extension it compiles (hnswlib, llama-cpp-python) for the x86-64-v3 baseline with
``-frecord-gcc-switches``, which keeps each compile line inside the library; this module reads them back
(:func:`recorded_switches`), names the switches that tie the code to one CPU (:func:`non_portable`), reads what
ggml's CPU backend says it was compiled with (:func:`llama_system_info`) and checks the installed extensions
(:func:`check`). ``python -m rag_lab.native_build`` prints the reports and exits 1 when one is not portable or
cannot tell. Why: docs/setup.md, "Portable native code"."""

from __future__ import annotations

import argparse
import importlib.util
import re
import struct
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rag_lab.errors import ConfigError

#: The ``-march=`` values every x86-64 machine of the project runs (x86-64-v3: AVX2, FMA, F16C, BMI2).
PORTABLE_MARCH = frozenset({"x86-64", "x86-64-v2", "x86-64-v3"})
#: Enabled ``-m<feature>`` switches that one kind of machine here lacks (AMD: AMX and AVX-VNNI;
#: older AMD: AVX-512).
_NON_PORTABLE_FEATURE = re.compile(r"^-m(avx512\w*|amx[\w-]*|avxvnni\w*|avx10[\w.]*)$")
#: ggml's system-info features that must be off (the same families) and on (the baseline it was built for).
LLAMA_FORBIDDEN = ("AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16", "AVX_VNNI", "AMX_INT8", "AMX_TILE",
                   "AMX_BF16")
LLAMA_REQUIRED = ("AVX2", "FMA", "F16C")
_SECTION = b".GCC.command.line"


@dataclass(frozen=True)
class ExtensionReport:
    """One compiled package: its libraries, the non-portable switches found, and whether it is portable."""

    package: str
    libraries: tuple[Path, ...]
    problems: tuple[str, ...] = ()
    details: dict[str, str] = field(default_factory=dict)

    @property
    def portable(self) -> bool:
        return bool(self.libraries) and not self.problems

    def text(self) -> str:
        head = f"{self.package}: {'portable' if self.portable else 'NOT PORTABLE'}"
        lines = [head, *(f"  library {p}" for p in self.libraries), *(f"  problem: {p}" for p in self.problems)]
        lines += [f"  {k}: {v}" for k, v in self.details.items()]
        return "\n".join(lines)


def recorded_switches(library: str | Path) -> list[str] | None:
    """The compile lines recorded in ``library``'s ``.GCC.command.line`` section (one per compiled
    source file, deduplicated, in order), or None when the library has no such section. Raises
    ValueError for a file that is not a 64-bit little-endian ELF."""
    data = Path(library).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ConfigError(f"{library} is not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_offset = headers[shstrndx][4]
    for name_at, _type, _flags, _addr, offset, size, *_ in headers:
        end = data.index(b"\0", names_offset + name_at)
        if data[names_offset + name_at:end] == _SECTION:
            lines = [chunk.decode("utf-8", "replace") for chunk in data[offset:offset + size].split(b"\0") if chunk]
            return list(dict.fromkeys(lines))
    return None


def non_portable(lines: Iterable[str]) -> list[str]:
    """The switches in ``lines`` that bind the code to one CPU kind, deduplicated in order."""
    found: dict[str, None] = {}
    for line in lines:
        for switch in line.split():
            if switch.startswith("-march="):
                if switch.removeprefix("-march=") not in PORTABLE_MARCH:
                    found[switch] = None
            elif _NON_PORTABLE_FEATURE.match(switch):
                found[switch] = None
    return list(found)


def parse_system_info(text: str) -> dict[str, str]:
    """``"CPU : SSE3 = 1 | AVX2 = 1 | …"`` → ``{"SSE3": "1", "AVX2": "1", …}`` (every ``KEY = VALUE`` pair)."""
    return {key: value for key, value in re.findall(r"([A-Z][A-Z0-9_]*)\s*=\s*([^|\s]+)", text)}


def llama_system_info() -> str:
    """``llama_print_system_info()`` of the installed llama-cpp-python (loads its library; runs no kernel)."""
    import llama_cpp

    raw = llama_cpp.llama_print_system_info()
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def _origin(package: str) -> Path | None:
    """The file an installed package is imported from, or None when it is not installed."""
    spec = importlib.util.find_spec(package)
    return Path(spec.origin) if spec is not None and spec.origin else None


def _libraries(package: str) -> tuple[Path, ...]:
    """The shared libraries a package installed: its extension modules and, for llama_cpp, ``lib/``."""
    origin = _origin(package)
    if origin is None:
        return ()
    if origin.suffix == ".so":  # a top-level extension module (hnswlib)
        return (origin,)
    real = {path.resolve() for path in origin.parent.rglob("*.so*") if path.is_file()}  # symlinks: one file
    return tuple(sorted(real))


def _switch_problems(libraries: Iterable[Path]) -> tuple[list[str], dict[str, str]]:
    problems: list[str] = []
    details: dict[str, str] = {}
    for library in libraries:
        lines = recorded_switches(library)
        if lines is None:
            problems.append(f"{library.name} carries no recorded compile switches (.GCC.command.line): built "
                            "without scripts/install.sh's portable flags, so what it needs cannot be told")
            continue
        bad = non_portable(lines)
        marches = sorted({s for line in lines for s in line.split() if s.startswith("-march=")})
        details[library.name] = ", ".join(marches) or "no -march"
        if bad:
            problems.append(f"{library.name} was compiled for one CPU kind: {' '.join(bad[:8])}"
                            + (f" (+{len(bad) - 8} more)" if len(bad) > 8 else ""))
    return problems, details


def check_hnswlib() -> ExtensionReport:
    """hnswlib's extension module: recorded switches only (it has no system-info call)."""
    libraries = _libraries("hnswlib")
    if not libraries:
        return ExtensionReport("hnswlib", (), ("hnswlib is not installed",))
    problems, details = _switch_problems(libraries)
    return ExtensionReport("hnswlib", libraries, tuple(problems), details)


def check_llama_cpp(system_info: str | None = None) -> ExtensionReport:
    """llama-cpp-python: ggml's CPU library must carry portable switches, and its system info must show
    the baseline on and every AVX-512 / AVX-VNNI / AMX feature off. ``system_info`` (for tests) stands
    in for the installed library's own."""
    libraries = tuple(p for p in _libraries("llama_cpp") if "ggml-cpu" in p.name)
    if not libraries and system_info is None:
        return ExtensionReport("llama_cpp", (), ("llama-cpp-python (ggml-cpu) is not installed",))
    problems, details = _switch_problems(libraries)
    info = parse_system_info(system_info if system_info is not None else llama_system_info())
    details["system info"] = " | ".join(f"{k} = {info[k]}" for k in (*LLAMA_REQUIRED, *LLAMA_FORBIDDEN) if k in info)
    compiled_in = [k for k in LLAMA_FORBIDDEN if info.get(k) == "1"]
    if compiled_in:
        problems.append(f"ggml's CPU backend was compiled with {', '.join(compiled_in)}: it dies with SIGILL on a "
                        "CPU without them")
    missing = [k for k in LLAMA_REQUIRED if info.get(k) != "1"]
    if missing:
        problems.append(f"ggml's CPU backend lacks the x86-64-v3 baseline ({', '.join(missing)} off): not built "
                        "with scripts/install.sh's flags")
    return ExtensionReport("llama_cpp", libraries or (Path("<system info>"),), tuple(problems), details)


#: The compiled packages the installer builds from source, by pip name.
CHECKS = {"hnswlib": check_hnswlib, "llama-cpp-python": check_llama_cpp}


def check(packages: Iterable[str] | None = None) -> dict[str, ExtensionReport]:
    """Reports for ``packages`` (pip names from :data:`CHECKS`; default: those installed)."""
    names = list(packages) if packages is not None else [
        name for name, module in (("hnswlib", "hnswlib"), ("llama-cpp-python", "llama_cpp")) if _origin(module)
    ]
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise ConfigError(f"no check for {unknown}; known: {sorted(CHECKS)}")
    return {name: CHECKS[name]() for name in names}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag_lab.native_build", description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="*", help=f"pip names to check (default: those installed of {sorted(CHECKS)})")
    parser.add_argument("--failing", action="store_true", help="print only the pip names that are not portable")
    args = parser.parse_args(argv)
    reports = check(args.packages or None)
    bad = [name for name, report in reports.items() if not report.portable]
    if args.failing:
        print(" ".join(bad))
    else:
        print("\n".join(report.text() for report in reports.values()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
