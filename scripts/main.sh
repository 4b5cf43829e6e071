#!/usr/bin/env bash
# The main job: install, then evaluate every retriever on the shipped world's test split and
# write the report (JSON + text) to reports/retrieval/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
source scripts/env.sh
rag-lab retrieval-eval --dataset world --split test --retriever all --k 10 --out reports/retrieval
