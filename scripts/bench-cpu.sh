#!/usr/bin/env bash
# pipecc against PyTorch on this CPU (a benchmark, not a test; issue 10).
# In one invocation, on the same model, weights, data, P, M and one thread
# per rank: PyTorch eager (P = 1, M micro-batches by gradient accumulation),
# torch.distributed.pipelining (gloo; GPipe, 1F1B, ZB-H1 as
# ScheduleInterleavedZeroBubble with one stage per rank, ZB-V as
# ScheduleZBVZeroBubble) and pipecc (socket transport, --data from the same
# .npy files). Each configuration runs REPEATS times; the table gives the
# median step time (steps after WARMUP), the spread of the runs' medians,
# pipecc/PyTorch, GFLOP/s against the single-core sgemm peak measured on the
# model's matmul shapes, losses of step 1 and the last step of every runner,
# pipecc's predicted step time and, per rank, its buffer plan beside the
# measured peak resident memory, and `out/launch --timers` where it exists,
# and `out/launch --gemms`' products beside each one's best measured rate.
# docs/testing.md ("Benchmarks against PyTorch") describes the output.
#
# Models: mlp (WIDTH x WIDTH Linear + ReLU LAYERS times, Linear WIDTH x
# CLASSES, batch BATCH, cross-entropy) and gpt (nanoGPT layout, 4 blocks of
# width 256, sequence 64, vocabulary 512, batch GPT_BATCH; the loss in the
# model), exported with PyTorch's ONNX exporter from the module that the
# PyTorch runners train, seed 0.
#
# PyTorch runs in a virtual environment of its own, created (pip) when it
# lacks torch, onnx or numpy: PIPECC_TORCH_VENV, default
# ~/.cache/pipecc/torch-venv (scripts/make_reference_models.sh's). CPU
# wheels are enough: PIP_INDEX_URL=https://download.pytorch.org/whl/cpu.
#
# Usage: scripts/bench-cpu.sh [--dry-run] [OUT]
#   OUT        folder for models, logs and table.md (default: a fresh one
#              under $TMPDIR, printed)
#   --dry-run  check the options and list the configurations; no torch
# Env: P ("1 2 4"), M (8), STEPS (10), WARMUP (2), REPEATS (3),
#      WIDTH (1024), LAYERS (8), CLASSES (64), BATCH (256), GPT_BATCH (8),
#      MODELS ("mlp gpt"), SCHEDULES ("gpipe 1f1b zb-h1 zb-v"; also
#      interleaved-1f1b), LR (0.01), RUN_TIMEOUT (900 s per run),
#      PIPECC (build/bin/pipecc), QUICK=1 (a smoke run: P "1 2", 4 steps,
#      1 repeat, width 256, batch 64, mlp, 1f1b; explicit settings win),
#      BLAS_ROWS=1 (each pipecc configuration also run with
#      --no-packed-weights, as runner pipecc-blas), PROFILE_ONCE=1 (one
#      `pipecc profile` for every round, instead of a fresh one and a
#      recompile before each round, so that each prediction is compared
#      with runs made just after its profile), PIPECC_FLAGS (more pipecc
#      options for every pipecc configuration, e.g.
#      "--weight-gradient-group 2").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dry_run=0
out=
for arg in "$@"; do
  case $arg in
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
               exit 0 ;;
    --dry-run) dry_run=1 ;;
    -*) echo "bench-cpu: error: unknown option '$arg' (--dry-run, --help)" >&2
        exit 2 ;;
    *) [ -z "$out" ] || { echo "bench-cpu: error: more than one OUT folder" \
                               "('$out', '$arg')" >&2; exit 2; }
       out=$arg ;;
  esac
done

if [ "$dry_run" = 1 ]; then
  exec python3 "$root/scripts/bench_cpu.py" plan
fi
python3 "$root/scripts/bench_cpu.py" plan >/dev/null

venv=${PIPECC_TORCH_VENV:-$HOME/.cache/pipecc/torch-venv}
if ! "$venv/bin/python" -c 'import torch, onnx, numpy' 2>/dev/null; then
  echo "bench-cpu: creating $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet torch onnx numpy
fi
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/pipecc-bench-cpu.XXXXXX")}
exec "$venv/bin/python" "$root/scripts/bench_cpu.py" run "$out"
