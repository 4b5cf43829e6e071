#!/usr/bin/env bash
# The main job: install (core + notebook stack; not the local model, whose llama-cpp-python
# compiles for minutes), run the quickstart sweep (the six headline policies on the shipped world,
# simulated LLM) into reports/quickstart/ and write its HTML report — the first result — then the
# retrieval report (every retriever on the world's test split) into reports/retrieval/.
#
#   bash scripts/main.sh            # the above: about a minute on a fresh clone (62 s here, 27 s of it installing)
#   bash scripts/main.sh --course   # also execute the course notebooks and write each as HTML into
#                                   # reports/notebooks/ (index.html lists them; about 4 more minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
course=0
for arg in "$@"; do
  case "$arg" in
    --course) course=1 ;;
    *) echo "main.sh: unknown argument '$arg' (only --course)" >&2; exit 2 ;;
  esac
done
bash scripts/install.sh notebook
source scripts/env.sh
SECONDS=0
# --force: reports/quickstart is this job's own output; after an upgrade changes the sweep (a new policy
# field changes every config id) it is replaced instead of stopping the job. The same sweep resumes.
# Serial: on empty caches it takes 26 s here, two worker processes 26 s too, at 1.6 times the CPU
# (benchmarks/results/bench_worker_threads.md); the table is the same either way.
rag-lab sweep sweeps/quickstart.yaml --out reports/quickstart --force
rag-lab report reports/quickstart --out reports/quickstart/report.html
echo "quickstart report: $PWD/reports/quickstart/report.html (${SECONDS} s after install)"
rag-lab retrieval-eval --dataset world --split test --retriever all --k 10 --out reports/retrieval
if [ "$course" = 1 ]; then
  python -m tools.course export --out reports/notebooks
  echo "the course, executed: $PWD/reports/notebooks/index.html"
else
  echo "the course as HTML: bash scripts/main.sh --course (or python -m tools.course export)"
fi
echo "main job done (${SECONDS} s after install): the quickstart report is above, the retrieval report in $PWD/reports/retrieval"
