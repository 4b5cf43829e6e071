#!/usr/bin/env bash
# Record a real-model study in the background: each line of a steps file (scripts/record_steps/, default issue 37's
# study37.txt) runs one sweep once more at a larger per_type (the first N questions of each type), so that wherever the
# recording stops, every part has every candidate on the same questions, and the part's declared claims can be tested
# at the size it reached. The cassettes are the state: a step answers the calls it already holds from them and asks
# the model only for new ones, so the script is safe to kill and to run again (it starts over and skips through what
# is recorded in seconds a step, but for the MuSiQue corpus's embedding).
#
#   nohup bash scripts/record_study.sh scripts/record_steps/twins.txt > .cache/record_study/log 2>&1 &
#
# llama.cpp threads: read before each step from .cache/record_study/threads (default 1): write 2 there when the
# cores are free, 1 while you work (a step in progress keeps the threads it started with). Each completed step is
# logged with its time; `tail .cache/record_study/log`. To ship a part at the size reached, set its sweep file's
# per_type to its last completed step, regenerate its table (scripts/recorded_findings.py) and the vectors of the
# queries the model wrote (python scripts/build_recorded_vectors.py; a test says when they are missing).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
scratch=.cache/record_study
mkdir -p "$scratch"

# The steps: "sweep per_type" lines, in order ('#' starts a comment).
steps_file=${1:-scripts/record_steps/study37.txt}
mapfile -t steps < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$steps_file")
# A copy of a sweep file at per_type N, its cassette path made absolute (it is relative to the sweep file's folder).
copy_at_per_type() {  # SWEEP_FILE N OUT [PAIRS_WITH]
  local cassette pairs=""
  cassette=$(realpath -m "$(dirname "$1")/$(sed -nE 's/^ *cassette: *([^ #]+).*/\1/p' "$1")")
  [ -z "${4:-}" ] || pairs="; s|^pairs_with: *[^ #]+|pairs_with: $4|"
  sed -E "s/^per_type: *[0-9]+/per_type: $2/; s|^( *cassette: *)[^ #]+|\1$cassette|$pairs" "$1" > "$3"
}

for step in "${steps[@]}"; do
  # a step names a sweep under sweeps/ (a declared study not yet shipped may be under sweeps/pending/)
  read -r name n <<< "$step"
  threads=$(cat "$scratch/threads" 2>/dev/null || echo 1)
  sweep="sweeps/$name.yaml"
  base=$(basename "$name")
  file="$scratch/${base}_per_type_$n.yaml"
  # a sweep of twins runs the other half of its pairs (pairs_with:, beside it) too: at the same per_type, so that
  # wherever the recording stops both halves hold the same questions
  partner=$(sed -nE 's/^pairs_with: *([^ #]+).*/\1/p' "$sweep")
  if [ -n "$partner" ]; then
    partner_copy="${partner%.yaml}_per_type_$n.yaml"
    copy_at_per_type "$(dirname "$sweep")/$partner" "$n" "$scratch/$partner_copy"
    copy_at_per_type "$sweep" "$n" "$file" "$partner_copy"
  else
    copy_at_per_type "$sweep" "$n" "$file"
  fi
  run="$scratch/run_${base}_$n"
  start=$SECONDS
  RAG_LAB_LLAMA_THREADS=$threads rag-lab sweep "$file" --out "$run" --quiet > "$run.log" 2>&1
  echo "record_study: $name per_type $n done in $((SECONDS - start)) s at $threads thread(s) ($(date -u +%F' '%H:%M:%S))"
done
echo "record_study: every step is recorded"
