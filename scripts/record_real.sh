#!/usr/bin/env bash
# Record a real-model sweep in growing steps, so that every candidate has the same questions when the
# recording is stopped (a sweep runs candidate after candidate): per_type = STEP, 2·STEP, … up to the
# sweep file's per_type, each step a sweep of its own into a scratch run directory; the cassette
# answers the calls of earlier steps, so only the new questions reach the model. Safe to kill and
# run again (the cassette resumes). The last completed step is printed; set the sweep file's per_type
# to it before shipping, so that --replay covers it, and rebuild the vectors of the queries the model
# wrote (python scripts/build_recorded_vectors.py).
#
#   bash scripts/record_real.sh sweeps/real_qwen_hotpotqa.yaml [STEP] [SCRATCH_DIR] [FIRST]
#
# FIRST (default STEP): the first per_type to run, to resume after the steps a stopped recording finished.
set -euo pipefail
cd "$(dirname "$0")/.."
sweep=$1 step=${2:-2} scratch=${3:-.cache/record_real} first=${4:-${2:-2}}
source scripts/env.sh
target=$(python -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['per_type'])" "$sweep")
mkdir -p "$scratch"
for ((n = first; n <= target; n += step)); do
  file="$scratch/$(basename "$sweep" .yaml)_per_type_$n.yaml"
  sed -E "s/^per_type: *[0-9]+/per_type: $n/; s#cassette: \.\./#cassette: $PWD/#" "$sweep" > "$file"
  start=$SECONDS
  rag-lab sweep "$file" --out "$scratch/run_$n" --quiet > "$scratch/run_$n.log" 2>&1
  echo "record_real: per_type $n done in $((SECONDS - start)) s ($(date -u +%H:%M:%S))"
done
