#!/usr/bin/env bash
# The tests.
#
#   bash scripts/test.sh            everything — the README's test command and CI (.ci/run): install the
#                                   test extras (test tools, the local model, ONNX Runtime, Parquet, MkDocs)
#                                   and Chromium, then the unit tests, the notebooks, the docs (`mkdocs
#                                   build --strict`: a broken link or an API name that no longer exists
#                                   fails) with the rendered course (the executed copies of the notebooks,
#                                   reports/executed/, as pages) beside the browser tests that do not open
#                                   the site, then those that do (the rendered lesson 01); the local-model
#                                   tests run with the unit tests and
#                                   the notebooks, in one pytest run; each pytest phase on both cores
#                                   (pytest-xdist), each phase with its wall time; every phase runs even
#                                   when an earlier one failed, and the command fails if any did
#   bash scripts/test.sh --quick    the edit-test loop (about a minute): the unit tests that need neither a
#                                   notebook kernel, the local model, a browser nor a long simulation
#                                   (-m "not slow and not notebook and not local_model and not browser"),
#                                   the docstring examples (tests/test_doctests.py) and the docstrings'
#                                   cross-references (tests/test_docs_crossrefs.py, with the docs extra) included; installs
#                                   only the test tools
#   bash scripts/test.sh ARGS...    pytest ARGS after the full install (e.g. tests/test_pipeline.py -x)
#
# RAG_LAB_TEST_WORKERS sets the number of pytest-xdist workers (default 2, one per core; 0 runs in-process).
set -euo pipefail
cd "$(dirname "$0")/.."
workers=${RAG_LAB_TEST_WORKERS:-2}
xdist=(-n "$workers")
# Bytecode for the installed modules, compiled once per install (scripts/install.sh says why).
export RAG_LAB_BYTECODE=1
# And for the test files pytest rewrites and the project's own modules: where the machine sets
# PYTHONDONTWRITEBYTECODE, every pytest process (each xdist worker) rewrote the asserts of all the test files
# again as it collected them (collecting the quick loop's tests: 12.0 s, against 8.1 s from the cache, both
# beside a recording on both cores). The bytecode goes to __pycache__/ folders git ignores.
unset PYTHONDONTWRITEBYTECODE
# Two workers on two cores: one PyTorch thread each, or their threads fight over the cores.
[ "$workers" = 0 ] || export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} RAG_LAB_LLAMA_THREADS=${RAG_LAB_LLAMA_THREADS:-1}

if [ "${1:-}" = --quick ]; then
  shift
  bash scripts/install.sh dev
  source scripts/env.sh
  # no notebook runs here, so without nbmake (and pyproject's --nbmake): importing it costs each pytest process 1.6 s
  # (nbformat's JSON-schema formats), about 2 s of the loop's wall time
  exec python -m pytest tests "${xdist[@]}" -o addopts=-ra -p no:nbmake \
    -m "not slow and not notebook and not local_model and not browser" "$@"
fi

start=$SECONDS
bash scripts/install.sh dev local qwen onnx parquet docs
bash scripts/ensure_chromium.sh
source scripts/env.sh
echo "test: install $((SECONDS - start)) s"

if [ $# -gt 0 ]; then
  exec python -m pytest "${xdist[@]}" "$@"
fi

# The phases: name, then the pytest arguments. --dist loadfile keeps a file's tests on one worker, so a
# module's fixtures (a built index, a started model server) are made once. --no-loadscope-reorder hands the files
# out in the order tests/conftest.py sorts them (the heavy ones first); pytest-xdist's default sorts them by their
# number of tests, which put the one-test files (each notebook, the live Qwen test) last, one core idling meanwhile.
failed=()
phase() {
  local name=$1 begin=$SECONDS
  shift
  echo "test: phase '$name'"
  python -m pytest "${xdist[@]}" --dist loadfile --no-loadscope-reorder "$@" || failed+=("$name")
  echo "test: phase '$name' took $((SECONDS - begin)) s"
}
# One pytest run for everything but the browser: the unit tests, the notebooks (nbmake executes each once;
# tools.course.site keeps the executed copies, outputs and run time, in reports/executed/ for the rendered
# course) and the local-model tests, so that neither core idles while the other finishes a phase's last file
# (tests/conftest.py hands out the local-model, slow and notebook files first). reports/executed/ is emptied
# first: the site shows this run's notebooks and no older ones.
rm -rf reports/executed
phase "unit tests, notebooks and local model" tests notebooks -m "not browser" --durations=25 \
  -p tools.course.site --keep-executed reports/executed
# The site, built where the reports go: the reference, and the course rendered from reports/executed/ (nothing
# is executed again; RAG_LAB_REQUIRE_EXECUTED fails the build naming any notebook without an executed copy);
# --strict fails on a broken link or a stale API name. MkDocs builds on one core: it runs beside the browser tests
# that do not open the site; those that do (marked site) run once it is built.
begin=$SECONDS
echo "test: phase 'docs', beside the browser tests that do not open the site"
mkdir -p reports
( status=0
  RAG_LAB_REQUIRE_EXECUTED=1 mkdocs build --strict --quiet --site-dir reports/site > reports/docs_build.log 2>&1 || status=$?
  echo "test: phase 'docs' took $((SECONDS - begin)) s (the rendered course: python -m http.server -d reports/site, then /course/)" >> reports/docs_build.log
  exit $status ) &
docs=$!
# --dist load (the last --dist wins): each browser test starts its own JupyterLab or Chromium, so the two
# JupyterLab tests of one file run on both workers at once. Collected from tests/browser alone, where every browser
# test is (tests/test_test_command.py), and without nbmake (it runs no notebook): the workers start 8 s sooner.
browser=(tests/browser --dist load --durations=10 -o addopts=-ra -p no:nbmake)
phase browser "${browser[@]}" -m "browser and not site"
wait "$docs" || failed+=("docs")
cat reports/docs_build.log
phase "browser, on the site" "${browser[@]}" -m "browser and site"
echo "test: everything took $((SECONDS - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "test: FAILED phases: ${failed[*]}" >&2
  exit 1
fi
