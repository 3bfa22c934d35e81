#!/usr/bin/env bash
# The static memory plan of a GPT-2-XL-sized pipeline (48 layers, width 1600,
# 25 heads, sequence 1024, vocabulary 50257: 1.56 G parameters) on 8 ranks,
# under 1F1B and ZB-H1, compiled with --precision bf16 (bf16 activations, f32
# master weights). Not a test: it exports the model once (a few minutes),
# then runs pipecc up to the schedule phase for each schedule and prints
# pipecc --memory-plan's table, with each run's time and peak memory.
#
# The model is Hugging Face's GPT2LMHeadModel exported by torch.onnx's
# dynamo exporter from PyTorch's meta device (scripts/export_gpt2_shapes.py):
# the real graph, its 6 GB of parameters in a sparse external data file that
# reads as zeros. pipecc maps that file and never reads it before codegen,
# and the plan depends only on shapes.
#
# Usage: scripts/memory-plan-gpt2xl.sh [WORKDIR]   (default /tmp/pipecc-gpt2xl)
# Env: PIPECC (default build/bin/pipecc), PIPECC_TORCH_VENV (the venv with
#      torch and transformers, default ~/.cache/pipecc/torch-venv),
#      STAGES (8), MICROBATCHES (16), MICROBATCH_SIZE (1), PRECISION (bf16),
#      SCHEDULES ("1f1b zb-h1").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pipecc=${PIPECC:-$root/build/bin/pipecc}
venv=${PIPECC_TORCH_VENV:-$HOME/.cache/pipecc/torch-venv}
work=${1:-${TMPDIR:-/tmp}/pipecc-gpt2xl}
stages=${STAGES:-8}
microbatches=${MICROBATCHES:-16}
microbatch_size=${MICROBATCH_SIZE:-1}
precision=${PRECISION:-bf16}
schedules=${SCHEDULES:-1f1b zb-h1}
batch=$((microbatches * microbatch_size))
model=$work/gpt2xl-b$batch.onnx

mkdir -p "$work"
if [ ! -f "$model" ]; then
  echo "exporting $model (batch $batch) ..."
  /usr/bin/time -f "export: %e s, peak RSS %M KiB" \
    "$venv/bin/python" "$root/scripts/export_gpt2_shapes.py" "$model" \
    --batch "$batch" 2>&1 | grep -v -e '^W[0-9]* ' -e 'loss_type=None' \
      -e 'rename_mapping' -e 'axis name: batch'
fi
echo "model: $model ($(du -h "$model" | cut -f1) graph; data file $(du -h --apparent-size "$model.data" | cut -f1) apparent, $(du -h "$model.data" | cut -f1) on disk)"
for schedule in $schedules; do
  echo
  /usr/bin/time -f "pipecc: %e s, peak RSS %M KiB" \
    "$pipecc" "$model" --stages "$stages" --microbatches "$microbatches" \
    --schedule "$schedule" --precision "$precision" --memory-plan
done
