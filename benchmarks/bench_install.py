#!/usr/bin/env python
"""Installing rag_lab into a fresh venv with empty caches, three ways side by side in one run:
pip alone (the first installer), pip for torch + uv for the rest (``scripts/install.sh`` when no
local torch wheel is in pip's find-links), and uv for everything with the local torch wheel passed
as ``--find-links`` (``scripts/install.sh`` on this machine).

    python benchmarks/bench_install.py [--extras notebook] [--keep DIR] [--wheels /opt/wheels]

Each arm gets a new venv and an empty download cache (pip ``--no-cache-dir``; uv a fresh
``UV_CACHE_DIR``), so each downloads and builds everything (hnswlib compiles from source in each).
torch 2.13.0 comes from the CPU wheel on local disk in each. Run by hand, with nothing else busy: it
measures wall time, which neighbours distort. Prints seconds per step and each arm's ratio to pip.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def arm(root: Path, tool: str, spec: str, wheels: str) -> dict[str, float]:
    venv = root / f"venv-{tool}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip, py = str(venv / "bin" / "pip"), str(venv / "bin" / "python")
    env = {**os.environ, "UV_CACHE_DIR": str(root / f"uv-cache-{tool}")}
    if tool == "pip":
        return {"pip: torch + project": timed([pip, "install", "--quiet", "--no-cache-dir", "torch==2.13.0", "-e", spec],
                                              env)}
    if tool == "uv":
        return {"pip: uv": timed([pip, "install", "--quiet", "--no-cache-dir", "uv"], env),
                "uv: torch (local wheel) + project": timed(
                    [str(venv / "bin" / "uv"), "pip", "install", "--quiet", "--python", py, "--find-links", wheels,
                     "torch==2.13.0+cpu", "-e", spec], env)}
    return {"pip: torch + uv": timed([pip, "install", "--quiet", "--no-cache-dir", "torch==2.13.0", "uv"], env),
            "uv: project": timed([str(venv / "bin" / "uv"), "pip", "install", "--quiet", "--python", py,
                                  "torch==2.13.0", "-e", spec], env)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--extras", default="notebook", help="comma-separated extras (default: notebook, the main job's)")
    parser.add_argument("--keep", type=Path, default=None, help="build the venvs here and keep them")
    parser.add_argument("--wheels", default=os.environ.get("PIP_FIND_LINKS", "/opt/wheels").split()[0],
                        help="the folder holding the torch 2.13.0+cpu wheel (default: $PIP_FIND_LINKS)")
    args = parser.parse_args()
    spec = f"{REPO}[{args.extras}]" if args.extras else str(REPO)
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-install-"))
    root.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    try:
        rows = {tool: arm(root, tool, spec, args.wheels) for tool in ("pip", "pip+uv", "uv")}
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    totals = {tool: sum(steps.values()) for tool, steps in rows.items()}
    print(f"extras [{args.extras}], load before: {load:.2f}, after: {os.getloadavg()[0]:.2f}, cores: {os.cpu_count()}")
    for tool, steps in rows.items():
        print(f"  {tool:6s} " + ", ".join(f"{k} {v:.0f} s" for k, v in steps.items())
              + f" — total {totals[tool]:.0f} s, {totals['pip'] / totals[tool]:.1f}x pip alone")


if __name__ == "__main__":
    main()
