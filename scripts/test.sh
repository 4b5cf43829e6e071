#!/usr/bin/env bash
# The tests: install (test tools, the local model, ONNX Runtime), then run the whole suite
# (unit tests, notebooks and the browser test).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh dev local onnx parquet
bash scripts/ensure_chromium.sh
source scripts/env.sh
python -m pytest "$@"
