#!/usr/bin/env bash
# The main job: install (core + notebook stack; not the local model, whose llama-cpp-python
# compiles for minutes), run the quickstart sweep (the six headline policies on the shipped world,
# simulated LLM) into reports/quickstart/, write its HTML report, then the retrieval report
# (every retriever on the world's test split) into reports/retrieval/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh notebook
source scripts/env.sh
rag-lab sweep sweeps/quickstart.yaml --out reports/quickstart
rag-lab report reports/quickstart --out reports/quickstart/report.html
rag-lab retrieval-eval --dataset world --split test --retriever all --k 10 --out reports/retrieval
echo "quickstart report: $PWD/reports/quickstart/report.html"
