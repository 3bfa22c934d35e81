#!/usr/bin/env python3
"""Writes pipecc's own reference models (issue 7, item 7): tiny Hugging Face
GPT-2 (tied embeddings) and LLaMA (grouped-query attention) language models
with the loss computed by the model from `labels`, a small CNN and an MLP with
LayerNorm, GELU and an MSE loss. Each is exported from PyTorch by the dynamo
exporter at opset 18 (`model.onnx`) and, where it can, by the TorchScript
exporter at opset 17 (`model_opset17.onnx`), with the ground truth from
PyTorch autograd beside it, in the layout of ../shared/cases (README.md there):

    <out>/<name>/model.onnx, model_opset17.onnx, inputs.npz, expected.npz,
                 meta.json

Usage (scripts/make_reference_models.sh runs it in a venv with torch):
    make_reference_models.py [--out DIR] [--only NAME,...]
        DIR defaults to test/E2E/Inputs/models
    make_reference_models.py --gpt2-small OUT.onnx [--vocab N]
        a GPT-2-small-shaped model (12 layers, width 768, 12 heads,
        sequence 256, batch 4, random weights) for measuring compile time;
        never stored in the repository.

Everything is deterministic: fixed seeds, float32, one thread. The exported
graphs are checked with onnxruntime: the loss on the full batch, and on each
quarter of it with the batch dimension redeclared, equals PyTorch's within
1e-5, so no node hard-codes the batch size.
"""
import argparse
import collections
import contextlib
import copy
import hashlib
import io
import json
import math
import os
import sys
import traceback
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers

SEED = 7007
BATCH = 8
# Tiny language models: every dimension distinct (batch 8, sequence 12, width
# 24, 4 heads of 6, MLP 40, vocabulary 64), so a transposition cannot hide.
SEQUENCE = 12
MICRO_BATCHES = 4
LR = 0.1
SGD_STEPS = 3
DYNAMO_OPSET = 18
TORCHSCRIPT_OPSET = 17
IGNORE_INDEX = -100
ORT_TOLERANCE = 1e-5
TOLERANCES = {
    "loss": {"rtol": 1e-5, "atol": 1e-6},
    "grad": {"rtol": 1e-4, "atol": 1e-5, "norm_rtol": 1e-4},
    "after_sgd": {"rtol": 1e-5, "atol": 1e-6},
    "loss_step3": {"rtol": 1e-4, "atol": 1e-5},
    "losses_sgd": {"rtol": 1e-4, "atol": 1e-5},
}


def deterministic(seed):
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.set_default_dtype(torch.float32)


def perturb_constant_parameters(module, generator):
    """Initial LayerNorm weights (all ones) and biases (all zeros) would hide
    broadcasting mistakes and let an optimizer merge equal initializers: give
    every parameter that is constant at initialization some spread."""
    with torch.no_grad():
        for param in module.parameters():
            flat = param.reshape(-1)
            if flat.numel() > 1 and bool((flat == flat[0]).all()):
                noise = torch.randn(param.shape, generator=generator)
                param.add_(0.1 * noise)


# --- The models -------------------------------------------------------------


class Gpt2Loss(transformers.GPT2LMHeadModel):
    """GPT2LMHeadModel returning only the loss it computes from `labels`
    (a subclass, so parameters keep their Hugging Face names)."""

    def forward(self, input_ids, labels):
        return super().forward(input_ids=input_ids, labels=labels).loss


class LlamaLoss(transformers.LlamaForCausalLM):
    def forward(self, input_ids, labels):
        return super().forward(input_ids=input_ids, labels=labels).loss


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 6, kernel_size=3, stride=1, padding=1)
        self.pool1 = torch.nn.MaxPool2d(kernel_size=2)
        self.conv2 = torch.nn.Conv2d(6, 8, kernel_size=3, stride=2, padding=1)
        self.pool2 = torch.nn.AvgPool2d(kernel_size=2, stride=1)
        self.gap = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x, labels):
        h = self.pool1(torch.relu(self.conv1(x)))      # [B, 6, 6, 6]
        h = self.pool2(torch.relu(self.conv2(h)))      # [B, 8, 2, 2]
        h = torch.flatten(self.gap(h), 1)              # [B, 8]
        return torch.nn.functional.cross_entropy(self.fc(h), labels)


class MlpLnGeluMse(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.norm = torch.nn.LayerNorm(32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x, labels):
        h = torch.nn.functional.gelu(self.norm(self.fc1(x)))
        return torch.nn.functional.mse_loss(self.fc2(h), labels)


def gpt2_config(**overrides):
    fields = dict(vocab_size=64, n_positions=16, n_embd=24, n_layer=2,
                  n_head=4, n_inner=40, resid_pdrop=0.0, embd_pdrop=0.0,
                  attn_pdrop=0.0, initializer_range=0.1,
                  tie_word_embeddings=True, use_cache=False, bos_token_id=0,
                  eos_token_id=0)
    fields.update(overrides)
    return transformers.GPT2Config(**fields)


def gpt2_labels(input_ids):
    """Labels = the tokens, with -100 spread unevenly over the 4 micro-batches
    of 2 rows each: the first holds a row with every label ignored and one
    half ignored, the second none, the third 3 and the fourth 7 (at M = 8
    one micro-batch counts no label at all)."""
    labels = input_ids.clone()
    labels[0, :] = IGNORE_INDEX
    labels[1, 2:8] = IGNORE_INDEX
    labels[4, [3, 7, 10]] = IGNORE_INDEX
    labels[6, 7:] = IGNORE_INDEX
    labels[7, [1, 6]] = IGNORE_INDEX
    return labels


def make_hf_gpt2(gen):
    model = Gpt2Loss(gpt2_config())
    ids = torch.randint(0, model.config.vocab_size, (BATCH, SEQUENCE),
                        generator=gen)
    return model, {"input_ids": ids, "labels": gpt2_labels(ids)}


def make_hf_llama(gen):
    config = transformers.LlamaConfig(
        vocab_size=64, hidden_size=24, intermediate_size=40,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=16, rms_norm_eps=1e-6, hidden_act="silu",
        attention_dropout=0.0, tie_word_embeddings=False, use_cache=False,
        initializer_range=0.1, bos_token_id=0, eos_token_id=0,
        pad_token_id=None)
    model = LlamaLoss(config)
    ids = torch.randint(0, config.vocab_size, (BATCH, SEQUENCE),
                        generator=gen)
    labels = ids.clone()
    labels[2, [5, 6]] = IGNORE_INDEX
    labels[5, 9:] = IGNORE_INDEX
    return model, {"input_ids": ids, "labels": labels}


def make_cnn(gen):
    model = SmallCnn()
    x = torch.randn(BATCH, 3, 12, 12, generator=gen)
    labels = torch.randint(0, 10, (BATCH,), generator=gen)
    return model, {"x": x, "labels": labels}


def make_mlp_ln_gelu_mse(gen):
    model = MlpLnGeluMse()
    x = torch.randn(BATCH, 16, generator=gen)
    labels = torch.randn(BATCH, 4, generator=gen)
    return model, {"x": x, "labels": labels}


CASES = collections.OrderedDict([
    ("hf_gpt2", (make_hf_gpt2, (
        "Hugging Face transformers GPT2LMHeadModel, tiny random config: "
        "vocab 64, n_positions 16, sequence 12, n_embd 24, 2 layers, 4 heads "
        "of 6, MLP 24-40-24 "
        "with gelu_new (tanh), dropout 0, default attention implementation "
        "(sdpa), TIED embeddings (transformer.wte.weight is lm_head.weight: "
        "one initializer read by the embedding Gather and the LM head). The "
        "loss is the model's own ForCausalLMLoss from `labels` (shifted inside "
        "the model, ignore_index -100). The -100 labels are spread unevenly "
        "over the 4 micro-batches (issue 7 item 4): expected.npz is the "
        "full-batch loss, which the mean of the micro-batch means is not."))),
    ("hf_llama", (make_hf_llama, (
        "Hugging Face transformers LlamaForCausalLM, tiny random config: "
        "vocab 64, sequence 12, hidden 24, intermediate 40, 2 layers, 4 "
        "attention heads of 6 and 2 key-value heads (grouped-query "
        "attention), RMSNorm, SiLU "
        "gated MLP, rotary position embeddings, default attention "
        "implementation (sdpa), untied LM head; loss from `labels` with a "
        "few -100."))),
    ("cnn", (make_cnn, (
        "Small CNN: Conv2d(3,6,k3,s1,p1) ReLU MaxPool2d(2) "
        "Conv2d(6,8,k3,s2,p1) ReLU AvgPool2d(k2,s1) AdaptiveAvgPool2d(1) "
        "Flatten Linear(8,10), cross-entropy; x float32[8,3,12,12], 10 "
        "classes."))),
    ("mlp_ln_gelu_mse", (make_mlp_ln_gelu_mse, (
        "Linear(16,32) LayerNorm(32) GELU (exact, erf) Linear(32,4), MSE "
        "loss (mean) against float targets; x float32[8,16], labels "
        "float32[8,4]."))),
])


# --- PyTorch ground truth -----------------------------------------------------


def unique_parameters(module):
    """(names sharing the tensor, tensor) per distinct parameter, in
    registration order."""
    groups = collections.OrderedDict()
    for name, param in module.named_parameters(remove_duplicate=False):
        groups.setdefault(id(param), ([], param))[0].append(name)
    return list(groups.values())


def torch_reference(module, inputs):
    """Loss, gradients, parameters after one SGD step and the losses over
    SGD_STEPS steps, from a copy of `module` (left untouched)."""
    model = copy.deepcopy(module)
    params = unique_parameters(model)
    optimizer = torch.optim.SGD([p for _, p in params], lr=LR)
    args = list(inputs.values())
    losses, grads, after_first = [], None, None
    for step in range(SGD_STEPS + 1):
        optimizer.zero_grad(set_to_none=True)
        loss = model(*args)
        losses.append(loss.detach().clone())
        if step == SGD_STEPS:
            break
        loss.backward()
        if step == 0:
            grads = [p.grad.detach().clone() for _, p in params]
        optimizer.step()
        if step == 0:
            after_first = [p.detach().clone() for _, p in params]
    return {"loss": losses[0], "losses": torch.stack(losses), "grads": grads,
            "after_sgd": after_first}


def float64_check(module, inputs, reference):
    """The float32 noise floor: float32 results against float64 ones."""
    model = copy.deepcopy(module).double()
    args = [v.double() if v.is_floating_point() else v
            for v in inputs.values()]
    loss = model(*args)
    loss.backward()
    worst = 0.0
    for (names, param), g32 in zip(unique_parameters(model),
                                   reference["grads"]):
        g64 = param.grad.detach()
        norm = float(g64.norm())
        if norm > 0:
            worst = max(worst, float((g32.double() - g64).norm()) / norm)
    loss = loss.detach()
    return {"torch_float64_loss": float(loss),
            "loss_rel_err_float32": abs(float(reference["loss"]) -
                                        float(loss)) / abs(float(loss)),
            "worst_grad_norm_rel_err_float32": worst}


def counted_labels(name, labels):
    """How many labels count towards the mean in each row (the causal LMs
    shift labels by one inside the model)."""
    if name.startswith("hf_"):
        return (labels[:, 1:] != IGNORE_INDEX).sum(dim=1)
    if labels.dtype == torch.int64:
        return (labels != IGNORE_INDEX).to(torch.int64)
    return torch.full((labels.shape[0],), labels[0].numel())


def microbatch_report(name, module, inputs):
    """Per split: each micro-batch's PyTorch loss (float64), its count of
    counted labels, and how far the plain mean of micro-batch losses and the
    count-weighted mean are from the full-batch loss."""
    model = copy.deepcopy(module).double()
    args = {k: v.double() if v.is_floating_point() else v
            for k, v in inputs.items()}
    with torch.no_grad():
        full = float(model(*args.values()))
    counts = counted_labels(name, inputs["labels"])
    report = {}
    for splits in (1, 2, 4, 8):
        if BATCH % splits:
            continue
        size = BATCH // splits
        losses, weights = [], []
        for i in range(splits):
            part = [v[i * size:(i + 1) * size] for v in args.values()]
            with torch.no_grad():
                losses.append(float(model(*part)))
            weights.append(int(counts[i * size:(i + 1) * size].sum()))
        finite = [(l, w) for l, w in zip(losses, weights) if w > 0]
        weighted = sum(l * w for l, w in finite) / sum(w for _, w in finite)
        plain = sum(losses) / splits
        report[str(splits)] = {
            "microbatch_size": size,
            "torch_f64_losses": [None if math.isnan(l) else l
                                 for l in losses],
            "counted_labels": weights,
            "mean_of_losses": None if math.isnan(plain) else plain,
            "mean_of_losses_rel_err": None if math.isnan(plain) else
            abs(plain - full) / abs(full),
            "count_weighted_mean_rel_err": abs(weighted - full) / abs(full),
        }
    return {"full_batch_torch_f64_loss": full, "splits": report}


# --- Export -------------------------------------------------------------------


@contextlib.contextmanager
def silenced_output():
    """The TorchScript exporter prints its whole graph from C++ when it
    fails: silence file descriptors 1 and 2, not just sys.stdout/stderr."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 1)
        os.dup2(devnull.fileno(), 2)
    try:
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        for fd, copy_of_fd in zip((1, 2), saved):
            os.dup2(copy_of_fd, fd)
            os.close(copy_of_fd)


def quietly(export, module, inputs):
    """Runs an exporter without its progress lines and warnings (a failure
    still raises)."""
    with warnings.catch_warnings(), silenced_output():
        warnings.simplefilter("ignore")
        return export(module, inputs)


def strip_metadata(model):
    """Drops what the exporters record per node and value for debugging
    (source locations, module stacks, names in PyTorch): most of a small
    model's bytes, none of its meaning."""
    for node in model.graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
    for value in list(model.graph.input) + list(model.graph.output) + list(
            model.graph.value_info):
        del value.metadata_props[:]
        value.doc_string = ""
    model.graph.doc_string = ""
    return model


def export_dynamo(module, inputs):
    batch = torch.export.Dim("batch", min=1, max=4096)
    program = torch.onnx.export(
        module, tuple(inputs.values()), dynamo=True,
        opset_version=DYNAMO_OPSET, input_names=list(inputs),
        output_names=["loss"],
        dynamic_shapes=tuple({0: batch} for _ in inputs),
        optimize=False, external_data=False, verbose=False)
    return strip_metadata(program.model_proto)


def export_torchscript(module, inputs):
    buffer = io.BytesIO()
    torch.onnx.export(
        module, tuple(inputs.values()), buffer, dynamo=False,
        opset_version=TORCHSCRIPT_OPSET, input_names=list(inputs),
        output_names=["loss"],
        dynamic_axes={name: {0: "batch"} for name in inputs},
        export_params=True, do_constant_folding=False,
        keep_initializers_as_inputs=False,
        training=torch.onnx.TrainingMode.EVAL)
    return strip_metadata(onnx.load_from_string(buffer.getvalue()))


def pin_batch(model, batch):
    """A copy of `model` whose graph inputs declare dimension 0 as `batch`
    (pipecc, like the shared cases, wants static input shapes)."""
    pinned = copy.deepcopy(model)
    for value in pinned.graph.input:
        dims = value.type.tensor_type.shape.dim
        dims[0].Clear()
        dims[0].dim_value = batch
    return pinned


def op_type_counts(model):
    counts = collections.Counter(node.op_type for node in model.graph.node)
    return dict(sorted(counts.items()))


def map_initializers(module, model):
    """Maps each distinct torch parameter to the ONNX initializer holding it,
    by name (one of the names sharing the tensor), else by equal value.
    Returns ({torch name: initializer}, [initializer per distinct parameter],
    notes)."""
    inits = {i.name: onnx.numpy_helper.to_array(i)
             for i in model.graph.initializer}
    mapping, ordered, notes = {}, [], []
    for names, param in unique_parameters(module):
        value = param.detach().numpy()
        found = [n for n in names if n in inits]
        if not found:
            found = [n for n, v in inits.items()
                     if v.shape == value.shape and np.array_equal(v, value)]
            if found:
                notes.append("%s is stored as %s (matched by value)" %
                             (names, found[0]))
        if len(found) != 1:
            raise RuntimeError("parameter %s: %d initializers hold it" %
                               (names, len(found)))
        init = found[0]
        if inits[init].shape != value.shape or not np.array_equal(
                inits[init], value):
            raise RuntimeError("initializer %s differs from parameter %s" %
                               (init, names))
        ordered.append(init)
        for n in names:
            mapping[n] = init
    return mapping, ordered, notes


def other_initializers(module, model, trainable):
    buffers = dict(module.named_buffers())
    result = []
    for init in model.graph.initializer:
        if init.name in trainable:
            continue
        value = onnx.numpy_helper.to_array(init)
        source = "exporter constant"
        for name, buf in buffers.items():
            if name == init.name or (
                    tuple(buf.shape) == value.shape and
                    np.array_equal(buf.detach().numpy(), value)):
                source = "torch buffer %s" % name
                break
        result.append({"name": init.name, "shape": list(value.shape),
                       "dtype": str(value.dtype), "source": source})
    return result


def ort_loss(model, feeds):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # no warnings about unfolded CastLike
    batch = next(iter(feeds.values())).shape[0]
    session = ort.InferenceSession(
        pin_batch(model, batch).SerializeToString(), options,
        providers=["CPUExecutionProvider"])
    return float(session.run(["loss"], feeds)[0])


def verify_with_onnxruntime(module, model, inputs):
    """The full batch and each quarter of it through onnxruntime against
    PyTorch float32 (the quarters with the batch redeclared, as pipecc
    compiles one micro-batch)."""
    feeds = {k: v.numpy() for k, v in inputs.items()}
    result = {"tolerance": ORT_TOLERANCE, "microbatches": {}}
    with torch.no_grad():
        want = float(module(*inputs.values()))
    got = ort_loss(model, feeds)
    result["full_batch"] = {"onnxruntime_loss": got, "torch_loss": want,
                            "abs_diff": abs(got - want)}
    worst = abs(got - want)
    size = BATCH // MICRO_BATCHES
    for i in range(MICRO_BATCHES):
        part = {k: v[i * size:(i + 1) * size] for k, v in inputs.items()}
        with torch.no_grad():
            want = float(module(*part.values()))
        got = ort_loss(model, {k: v.numpy() for k, v in part.items()})
        both_nan = math.isnan(want) and math.isnan(got)
        diff = 0.0 if both_nan else abs(got - want)
        result["microbatches"][str(i)] = {
            "onnxruntime_loss": None if math.isnan(got) else got,
            "torch_loss": None if math.isnan(want) else want,
            "abs_diff": diff}
        worst = max(worst, diff)
    result["max_abs_diff"] = worst
    result["passed"] = bool(worst <= ORT_TOLERANCE)
    if not result["passed"]:
        raise RuntimeError("onnxruntime differs from PyTorch by %g" % worst)
    return result



def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def versions():
    return {"torch": torch.__version__,
            "transformers": transformers.__version__,
            "onnx": onnx.__version__, "onnxruntime": ort.__version__,
            "onnxscript": __import__("onnxscript").__version__,
            "numpy": np.__version__, "python": sys.version.split()[0]}


def write_case(name, out_root):
    maker, description = CASES[name]
    deterministic(SEED)
    gen = torch.Generator().manual_seed(SEED)
    module, inputs = maker(gen)
    perturb_constant_parameters(module, gen)
    module.eval()
    out = os.path.join(out_root, name)
    os.makedirs(out, exist_ok=True)
    print("== %s" % name, flush=True)

    reference = torch_reference(module, inputs)
    meta = {"case": name, "description": description,
            "generator": "scripts/make_reference_models.py",
            "seed": SEED, "versions": versions(), "models": {},
            "batch_size": BATCH, "microbatch_splits": [1, 2, 4, 8],
            "label_input": "labels", "output": "loss"}
    meta["inputs"] = [{"name": k, "shape": list(v.shape),
                       "dtype": str(v.dtype).replace("torch.", "")}
                      for k, v in inputs.items()]

    exports = {}
    exports["model.onnx"] = ("dynamo", DYNAMO_OPSET, export_dynamo)
    exports["model_opset17.onnx"] = ("torchscript", TORCHSCRIPT_OPSET,
                                     export_torchscript)
    trainable = None
    for file_name, (exporter, opset, export) in exports.items():
        entry = {"exporter": exporter, "opset": opset}
        path = os.path.join(out, file_name)
        try:
            model = quietly(export, module, inputs)
        except Exception as error:  # noqa: BLE001 - recorded in meta.json
            if exporter == "dynamo":
                raise
            lines = traceback.format_exception_only(type(error), error)
            entry["exported"] = False
            entry["error"] = "".join(lines).strip().splitlines()[0][:600]
            print("   %s: %s cannot export: %s" % (file_name, exporter,
                                                   entry["error"]))
            if os.path.exists(path):
                os.remove(path)
            meta["models"][file_name] = entry
            continue
        mapping, ordered, notes = map_initializers(module, model)
        if trainable is None:
            trainable = ordered
        else:
            entry["initializer_names_match_model_onnx"] = (
                ordered == trainable)
            if ordered != trainable:
                notes.append("initializer names differ from model.onnx's: "
                             "%s" % dict(zip(trainable, ordered)))
        entry["verification"] = verify_with_onnxruntime(module, model, inputs)
        model = pin_batch(model, BATCH)
        onnx.checker.check_model(model)
        onnx.save(model, path)
        entry.update({
            "exported": True,
            "ir_version": model.ir_version,
            "opset_imports": {(o.domain or "ai.onnx"): o.version
                              for o in model.opset_import},
            "local_functions": len(model.functions),
            "node_count": len(model.graph.node),
            "op_types": op_type_counts(model),
            "parameter_to_initializer": mapping,
            "non_trainable_initializers": other_initializers(
                module, model, set(ordered)),
            "notes": notes,
        })
        if exporter == "dynamo":
            entry["export_options"] = {
                "dynamo": True, "optimize": False,
                "why_optimize_false": "the exporter's optimizer folds "
                "Transpose(weight) and Gather(position table, arange) into "
                "new constant initializers and merges initializers of equal "
                "value, so parameters would stop being initializers",
                "dynamic_shapes": "dimension 0 of every input is "
                "torch.export.Dim('batch')", "external_data": False}
        else:
            entry["export_options"] = {
                "dynamo": False, "do_constant_folding": False,
                "dynamic_axes": "dimension 0 of every input is 'batch'",
                "training": "EVAL"}
        entry["post_processing"] = (
            "graph inputs' dimension 0 pinned to the batch (%d); node and "
            "value metadata_props and doc strings removed" % BATCH)
        meta["models"][file_name] = entry
        print("   %s: %d nodes, onnxruntime agrees within %.2g" % (
            file_name, len(model.graph.node),
            entry["verification"]["max_abs_diff"]), flush=True)

    tied = [names for names, _ in unique_parameters(module) if len(names) > 1]
    meta["tied_parameters"] = [
        {"torch_parameters": names,
         "initializer": meta["models"]["model.onnx"][
             "parameter_to_initializer"][names[0]]} for names in tied]
    meta["trainable_initializers"] = [
        {"name": init, "torch_parameters": names, "shape": list(p.shape),
         "dtype": "float32", "layout": "identity"}
        for init, (names, p) in zip(trainable, unique_parameters(module))]
    meta["param_count"] = sum(p.numel() for _, p in unique_parameters(module))

    expected = {"loss": reference["loss"].numpy().astype(np.float32)}
    for init, g in zip(trainable, reference["grads"]):
        expected["grad." + init] = g.numpy().astype(np.float32)
    for init, p in zip(trainable, reference["after_sgd"]):
        expected["after_sgd." + init] = p.numpy().astype(np.float32)
    expected["losses_sgd"] = reference["losses"].numpy().astype(np.float32)
    expected["loss_step3"] = expected["losses_sgd"][SGD_STEPS]
    expected["trainable_initializers"] = np.array(trainable)
    np.savez_compressed(os.path.join(out, "expected.npz"), **expected)
    np.savez(os.path.join(out, "inputs.npz"),
             **{k: v.numpy() for k, v in inputs.items()})

    meta["loss"] = float(expected["loss"])
    meta["losses_sgd"] = [float(x) for x in expected["losses_sgd"]]
    meta["sgd"] = {"lr": LR, "steps": SGD_STEPS, "momentum": 0.0,
                   "rule": "torch.optim.SGD, same batch every step; "
                   "after_sgd.* after the first step"}
    meta["float32_vs_float64_torch"] = float64_check(module, inputs,
                                                     reference)
    if name.startswith("hf_"):
        meta["float32_vs_float64_torch"]["note"] = (
            "transformers' ForCausalLMLoss casts the logits to float32, so "
            "the float64 model's loss is computed in float32")
    meta["microbatches"] = microbatch_report(name, module, inputs)
    meta["tolerances"] = TOLERANCES
    meta["files"] = {}
    for file_name in sorted(os.listdir(out)):
        if file_name != "meta.json":
            path = os.path.join(out, file_name)
            meta["files"][file_name] = {"bytes": os.path.getsize(path),
                                        "sha256": sha256(path)}
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, allow_nan=False)
        f.write("\n")
    print("   loss %.6f, after %d SGD steps %.6f" % (
        meta["loss"], SGD_STEPS, meta["losses_sgd"][-1]), flush=True)


def write_gpt2_small(path, vocab):
    """A GPT-2-small-shaped model for timing the compiler, random weights."""
    deterministic(SEED)
    seq, batch = 256, 4
    model = Gpt2Loss(gpt2_config(vocab_size=vocab, n_positions=seq,
                                 n_embd=768, n_layer=12, n_head=12,
                                 n_inner=None, initializer_range=0.02))
    model.eval()
    gen = torch.Generator().manual_seed(SEED)
    ids = torch.randint(0, vocab, (batch, seq), generator=gen)
    inputs = {"input_ids": ids, "labels": ids.clone()}
    onnx_model = pin_batch(export_dynamo(model, inputs), batch)
    onnx.save(onnx_model, path)
    print("%s: %d parameters, %d nodes, input_ids int64[%d,%d], vocab %d, "
          "%d bytes" % (path, sum(p.numel() for p in model.parameters()),
                        len(onnx_model.graph.node), batch, seq, vocab,
                        os.path.getsize(path)))


def main():
    default_out = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "..", "test", "E2E", "Inputs", "models")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=default_out)
    parser.add_argument("--only", default=",".join(CASES),
                        help="comma-separated case names (default: all)")
    parser.add_argument("--gpt2-small", metavar="OUT.onnx",
                        help="write only the GPT-2-small-shaped model")
    parser.add_argument("--vocab", type=int, default=50257,
                        help="vocabulary of --gpt2-small (default 50257)")
    args = parser.parse_args()
    if args.gpt2_small:
        write_gpt2_small(args.gpt2_small, args.vocab)
        return 0
    names = args.only.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error("unknown case(s) %s; known: %s" % (
            ", ".join(unknown), ", ".join(CASES)))
    for name in names:
        write_case(name, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
