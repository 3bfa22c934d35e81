#!/usr/bin/env python3
"""Writes the small ONNX models that test the ONNX frontend.

Usage: python3 scripts/gen_test_models.py [OUT_DIR]
(default: test/Frontend/ONNX/Inputs next to this script's repository root).
Needs the `onnx` and `numpy` packages. The outputs are committed; rerun this
after changing it. Models use IR version 8 so that libonnx 1.12 (which knows
IR <= 8, opset <= 17) can check them, except where a test needs otherwise.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    ROOT, "test", "Frontend", "ONNX", "Inputs")
RNG = np.random.default_rng(0)
F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def weights(name, *shape, dtype=np.float32):
    return numpy_helper.from_array(
        RNG.standard_normal(shape).astype(dtype), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def tensor(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def save(name, nodes, inputs, outputs, initializers=(), opset=13, ir=8,
         extra_opsets=()):
    graph = helper.make_graph(nodes, name.replace(".onnx", ""), inputs,
                              outputs, list(initializers))
    model = helper.make_model(
        graph, ir_version=ir,
        opset_imports=[helper.make_opsetid("", opset)] + list(extra_opsets),
        producer_name="pipecc gen_test_models.py")
    path = os.path.join(OUT, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def external_tensor(name, dims):
    t = TensorProto()
    t.name = name
    t.data_type = F32
    t.dims.extend(dims)
    return t


def node(op, inputs, outputs, name, **attrs):
    return helper.make_node(op, inputs, outputs, name=name, **attrs)


def valid_models():
    # MatMul -> Add -> Tanh -> MatMul -> Softmax.
    save("mlp_chain.onnx", [
        node("MatMul", ["x", "fc1.weight"], ["h0"], "/fc1/MatMul"),
        node("Add", ["h0", "fc1.bias"], ["h1"], "/fc1/Add"),
        node("Tanh", ["h1"], ["h2"], "/act/Tanh"),
        node("MatMul", ["h2", "fc2.weight"], ["h3"], "/fc2/MatMul"),
        node("Softmax", ["h3"], ["probs"], "/Softmax", axis=-1),
    ], [tensor("x", F32, [4, 8])], [tensor("probs", F32, [4, 5])],
        [weights("fc1.weight", 8, 16), weights("fc1.bias", 16),
         weights("fc2.weight", 16, 5)])

    # Gemm: transB with C; transA with alpha/beta; no C; unnamed node.
    save("gemm_variants.onnx", [
        node("Gemm", ["a", "w1", "b1"], ["y1"], "gemm_transB", transB=1),
        node("Gemm", ["w2", "y1", "b2"], ["y2"], "gemm_alpha_beta",
             transA=1, alpha=0.5, beta=2.0),
        helper.make_node("Gemm", ["y2", "w3"], ["y3"]),
    ], [tensor("a", F32, [4, 8])],
        [tensor("y2", F32, [6, 16]), tensor("y3", F32, [6, 3])],
        [weights("w1", 16, 8), weights("b1", 16), weights("w2", 4, 6),
         weights("b2", 1, 16), weights("w3", 16, 3)])

    # Reductions, opset 13: ReduceSum's axes are an input, the others'
    # an attribute.
    red = [
        node("ReduceSum", ["x", "sum_axes"], ["s"], "sum", keepdims=0),
        node("ReduceMean", ["x"], ["m"], "mean", axes=[-1]),
        node("ReduceMax", ["x"], ["mx"], "max_all", keepdims=0),
    ]
    outs = [tensor("s", F32, [2, 4]), tensor("m", F32, [2, 3, 1]),
            tensor("mx", F32, [])]
    save("reductions.onnx", red, [tensor("x", F32, [2, 3, 4])], outs,
         [ints("sum_axes", [1])])
    # Opset 18: every reduction takes its axes as an input.
    save("reductions_opset18.onnx", [
        node("ReduceSum", ["x", "sum_axes"], ["s"], "sum", keepdims=0),
        node("ReduceMean", ["x", "mean_axes"], ["m"], "mean"),
        node("ReduceMax", ["x"], ["mx"], "max_all", keepdims=0),
        node("ReduceMean", ["x"], ["same"], "noop", noop_with_empty_axes=1),
    ], [tensor("x", F32, [2, 3, 4])],
        outs + [tensor("same", F32, [2, 3, 4])],
        [ints("sum_axes", [1]), ints("mean_axes", [-1])], opset=18)

    # Reshape whose shape comes from Shape -> Gather -> Unsqueeze -> Concat.
    save("reshape_shape_subgraph.onnx", [
        node("Shape", ["x"], ["shape"], "/Shape"),
        node("Constant", [], ["zero"], "/Constant",
             value=numpy_helper.from_array(np.array(0, dtype=np.int64))),
        node("Gather", ["shape", "zero"], ["batch"], "/Gather", axis=0),
        node("Constant", [], ["axes0"], "/Constant_1", value_ints=[0]),
        node("Unsqueeze", ["batch", "axes0"], ["batch1"], "/Unsqueeze"),
        node("Constant", [], ["minus1"], "/Constant_2", value_ints=[-1]),
        node("Concat", ["batch1", "minus1"], ["target"], "/Concat", axis=0),
        node("Reshape", ["x", "target"], ["flat"], "/Reshape"),
        node("Relu", ["flat"], ["y"], "/Relu"),
    ], [tensor("x", F32, [2, 3, 4])], [tensor("y", F32, [2, 12])])

    # Transpose (default and explicit perm), Identity, MatMul with 1-D
    # operands, Squeeze/Unsqueeze of a non-constant tensor.
    save("transpose_matmul.onnx", [
        node("Transpose", ["x"], ["xt"], "/Transpose"),
        node("Transpose", ["x"], ["xp"], "/Transpose_1", perm=[0, 2, 1]),
        node("Identity", ["xp"], ["xi"], "/Identity"),
        node("MatMul", ["xi", "v"], ["mv"], "/MatMul_vec"),
        node("MatMul", ["u", "m"], ["um"], "/MatMul_vecmat"),
        node("Unsqueeze", ["um", "uaxes"], ["um1"], "/Unsqueeze"),
        node("Squeeze", ["um1", "uaxes"], ["um2"], "/Squeeze"),
    ], [tensor("x", F32, [2, 3, 4]), tensor("u", F32, [4])],
        [tensor("xt", F32, [4, 3, 2]), tensor("mv", F32, [2, 4]),
         tensor("um2", F32, [5])],
        [weights("v", 3), weights("m", 4, 5), ints("uaxes", [0])])

    # Gemm -> SoftmaxCrossEntropyLoss, the shape of every exported loss.
    save("cross_entropy.onnx", [
        node("Gemm", ["x", "head.weight", "head.bias"], ["logits"],
             "/head/Gemm", transB=1),
        node("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"],
             "/SoftmaxCrossEntropyLoss", reduction="mean", ignore_index=-100),
    ], [tensor("x", F32, [4, 8]), tensor("labels", I64, [4])],
        [tensor("loss", F32, [])],
        [weights("head.weight", 10, 8), weights("head.bias", 10)])

    # Initializers of several element types, from raw_data and typed fields.
    f16 = numpy_helper.from_array(np.array([1.5, -2.0], np.float16), "half")
    i32 = numpy_helper.from_array(np.array([1, -2, 3], np.int32), "int32s")
    flags = numpy_helper.from_array(np.array([True, False]), "flags")
    typed = helper.make_tensor("typed_floats", F32, [2], [0.25, -4.0])
    typed_i64 = helper.make_tensor("typed_ints", I64, [3], [7, 8, -9])
    # Each is also a graph output, so that no cleanup pass drops it.
    save("initializer_types.onnx", [
        node("Identity", ["x"], ["y"], "/Identity"),
    ], [tensor("x", F32, [2])],
        [tensor("y", F32, [2]), tensor("half", TensorProto.FLOAT16, [2]),
         tensor("int32s", TensorProto.INT32, [3]),
         tensor("flags", TensorProto.BOOL, [2]),
         tensor("typed_floats", F32, [2]), tensor("typed_ints", I64, [3])],
        [f16, i32, flags, typed, typed_i64])

    # Opset 11 Softmax: coerced to 2-D at axis 1.
    save("softmax_opset11.onnx", [
        node("Softmax", ["x"], ["y"], "/Softmax_last"),
        node("Softmax", ["z"], ["w"], "/Softmax_flat"),
    ], [tensor("x", F32, [4, 10]), tensor("z", F32, [2, 3, 4])],
        [tensor("y", F32, [4, 10]), tensor("w", F32, [2, 3, 4])], opset=11)

    # Free batch dimension: imports with --input-shape x=<n>x8.
    save("free_batch.onnx", [
        node("Gemm", ["x", "w", "b"], ["y"], "/Gemm", transB=1),
        node("Relu", ["y"], ["out"], "/Relu"),
    ], [tensor("x", F32, ["batch", 8])], [tensor("out", F32, ["batch", 4])],
        [weights("w", 4, 8), weights("b", 4)])

    # External data in the model's folder (offset and length used).
    ext = os.path.join(OUT, "external_ok")
    os.makedirs(ext, exist_ok=True)
    w = RNG.standard_normal((4, 8)).astype(np.float32)
    with open(os.path.join(ext, "weights.bin"), "wb") as f:
        f.write(b"\0" * 16 + w.tobytes())
    t = external_tensor("w", [4, 8])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "16"),
                 ("length", str(w.nbytes))):
        t.external_data.add(key=k, value=v)
    save("external_ok/model.onnx", [
        node("MatMul", ["x", "w"], ["y"], "/MatMul")],
        [tensor("x", F32, [2, 4])], [tensor("y", F32, [2, 8])], [t])


def bad_models():
    with open(os.path.join(OUT, "not_onnx.onnx"), "w") as f:
        f.write("this is a text file, not an ONNX model\n")
    with open(os.path.join(OUT, "mlp_chain.onnx"), "rb") as f:
        data = f.read()
    with open(os.path.join(OUT, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])

    # Two unsupported nodes: DeformConv (no pattern) and an op of another
    # domain.
    save("unsupported.onnx", [
        node("DeformConv", ["x", "w"], ["c"], "/conv/DeformConv"),
        helper.make_node("FancyNorm", ["c"], ["n"], name="/norm/FancyNorm",
                         domain="com.example"),
        node("Relu", ["n"], ["y"], "/Relu"),
    ], [tensor("x", F32, [1, 1, 5, 5])], [tensor("y", F32, [1, 2, 3, 3])],
        [weights("w", 2, 1, 3, 3)],
        extra_opsets=[helper.make_opsetid("com.example", 1)])

    # External data outside the model's folder: refused even though the
    # file exists.
    with open(os.path.join(OUT, "outside.bin"), "wb") as f:
        f.write(np.zeros(32, np.float32).tobytes())
    t = external_tensor("secret", [4, 8])
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="../outside.bin")
    save("external_outside/model.onnx", [
        node("MatMul", ["x", "secret"], ["y"], "/MatMul")],
        [tensor("x", F32, [2, 4])], [tensor("y", F32, [2, 8])], [t])

    # SoftmaxCrossEntropyLoss with class weights.
    save("sce_weights.onnx", [
        node("SoftmaxCrossEntropyLoss", ["logits", "labels", "cw"], ["loss"],
             "/loss"),
    ], [tensor("logits", F32, [4, 3]), tensor("labels", I64, [4])],
        [tensor("loss", F32, [])], [weights("cw", 3)])

    # Shapes that do not broadcast: a conversion error at the node.
    save("bad_broadcast.onnx", [
        node("Add", ["x", "y"], ["z"], "/bad/Add"),
    ], [tensor("x", F32, [2, 3]), tensor("y", F32, [4])],
        [tensor("z", F32, [2, 3])], opset=18, ir=9)


    # Graphs ONNX itself forbids: a node with too many inputs, a name
    # assigned twice, an input without data.
    save("add_three_inputs.onnx", [
        node("Add", ["x", "w", "w"], ["y"], "/add"),
    ], [tensor("x", F32, [2, 3])], [tensor("y", F32, [2, 3])],
        [weights("w", 2, 3)])
    save("assigned_twice.onnx", [
        node("Relu", ["x"], ["y"], "/first"),
        node("Neg", ["x"], ["y"], "/second"),
    ], [tensor("x", F32, [2, 3])], [tensor("y", F32, [2, 3])])
    save("zero_batch.onnx", [
        node("Relu", ["x"], ["y"], "/relu"),
    ], [tensor("x", F32, [0, 3])], [tensor("y", F32, [0, 3])])


def transformer_models():
    """Attention-block ops (issue 7). Written after the others so that the
    random weights of the older models stay the same."""
    f32 = lambda name, value: numpy_helper.from_array(
        np.array(value, dtype=np.float32), name)
    mask = np.tril(np.ones((4, 4), np.float32)).reshape(1, 1, 4, 4)
    # An embedding lookup, an RMS-style norm through Pow/ReduceMean/Sqrt,
    # q/k/v by Split, causal masking of a buffer by Slice/Equal/Cast/Where,
    # Softmax and an Erf.
    save("attention_ops.onnx", [
        node("Constant", [], ["ninf"], "/attn/Constant",
             value=f32("ninf", -np.inf)),
        node("Gather", ["table", "ids"], ["e"], "/wte/Gather"),
        node("Add", ["x", "e"], ["h"], "/Add"),
        node("Pow", ["h", "two"], ["p"], "/norm/Pow"),
        node("ReduceMean", ["p"], ["ms"], "/norm/ReduceMean", axes=[-1]),
        node("Sqrt", ["ms"], ["rms"], "/norm/Sqrt"),
        node("Div", ["h", "rms"], ["n"], "/norm/Div"),
        node("Split", ["n", "split"], ["q", "k", "v"], "/attn/Split", axis=2),
        node("Transpose", ["k"], ["kt"], "/attn/Transpose", perm=[0, 2, 1]),
        node("MatMul", ["q", "kt"], ["scores"], "/attn/MatMul"),
        node("Slice", ["mask", "zero", "four", "two_i"], ["m1"],
             "/attn/Slice"),
        node("Slice", ["m1", "zero", "four", "three_i"], ["m2"],
             "/attn/Slice_1"),
        node("Equal", ["m2", "zero_f"], ["eq"], "/attn/Equal"),
        node("Cast", ["eq"], ["cond"], "/attn/Cast", to=TensorProto.BOOL),
        node("Where", ["cond", "ninf", "scores"], ["masked"], "/attn/Where"),
        node("Softmax", ["masked"], ["probs"], "/attn/Softmax", axis=-1),
        node("MatMul", ["probs", "v"], ["att"], "/attn/MatMul_1"),
        node("Erf", ["att"], ["y"], "/Erf"),
    ], [tensor("x", F32, [2, 4, 6]), tensor("ids", I64, [2, 4])],
        [tensor("y", F32, [1, 2, 4, 2])],
        [weights("table", 10, 6), numpy_helper.from_array(mask, "mask"),
         f32("two", 2.0), f32("zero_f", 0.0),
         ints("split", [2, 2, 2]), ints("zero", [0]), ints("four", [4]),
         ints("two_i", [2]), ints("three_i", [3])])

    # Native LayerNormalization (opset 17) over the last axis.
    save("layernorm_opset17.onnx", [
        node("LayerNormalization", ["x", "scale", "bias"], ["y"], "/ln",
             axis=-1, epsilon=1e-5),
    ], [tensor("x", F32, [2, 3, 4])], [tensor("y", F32, [2, 3, 4])],
        [weights("scale", 4), weights("bias", 4)], opset=17)

    # Gelu-20 both ways; Dropout in inference mode and Reciprocal.
    save("gelu_opset20.onnx", [
        node("Gelu", ["x"], ["g"], "/Gelu"),
        node("Gelu", ["g"], ["y"], "/Gelu_tanh", approximate="tanh"),
    ], [tensor("x", F32, [2, 3])], [tensor("y", F32, [2, 3])], opset=20,
        ir=9)
    save("dropout_reciprocal.onnx", [
        node("Dropout", ["x", "ratio", "training"], ["d"], "/Dropout"),
        node("Reciprocal", ["d"], ["y"], "/Reciprocal"),
    ], [tensor("x", F32, [2, 3])], [tensor("y", F32, [2, 3])],
        [f32("ratio", 0.1), numpy_helper.from_array(np.array(False),
                                                    "training")])

    # Refused: an exponent Pow has no rule for, a strided Slice of a
    # computed tensor, a comparison of computed values.
    save("transformer_unsupported.onnx", [
        node("Pow", ["x", "e"], ["p"], "/Pow"),
    ], [tensor("x", F32, [2, 3])], [tensor("p", F32, [2, 3])],
        [f32("e", 1.7)])
    save("slice_step.onnx", [
        node("Relu", ["x"], ["r"], "/Relu"),
        node("Slice", ["r", "zero", "four", "one", "two"], ["y"], "/Slice"),
    ], [tensor("x", F32, [2, 4])], [tensor("y", F32, [2, 2])],
        [ints("zero", [0]), ints("four", [4]), ints("one", [1]),
         ints("two", [2])])
    save("equal_computed.onnx", [
        node("Relu", ["x"], ["r"], "/Relu"),
        node("Equal", ["r", "x"], ["y"], "/Equal"),
    ], [tensor("x", F32, [2, 3])], [tensor("y", TensorProto.BOOL, [2, 3])])


def cnn_models():
    # Conv with bias and explicit pads, Conv with auto_pad and groups, 1-D
    # Conv, the pools with their window attributes.
    save("conv_pool.onnx", [
        node("Conv", ["x", "c1.w", "c1.b"], ["h1"], "/c1/Conv",
             kernel_shape=[3, 3], pads=[1, 0, 2, 1], strides=[2, 1]),
        node("Conv", ["x", "c2.w"], ["h2"], "/c2/Conv", group=2,
             auto_pad="SAME_UPPER", strides=[2, 2], dilations=[1, 2]),
        node("MaxPool", ["h1"], ["p1"], "/p1/MaxPool", kernel_shape=[2, 2],
             strides=[2, 2], ceil_mode=1),
        node("AveragePool", ["h2"], ["p2"], "/p2/AveragePool",
             kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
        node("GlobalAveragePool", ["p1"], ["g1"], "/g1/GlobalAveragePool"),
        node("GlobalMaxPool", ["p2"], ["g2"], "/g2/GlobalMaxPool"),
        node("Conv", ["s", "c3.w"], ["h3"], "/c3/Conv", pads=[2, 2]),
    ], [tensor("x", F32, [2, 4, 9, 8]), tensor("s", F32, [2, 3, 10])],
        [tensor("g1", F32, None), tensor("g2", F32, None),
         tensor("h3", F32, None)],
        [weights("c1.w", 6, 4, 3, 3), weights("c1.b", 6),
         weights("c2.w", 4, 2, 3, 3), weights("c3.w", 5, 3, 5)], opset=17)

    # One model per unsupported or inconsistent window attribute.
    def conv_error(name, weight_shape, out, **attrs):
        save(name, [node("Conv", ["x", "w"], ["y"], "/bad/Conv", **attrs)],
             [tensor("x", F32, [1, 4, 6, 6])], [tensor("y", F32, None)],
             [weights("w", *weight_shape)], opset=17)

    conv_error("conv_auto_pad_bad.onnx", [2, 4, 3, 3], 2,
               auto_pad="SAME_MIDDLE")
    conv_error("conv_pads_and_auto_pad.onnx", [2, 4, 3, 3], 2,
               auto_pad="VALID", pads=[1, 1, 1, 1])
    conv_error("conv_kernel_mismatch.onnx", [2, 4, 3, 3], 2,
               kernel_shape=[2, 2])
    conv_error("conv_group_bad.onnx", [3, 2, 3, 3], 3, group=3)
    conv_error("conv_too_small.onnx", [2, 4, 3, 3], 2, dilations=[4, 1])
    save("maxpool_indices.onnx", [
        node("MaxPool", ["x"], ["y", "idx"], "/bad/MaxPool",
             kernel_shape=[2, 2], storage_order=1),
    ], [tensor("x", F32, [1, 4, 6, 6])],
        [tensor("y", F32, None), tensor("idx", I64, None)], opset=17)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    valid_models()
    bad_models()
    transformer_models()
    cnn_models()
    print("wrote models to", OUT)
