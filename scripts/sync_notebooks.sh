#!/usr/bin/env bash
# Bring every notebook and its Jupytext percent-format .py pair in line: the newer file of each pair
# wins (jupytext --sync). Run after editing either; tests/test_course.py fails while a pair differs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
for py in notebooks/*.py; do
  jupytext --quiet --sync "$py"
done
