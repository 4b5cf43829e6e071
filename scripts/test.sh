#!/usr/bin/env bash
# The tests: install, then run the whole suite (unit tests and notebooks).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
source scripts/env.sh
python -m pytest "$@"
