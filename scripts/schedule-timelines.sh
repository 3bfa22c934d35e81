#!/usr/bin/env bash
# Renders each schedule's predicted timeline beside 1F1B's, on one time scale,
# for P = 4, M = 8 and the issue's uneven costs (F = 1, B = 0.976, W = 0.504
# per rank's share of the model, 0.05 per message): OUT/<name>-vs-1f1b.svg,
# and .png when rsvg-convert is installed (apt-get install librsvg2-bin).
# Usage: scripts/schedule-timelines.sh OUT [schedule...]   (default: zb-v)
# PIPECC (default build/bin/pipecc) is the compiler to run.
set -euo pipefail
out=${1:?usage: scripts/schedule-timelines.sh OUT [schedule...]}
shift
schedules=("$@")
[ ${#schedules[@]} -gt 0 ] || schedules=(zb-v)
pipecc=${PIPECC:-build/bin/pipecc}
mkdir -p "$out"

# Costs of one rank's share spread over its v virtual stages.
trace() { # name chunks file
  local v=$2
  "$pipecc" schedule --stages 4 --microbatches 8 --schedule "$1" --chunks "$v" \
    --forward "$(echo "1 / $v" | bc -l)" \
    --backward-input "$(echo "0.976 / $v" | bc -l)" \
    --backward-weight "$(echo "0.504 / $v" | bc -l)" \
    --comm 0.05 --trace "$3" --force | grep -E "^(schedule|makespan|bubble|peak)"
}

trace 1f1b 1 "$out/1f1b.json"
for name in "${schedules[@]}"; do
  case $name in
    zb-v | interleaved-1f1b) chunks=2 ;;
    *) chunks=1 ;;
  esac
  trace "$name" "$chunks" "$out/$name.json"
  "$pipecc" timeline "$out/1f1b.json" "$out/$name.json" \
    -o "$out/$name-vs-1f1b.svg" --force
  if command -v rsvg-convert > /dev/null; then
    rsvg-convert -o "$out/$name-vs-1f1b.png" "$out/$name-vs-1f1b.svg"
  fi
  echo "$out/$name-vs-1f1b.svg"
done
