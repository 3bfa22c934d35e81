#!/usr/bin/env python3
"""Exports a Hugging Face GPT2LMHeadModel of any size as ONNX whose
parameters live in a SPARSE external data file: the graph is exactly what
torch.onnx's dynamo exporter writes for the model (loss from `labels`,
batch dimension free, then pinned), but no weight is ever computed, held or
written: the model is built on PyTorch's meta device (shapes only), and
every initializer points into OUT.data, a file of the right size made with
truncate() that reads as zeros. For what depends only on shapes (pipecc's
partition, schedule and --memory-plan); training it would start from zero
weights.

Usage (in the torch venv, e.g. ~/.cache/pipecc/torch-venv/bin/python):
    export_gpt2_shapes.py OUT.onnx [--layers 48] [--width 1600] [--heads 25]
        [--sequence 1024] [--vocab 50257] [--batch 16]
Defaults are GPT-2-XL (1.56 G parameters).
"""
import argparse
import os
import sys
import time

import torch
import transformers
from onnxscript import ir

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_reference_models import DYNAMO_OPSET, Gpt2Loss  # noqa: E402

ALIGNMENT = 4096


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--layers", type=int, default=48)
    parser.add_argument("--width", type=int, default=1600)
    parser.add_argument("--heads", type=int, default=25)
    parser.add_argument("--sequence", type=int, default=1024)
    parser.add_argument("--vocab", type=int, default=50257)
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()
    start = time.time()
    config = transformers.GPT2Config(
        vocab_size=args.vocab, n_positions=args.sequence, n_embd=args.width,
        n_layer=args.layers, n_head=args.heads, resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=True,
        use_cache=False, bos_token_id=0, eos_token_id=0)
    with torch.device("meta"):
        model = Gpt2Loss(config)
    model.eval()
    params = sum(p.numel() for p in model.parameters())
    # Example inputs on the meta device too: the exporter traces with fake
    # tensors and never runs the model.
    ids = torch.zeros((args.batch, args.sequence), dtype=torch.int64,
                      device="meta")
    batch = torch.export.Dim("batch", min=1, max=4096)
    program = torch.onnx.export(
        model, (ids, ids), dynamo=True, opset_version=DYNAMO_OPSET,
        input_names=["input_ids", "labels"], output_names=["loss"],
        dynamic_shapes=({0: batch}, {0: batch}), optimize=False,
        external_data=True, verbose=False)
    model_ir = program.model
    exported = time.time()
    # What the exporter records per node for debugging: most of the bytes.
    for node in model_ir.graph:
        node.metadata_props.clear()
        node.doc_string = None

    data_name = os.path.basename(args.out) + ".data"
    base_dir = os.path.dirname(os.path.abspath(args.out))
    offset = 0
    for value in model_ir.graph.initializers.values():
        tensor = value.const_value
        nbytes = int(tensor.size * tensor.dtype.itemsize)
        offset = (offset + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        value.const_value = ir.ExternalTensor(
            data_name, offset, nbytes, tensor.dtype, shape=tensor.shape,
            name=value.name, base_dir=base_dir)
        offset += nbytes
    for value in model_ir.graph.inputs:
        value.shape = ir.Shape([args.batch] + list(value.shape)[1:])
    with open(os.path.join(base_dir, data_name), "wb") as f:
        f.truncate(offset)
    ir.save(model_ir, args.out)
    print("%s: GPT-2 %d layers, width %d, %d heads, sequence %d, vocabulary "
          "%d, batch %d: %d parameters, %d initializers, %d nodes; %s: %d "
          "bytes (sparse); export %.0f s, total %.0f s" % (
              args.out, args.layers, args.width, args.heads, args.sequence,
              args.vocab, args.batch, params,
              len(model_ir.graph.initializers), len(model_ir.graph),
              data_name, offset, exported - start, time.time() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
