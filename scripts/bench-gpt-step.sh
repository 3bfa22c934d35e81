#!/usr/bin/env bash
# Training-step benchmark (not a test): the tiny GPT case compiled by two
# pipecc binaries (BEFORE and AFTER, e.g. main's build and this checkout's)
# at P=1 M=1 and P=2 M=4 (1f1b), each trained for STEPS steps on the case's
# batch, the two alternating ROUNDS times. Prints, per configuration and
# compiler, the best median step time (from the ranks' own samples/s lines,
# step 1 left out) and the best CPU seconds (user + sys, every process of
# the run) per step. The machine may be shared: the load average is
# printed, and the best of the rounds is the figure to compare.
# Usage: scripts/bench-gpt-step.sh BEFORE_PIPECC [AFTER_PIPECC]
# Env: CASE (default ../shared/cases/tiny_gpt_untied), MODEL (model.onnx),
#      STEPS (20), ROUNDS (3), OPENBLAS_NUM_THREADS (1 unless set).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
before=${1:?usage: $0 BEFORE_PIPECC [AFTER_PIPECC]}
after=${2:-$root/build/bin/pipecc}
case_dir=${CASE:-$root/../shared/cases/tiny_gpt_untied}
model=${MODEL:-model.onnx}
steps=${STEPS:-20}
rounds=${ROUNDS:-3}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/pipecc-bench-gpt.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 - "$case_dir/inputs.npz" "$work/data" <<'EOF'
import os, sys
import numpy as np
inputs = np.load(sys.argv[1])
os.makedirs(sys.argv[2])
for key in inputs.files:
    np.save(os.path.join(sys.argv[2], key + ".npy"), inputs[key])
EOF
batch=$(python3 -c "import numpy as np; print(np.load('$case_dir/inputs.npz')['labels'].shape[0])")

echo "case: $case_dir/$model, $steps steps, batch $batch, best of $rounds"
echo "before: $before"
echo "after:  $after"
echo "OPENBLAS_NUM_THREADS=$OPENBLAS_NUM_THREADS"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %-7s %14s %14s\n' config pipecc step_ms_median cpu_ms_per_step
for config in "1 1 gpipe" "2 4 1f1b"; do
  read -r stages microbatches schedule <<<"$config"
  for which in before after; do
    compiler=$before
    [ "$which" = after ] && compiler=$after
    "$compiler" "$case_dir/$model" --stages "$stages" --microbatches \
      "$microbatches" --schedule "$schedule" -o "$work/$which-$stages" \
      >/dev/null
  done
  declare -A best_step=() best_cpu=()
  for ((round = 0; round < rounds; ++round)); do
    for which in before after; do
      log=$work/$which-$stages.log
      /usr/bin/time -f '%U %S' -o "$log.time" "$work/$which-$stages/launch" \
        --steps "$steps" --data "$work/data" --lr 0.1 >"$log"
      # Median step time of steps 2.. in ms, from samples/s.
      step=$(awk -v b="$batch" '/^step [0-9]+ loss .* samples\/s/ &&
               $2 > 1 { printf "%.2f\n", 1000 * b / $6 }' "$log" |
             sort -n | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)] }')
      cpu=$(awk -v s="$steps" '{ printf "%.2f", 1000 * ($1 + $2) / s }' \
              "$log.time")
      key=$which
      if [ -z "${best_step[$key]:-}" ] ||
         awk -v a="$step" -v b="${best_step[$key]}" 'BEGIN { exit !(a < b) }'
      then best_step[$key]=$step; fi
      if [ -z "${best_cpu[$key]:-}" ] ||
         awk -v a="$cpu" -v b="${best_cpu[$key]}" 'BEGIN { exit !(a < b) }'
      then best_cpu[$key]=$cpu; fi
    done
  done
  for which in before after; do
    printf '%-14s %-7s %14s %14s\n' "P=$stages M=$microbatches" "$which" \
      "${best_step[$which]}" "${best_cpu[$which]}"
  done
  unset best_step best_cpu
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
