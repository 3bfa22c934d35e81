#!/usr/bin/env bash
# README command 1: installs what is missing, builds pipecc, compiles the
# bundled example model for 4 pipeline ranks with the 1F1B schedule and
# trains it on CPU ranks (one MPI process per rank), printing the loss.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" pipecc pipecc_runtime
build=${PIPECC_BUILD_DIR:-$root/build}
example="$root/test/examples/mlp"
out="$root/out/mlp"

echo "== pipecc $example/model.onnx --emit=graph --summary --stages 4 --microbatches 4 --schedule 1f1b -o $out"
"$build/bin/pipecc" "$example/model.onnx" --emit=graph --summary --stages 4 \
  --microbatches 4 --schedule 1f1b --lr 0.5 -o "$out"
python3 - "$out/pipeline.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
p = m["partition"]
print("== %d stages, cuts after %s; predicted step %.3g ms, bubble %.2f" % (
    m["stages"], ", ".join(p["cuts_after"]),
    1e3 * m["prediction"]["predicted_step_s"], m["prediction"]["bubble"]))
PY
echo "== $out/launch --steps 40 --data $example"
"$out/launch" --steps 40 --data "$example"
