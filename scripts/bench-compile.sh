#!/usr/bin/env bash
# Compile-time benchmark (not a test): mlp_relu with chains of Relu nodes
# (scripts/gen_relu_chain.py), each compiled to 2 ranks, and the ratio of
# each size's time to the previous one's. Linear compile time gives 2.0 per
# doubling. Prints wall and user seconds; wall time suffers when the
# machine is busy, so the load average is printed too.
# Usage: scripts/bench-compile.sh [sizes...]   (default: 500 1000 2000 4000)
# Env: PIPECC (default build/bin/pipecc), PIPECC_BENCH_ARGS (extra pipecc
# options, e.g. -O2), MLP_RELU (the base model).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pipecc=${PIPECC:-$root/build/bin/pipecc}
base=${MLP_RELU:-$root/../shared/cases/mlp_relu/model.onnx}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(500 1000 2000 4000)
work=$(mktemp -d "${TMPDIR:-/tmp}/pipecc-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "pipecc: $pipecc ${PIPECC_BENCH_ARGS:-}"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%8s %10s %10s %11s %11s %12s\n' relus wall_s user_s wall_ratio \
  user_ratio max_rss_mb
previous=""
previous_user=""
for n in "${sizes[@]}"; do
  python3 "$root/scripts/gen_relu_chain.py" "$n" "$work/chain$n.onnx" "$base"
  # shellcheck disable=SC2086
  /usr/bin/time -f '%e %U %M' -o "$work/time$n" \
    "$pipecc" "$work/chain$n.onnx" --stages 2 --microbatches 1 \
    ${PIPECC_BENCH_ARGS:-} -o "$work/out$n" >/dev/null
  read -r wall user rss <"$work/time$n"
  ratio=- user_ratio=-
  if [ -n "$previous" ]; then
    ratio=$(awk -v a="$wall" -v b="$previous" 'BEGIN { printf "%.2f", a / b }')
    user_ratio=$(awk -v a="$user" -v b="$previous_user" \
                   'BEGIN { printf "%.2f", a / b }')
  fi
  printf '%8s %10s %10s %11s %11s %12d\n' "$n" "$wall" "$user" "$ratio" \
    "$user_ratio" $((rss / 1024))
  previous=$wall previous_user=$user
  rm -rf "$work/out$n"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
