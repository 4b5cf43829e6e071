"""The code version stored with every run: rag_lab's version, the git commit when the package sits
in a git checkout, and a digest of the installed package's source and template files (which also catches
uncommitted edits)."""

from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path

import rag_lab

PACKAGE_DIR = Path(rag_lab.__file__).resolve().parent
#: The files of the package that make its behaviour: the sources and the package data they read (templates of
#: prompts, report and course text, the run store's schema; pyproject.toml's package-data).
SOURCE_SUFFIXES = (".py", ".sql", ".txt", ".html", ".md", ".css")


@functools.cache
def source_digest() -> str:
    """SHA-256 over the relative path and bytes of every source and template file of the installed package
    (``SOURCE_SUFFIXES``)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in PACKAGE_DIR.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file()):
        digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def git_commit() -> str | None:
    """``git rev-parse HEAD`` of the checkout holding the package, or None (no git, not a checkout)."""
    try:
        done = subprocess.run(["git", "-C", str(PACKAGE_DIR), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def code_version() -> dict[str, str | None]:
    """``{"rag_lab_version", "git_commit", "source_sha256"}`` of the running code."""
    return {"rag_lab_version": rag_lab.__version__, "git_commit": git_commit(), "source_sha256": source_digest()}
