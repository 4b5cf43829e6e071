#!/usr/bin/env bash
# Install rag_lab into ./.venv on this kind of machine (Python 3.11, CPU only, no internet but
# the package registries). Idempotent: it skips pip when pyproject.toml has not changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
"$PYTHON" - <<'PY'
import sys
if sys.version_info[:2] != (3, 11):
    sys.exit(f"rag_lab's installer needs Python 3.11 (the CPU torch wheel on this machine is cp311); got {sys.version.split()[0]}")
PY

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
stamp=.venv/.rag_lab-installed
want=$(sha256sum pyproject.toml scripts/install.sh | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  # torch first and pinned: 2.13.0 is the CPU build on local disk. An unpinned torch (pulled in by
  # sentence-transformers) would download a multi-GB CUDA build.
  .venv/bin/pip install --quiet torch==2.13.0
  # The local extra compiles llama-cpp-python from source the first time (about 7 minutes on two
  # cores, for this machine's CPU: -march=native); pip caches the wheel for later installs.
  if ! .venv/bin/python -c 'import llama_cpp' 2>/dev/null; then
    echo "install: building llama-cpp-python from source (several minutes)" >&2
  fi
  .venv/bin/pip install --quiet -e '.[dev,local]'
  echo "$want" > "$stamp"
fi
