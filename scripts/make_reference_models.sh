#!/usr/bin/env bash
# Regenerates the reference models (test/E2E/Inputs/models/) with PyTorch,
# transformers and the ONNX exporters, in a virtual environment of their own
# that is created (pip, from the package index) when missing. Tests never
# need it: they read the stored files.
#
# Usage: scripts/make_reference_models.sh [make_reference_models.py options]
#   e.g. scripts/make_reference_models.sh --only hf_gpt2
#        scripts/make_reference_models.sh --gpt2-small /tmp/gpt2-small.onnx
# Environment: PIPECC_TORCH_VENV  the venv (default ~/.cache/pipecc/torch-venv)
#              PIP_INDEX_URL etc. are pip's own (e.g. PyTorch's CPU wheels:
#              PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${PIPECC_TORCH_VENV:-$HOME/.cache/pipecc/torch-venv}
# The stored models were made with these versions (meta.json records them);
# other versions export other, equally valid, graphs.
packages=(torch==2.15.0 transformers==5.24.0 onnxscript==0.7.2 onnx==1.23.2
          onnxruntime==1.32.0 numpy)

if ! "$venv/bin/python" -c 'import torch, transformers, onnxscript, onnx, onnxruntime' \
    2>/dev/null; then
  echo "make_reference_models.sh: creating $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "${packages[@]}"
fi
exec "$venv/bin/python" "$root/scripts/make_reference_models.py" "$@"
