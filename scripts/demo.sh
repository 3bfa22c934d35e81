#!/usr/bin/env bash
# README command 1: installs what is missing, builds pipecc and compiles the
# bundled example model, printing its graph-dialect IR and a summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" pipecc
build=${PIPECC_BUILD_DIR:-$root/build}
example="$root/test/examples/mlp/model.onnx"
echo "== pipecc $example --emit=graph --summary -o $root/out/mlp"
"$build/bin/pipecc" "$example" --emit=graph --summary -o "$root/out/mlp"
echo "== wrote $(ls "$root/out/mlp" | tr '\n' ' ')to out/mlp/"
