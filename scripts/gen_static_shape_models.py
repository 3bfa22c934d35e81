#!/usr/bin/env python3
"""Writes the small ONNX models that test static shape and mask arithmetic
(the graph dialect's constant evaluator) and the shape/mask/index ops.

Usage: python3 scripts/gen_static_shape_models.py [OUT_DIR]
(default: test/Frontend/ONNX/Inputs/static). Needs `onnx` and `numpy`.
The outputs are committed; rerun this after changing it.

  mask_opset{13,18,21}.onnx  position and causal-mask arithmetic as the
      dynamo exporter writes it for a decoder (Shape, Gather, Range,
      Unsqueeze, Expand, CumSum, Less/LessOrEqual/Equal/Not/And/Or, Trilu,
      ConstantOfShape, CastLike or Cast, Where, Slice with a negative step,
      Concat, Size), feeding one computed attention score. Everything but
      the scores is static and folds into constants. The expected folded
      mask and positions are computed here with numpy and written as
      FileCheck lines to mask_expected.check.
  split_pad_opset{13,18}.onnx  Split (13: sizes input; 18: num_outputs),
      Pad (13: pads input; 18: pads and axes inputs), Reduce* with axes
      inputs, SplitToSequence + SequenceAt, Flatten, Squeeze/Unsqueeze on
      computed tensors.
  errors_*.onnx  unsupported attribute values: one error line each.
"""

import os
import re
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    ROOT, "test", "Frontend", "ONNX", "Inputs", "static")
RNG = np.random.default_rng(0)
F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
# The IR version each opset needs: 13 and 18 load with libonnx 1.12's IR 8
# checker (18 declares 8, as exporters of that time did); 21 needs IR 10.
IR = {13: 8, 17: 8, 18: 8, 21: 10}


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def tensor(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def node(op, inputs, outputs, name, **attrs):
    return helper.make_node(op, inputs, outputs, name=name, **attrs)


def const(name, value):
    return node("Constant", [], [name], "/" + name,
                value=numpy_helper.from_array(np.asarray(value), name))


def save(name, nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, name.replace(".onnx", ""), inputs,
                              outputs, list(initializers))
    model = helper.make_model(
        graph, ir_version=IR[opset],
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="pipecc gen_static_shape_models.py")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(model.SerializeToString())


def unsqueeze(opset, x, axes, out, name):
    """Unsqueeze with axes as an attribute (< 13) or an input."""
    if opset < 13:
        return [node("Unsqueeze", [x], [out], name, axes=axes)]
    return [const(name.strip("/") + "_axes", np.array(axes, np.int64)),
            node("Unsqueeze", [x, name.strip("/") + "_axes"], [out], name)]


def mask_model(opset):
    """Scores of x [B=2, S=4, D=6] with a causal mask, a padding mask from
    a constant attention mask and positions from CumSum, as decoders
    export them. Returns the model's nodes and the numpy values the
    static part must fold to."""
    s = 4
    nodes = [
        node("Shape", ["x"], ["x_shape"], "/Shape"),
        const("one", np.array(1, np.int64)),
        const("zero", np.array(0, np.int64)),
        node("Gather", ["x_shape", "one"], ["seq"], "/Gather", axis=0),
        node("Range", ["zero", "seq", "one"], ["positions"], "/Range"),
    ]
    nodes += unsqueeze(opset, "positions", [0], "pos_row", "/Unsqueeze_row")
    nodes += unsqueeze(opset, "positions", [1], "pos_col", "/Unsqueeze_col")
    # Causal: key position <= query position; also via Trilu of ones.
    nodes += [
        node("LessOrEqual", ["pos_row", "pos_col"], ["causal"], "/LessEq"),
        node("Shape", ["x"], ["bs"], "/Shape_bs", **(
            {"start": 0, "end": 2} if opset >= 15 else {})),
    ]
    if opset < 15:
        nodes += [const("bs_starts", np.array([0], np.int64)),
                  const("bs_ends", np.array([2], np.int64)),
                  node("Slice", ["bs", "bs_starts", "bs_ends"], ["bs2"],
                       "/Slice_bs")]
    else:
        nodes += [node("Identity", ["bs"], ["bs2"], "/Identity_bs")]
    nodes += [
        node("ConstantOfShape", ["bs2"], ["ones_bs"], "/ConstantOfShape",
             value=numpy_helper.from_array(np.array([1], np.int64))),
        # Hugging Face positions from an attention mask: cumsum(mask) - 1.
        const("cum_axis", np.array(1, np.int64)),
        node("CumSum", ["ones_bs", "cum_axis"], ["cum"], "/CumSum"),
        node("Sub", ["cum", "one"], ["pos_ids"], "/Sub_pos"),
        # The padding mask: attention_mask == 0 (last key of batch 1).
        node("Equal", ["attention_mask", "zero"], ["pad"], "/Equal"),
        node("Not", ["pad"], ["keep"], "/Not"),
    ]
    nodes += unsqueeze(opset, "keep", [1], "keep3", "/Unsqueeze_keep")
    nodes += [
        node("And", ["causal", "keep3"], ["allowed"], "/And"),
        # Trilu of a ones matrix gives the same causal mask; Or keeps it.
        const("ones_ss", np.ones((s, s), np.int64)),
    ]
    if opset >= 14:
        nodes += [node("Trilu", ["ones_ss"], ["tril"], "/Trilu", upper=0)]
    else:  # Trilu is new in 14: the lower triangle by comparisons
        nodes += [node("Cast", ["causal"], ["tril"], "/Cast_causal", to=I64)]
    nodes += [
        node("Cast", ["tril"], ["tril_b"], "/Cast_tril", to=BOOL),
        node("Or", ["allowed", "tril_b"], ["allowed_or"], "/Or"),
        node("And", ["allowed", "allowed_or"], ["allowed2"], "/And2"),
        const("zero_f", np.array(0.0, np.float32)),
        const("ninf", np.array(-np.inf, np.float32)),
    ]
    if opset >= 15:
        nodes += [node("CastLike", ["ninf", "x"], ["ninf_like"], "/CastLike")]
    else:
        nodes += [node("Cast", ["ninf"], ["ninf_like"], "/Cast_ninf", to=F32)]
    nodes += [
        node("Where", ["allowed2", "zero_f", "ninf_like"], ["bias"],
             "/Where_bias"),
        # Reversed positions by a negative step (a constant Slice), and a
        # Concat of shape pieces with Size.
        const("rs", np.array([-1], np.int64)),
        const("re", np.array([-(2**63)], np.int64)),
        const("ra", np.array([0], np.int64)),
        const("rstep", np.array([-1], np.int64)),
        node("Slice", ["positions", "rs", "re", "ra", "rstep"], ["rev"],
             "/Slice_rev"),
        node("Size", ["x"], ["size"], "/Size"),
    ]
    nodes += unsqueeze(opset, "size", [0], "size1", "/Unsqueeze_size")
    nodes += [
        node("Concat", ["rev", "size1"], ["rev_size"], "/Concat", axis=0),
        node("Less", ["rev", "seq"], ["rev_lt"], "/Less"),
        node("Greater", ["rev", "zero"], ["rev_gt"], "/Greater"),
        node("GreaterOrEqual", ["rev", "one"], ["rev_ge"], "/GreaterOrEqual"),
        node("Cast", ["rev_ge"], ["rev_ge_i"], "/Cast_ge", to=I64),
        # The computed part: masked scores of x.
        node("Transpose", ["x"], ["xt"], "/Transpose", perm=[0, 2, 1]),
        node("MatMul", ["x", "xt"], ["scores"], "/MatMul"),
        node("Add", ["scores", "bias"], ["masked"], "/Add_bias"),
        node("Softmax", ["masked"], ["probs"], "/Softmax", axis=-1),
    ]
    # Expand the (static) positions to the batch.
    nodes += [
        const("expand_shape", np.array([1, 3], np.int64)),
        node("Expand", ["pos_col", "expand_shape"], ["pos_b"], "/Expand"),
    ]
    mask = np.array([[1, 1, 1, 1], [1, 1, 1, 0]], np.int64)
    inits = [numpy_helper.from_array(mask, "attention_mask")]
    outputs = [tensor("probs", F32, [2, 4, 4]), tensor("pos_ids", I64, [2, 4]),
               tensor("rev_size", I64, [5]), tensor("pos_b", I64, [4, 3]),
               tensor("rev_lt", BOOL, [4]), tensor("rev_gt", BOOL, [4]),
               tensor("rev_ge_i", I64, [4])]
    # numpy reference of the static part.
    positions = np.arange(s)
    causal = positions[None, :] <= positions[:, None]
    keep = ~(mask == 0)
    allowed = causal[None] & keep[:, None, :]
    allowed = allowed & (allowed | np.tril(np.ones((s, s))).astype(bool))
    bias = np.where(allowed, np.float32(0), np.float32(-np.inf))
    rev = positions[::-1]
    expected = {
        "bias": bias, "pos_ids": np.cumsum(np.ones((2, s), np.int64), 1) - 1,
        "rev_size": np.concatenate([rev, [2 * s * 6]]),
        "pos_b": np.broadcast_to(positions[:, None], (s, 3)),
        "rev_lt": rev < s, "rev_gt": rev > 0,
        "rev_ge_i": (rev >= 1).astype(np.int64)}
    save("mask_opset%d.onnx" % opset, nodes, [tensor("x", F32, [2, s, 6])],
         outputs, inits, opset=opset)
    return expected


def mlir_dense(value):
    """The text of a numpy array as MLIR prints a dense attribute."""
    def element(v):
        if isinstance(v, (bool, np.bool_)):
            return "true" if v else "false"
        if isinstance(v, (np.floating, float)):
            return "0xFF800000" if np.isneginf(v) else (
                "0.000000e+00" if v == 0 else repr(float(v)))
        return str(int(v))

    def nested(a):
        if a.ndim == 0:
            return element(a[()])
        return "[" + ", ".join(nested(x) for x in a) + "]"
    flat = value.reshape(-1)
    if flat.size and all(x == flat[0] for x in flat):
        return element(flat[0])
    return nested(value)


def check_line(value):
    """A FileCheck line matching the graph.constant that holds `value`."""
    types = {np.dtype(np.float32): "f32", np.dtype(np.int64): "i64",
             np.dtype(np.bool_): "i1"}
    # "[[" would start a FileCheck variable: match it as a regex.
    text = re.sub(r"\[\[+", lambda m: "{{" + "\\[" * len(m.group(0)) + "}}",
                  mlir_dense(value))
    return "CHECK-DAG: graph.constant dense<%s> : tensor<%s>" % (
        text, "x".join([str(d) for d in value.shape] + [types[value.dtype]]))


def split_pad_model(opset):
    """Split, Pad, Reduce*, SplitToSequence/SequenceAt, Flatten, Squeeze on
    a computed tensor y = x * w."""
    nodes = [node("Mul", ["x", "w"], ["y"], "/Mul")]
    inits = [numpy_helper.from_array(
        RNG.standard_normal((2, 6)).astype(np.float32), "w")]
    if opset >= 18:
        nodes += [node("Split", ["y"], ["s0", "s1", "s2"], "/Split", axis=1,
                       num_outputs=3)]
    else:
        inits.append(ints("split_sizes", [2, 2, 2]))
        nodes += [node("Split", ["y", "split_sizes"], ["s0", "s1", "s2"],
                       "/Split", axis=1)]
    inits += [ints("pads", [1, 2] if opset >= 18 else [0, 1, 0, 2]),
              ints("reduce_axes", [1])]
    pad_inputs = ["s0", "pads"]
    if opset >= 18:
        inits.append(ints("pad_axes", [1]))
        pad_inputs += ["", "pad_axes"]
    nodes += [
        node("Pad", pad_inputs, ["padded"], "/Pad", mode="constant"),
        node("ReduceSum", ["padded", "reduce_axes"], ["rsum"], "/ReduceSum",
             keepdims=0),
        node("ReduceMax" if opset >= 18 else "ReduceMean",
             ["s1", "reduce_axes"] if opset >= 18 else ["s1"], ["rmax"],
             "/ReduceMax" if opset >= 18 else "/ReduceMean",
             **({} if opset >= 18 else {"axes": [1]}), keepdims=1),
        node("SplitToSequence", ["s2"], ["seq"], "/SplitToSequence", axis=1,
             keepdims=0),
        const("at", np.array(-1, np.int64)),
        node("SequenceAt", ["seq", "at"], ["last"], "/SequenceAt"),
        node("Flatten", ["y"], ["flat"], "/Flatten", axis=0),
        const("sq_axes", np.array([0], np.int64)),
        node("Squeeze", ["flat", "sq_axes"], ["squeezed"], "/Squeeze"),
    ]
    save("split_pad_opset%d.onnx" % opset, nodes, [tensor("x", F32, [2, 6])],
         [tensor("rsum", F32, [2]), tensor("rmax", F32, [2, 1]),
          tensor("last", F32, [2]), tensor("squeezed", F32, [12])],
         inits, opset=opset)


def error_models():
    save("errors_pad_mode.onnx", [
        node("Pad", ["x", "pads"], ["y"], "/Pad", mode="reflect"),
    ], [tensor("x", F32, [2, 3])], [tensor("y", F32, [2, 5])],
        [ints("pads", [0, 1, 0, 1])], opset=13)
    save("errors_cumsum_flag.onnx", [
        const("axis", np.array(0, np.int64)),
        node("CumSum", ["x", "axis"], ["y"], "/CumSum", exclusive=2),
    ], [tensor("x", F32, [2, 3])], [tensor("y", F32, [2, 3])], opset=13)
    save("errors_constant_string.onnx", [
        node("Constant", [], ["c"], "/Constant", value_string="hi"),
        node("Identity", ["x"], ["y"], "/Identity"),
    ], [tensor("x", F32, [2, 3])], [tensor("y", F32, [2, 3])], opset=13)
    save("errors_huge_shape.onnx", [
        const("shape", np.array([2**31, 2**31], np.int64)),
        node("ConstantOfShape", ["shape"], ["y"], "/ConstantOfShape"),
    ], [tensor("x", F32, [2, 3])], [tensor("y", F32, [2**31, 2**31])],
        opset=13)
    save("errors_range_computed.onnx", [
        node("ReduceSum", ["x"], ["n"], "/ReduceSum", keepdims=0),
        const("zero", np.array(0.0, np.float32)),
        const("one", np.array(1.0, np.float32)),
        node("Range", ["zero", "n", "one"], ["y"], "/Range"),
    ], [tensor("x", F32, [2, 3])], [tensor("y", F32, [None])], opset=13)


def main():
    expected = None
    for opset in (13, 18, 21):
        expected = mask_model(opset)
    with open(os.path.join(OUT, "mask_expected.check"), "w") as f:
        f.write("; Generated by scripts/gen_static_shape_models.py (numpy).\n")
        for key, value in expected.items():
            f.write("; %s\n%s\n" % (key, check_line(np.asarray(value))))
    for opset in (13, 18):
        split_pad_model(opset)
    error_models()


if __name__ == "__main__":
    main()
