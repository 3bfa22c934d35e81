#!/usr/bin/env python3
"""Writes the CNN op cases: test/E2E/Inputs/models/cnn_ops_{conv,pool}.

Each case is an ONNX model (opset 18, written with onnx.helper so that every
attribute variant appears exactly as exporters write it) of independent
branches, one per attribute variant:

    T_i = x_i + P_i,   Y_i = op_i(T_i),   loss = sum_i ReduceSum(Y_i * R_i)

with P_i and R_i (and the conv weights and biases) trainable initializers.
So dLoss/dR_i is the op's forward result and dLoss/dP_i its input gradient,
element by element, and dLoss/dW_i, dLoss/dB_i the conv's weight and bias
gradients. The truth is PyTorch autograd (float32) on the same function
written with torch.nn.functional; onnxruntime runs the ONNX model and must
agree with it (the generator fails otherwise), which checks that the
PyTorch spelling means what the ONNX attributes say. The files follow
shared/cases/README.md (train_case.py reads them).

Run with the torch venv: ~/.cache/pipecc/torch-venv/bin/python
scripts/make_cnn_op_cases.py
"""
import json
import os

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "test", "E2E", "Inputs", "models")
LR, SGD_STEPS = 0.1, 3
RNG = np.random.default_rng(2026)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def quantized(*shape):
    """Values in {-1, -0.5, 0, 0.5, 1}: max-pool windows hold ties."""
    return (RNG.integers(-2, 3, size=shape) * 0.5).astype(np.float32)


def same_pads(sizes, kernel, strides, dilations, upper):
    """ONNX auto_pad SAME_UPPER / SAME_LOWER as explicit [begins, ends]."""
    begins, ends = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        out = -(-size // s)
        total = max(0, (out - 1) * s + d * (k - 1) + 1 - size)
        small, large = total // 2, total - total // 2
        begins.append(small if upper else large)
        ends.append(large if upper else small)
    return begins + ends


def torch_pad(t, pads, value):
    """ONNX pads [b1..bn, e1..en] as F.pad's last-dimension-first list."""
    n = len(pads) // 2
    spec = []
    for i in reversed(range(n)):
        spec += [pads[i], pads[n + i]]
    return F.pad(t, spec, value=value)


class Case:
    def __init__(self, name, description):
        self.name, self.description = name, description
        self.nodes, self.inits, self.params = [], [], {}
        self.torch_terms = []  # functions of the torch parameters
        self.inputs = {}
        self.branches = []

    def param(self, name, value):
        self.inits.append(numpy_helper.from_array(value, name))
        self.params[name] = value

    def branch(self, tag, x_shape, build, forward, p=None):
        """`build(t)` adds the branch's nodes reading tensor name t and
        returns the output name; `forward(t, params)` is the torch spelling."""
        p_name, r_name = "%s.P" % tag, "%s.R" % tag
        self.param(p_name, quantized(*x_shape) if p is None else p)
        t = "%s.t" % tag
        x_name = self.x_name(x_shape)
        self.nodes.append(helper.make_node("Add", [x_name, p_name], [t],
                                           name="/%s/add" % tag))
        y = build(t)
        self.branches.append((tag, x_name, y, forward))
        # R's shape comes from running the torch forward once.
        with torch.no_grad():
            probe = forward(torch.from_numpy(self.params[p_name]),
                            {k: torch.from_numpy(v)
                             for k, v in self.params.items()})
        self.param(r_name, rand(*probe.shape))
        prod, total = "%s.yr" % tag, "%s.loss" % tag
        self.nodes.append(helper.make_node("Mul", [y, r_name], [prod],
                                           name="/%s/mul" % tag))
        self.nodes.append(helper.make_node("ReduceSum", [prod], [total],
                                           name="/%s/sum" % tag,
                                           keepdims=0))
        return total

    def x_name(self, shape):
        # One graph input per distinct branch input shape (batch 1), zero so
        # that the quantized P keeps its ties.
        name = "x_" + "x".join(str(d) for d in shape)
        self.inputs.setdefault(name, np.zeros(shape, np.float32))
        return name

    def write(self, totals):
        loss_terms = totals
        acc = loss_terms[0]
        for i, term in enumerate(loss_terms[1:]):
            out = "loss" if i == len(loss_terms) - 2 else "acc%d" % i
            self.nodes.append(helper.make_node("Add", [acc, term], [out],
                                               name="/loss/add%d" % i))
            acc = out
        graph = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape)
             for k, v in self.inputs.items()],
            [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
            self.inits)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 18)],
            producer_name="scripts/make_cnn_op_cases.py")
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)

        # PyTorch truth: loss, gradients, one SGD step, 3 SGD steps.
        def torch_loss(params):
            total = 0
            for tag, x_name, y, forward in self.branches:
                t = torch.from_numpy(self.inputs[x_name]) + params[tag + ".P"]
                total = total + (forward(t, params) * params[tag + ".R"]).sum()
            return total

        params = {k: torch.tensor(v, requires_grad=True)
                  for k, v in self.params.items()}
        loss = torch_loss(params)
        grads = torch.autograd.grad(loss, list(params.values()))
        losses = [loss.item()]
        current = {k: v.detach().clone() for k, v in params.items()}
        after_sgd = None
        for step in range(SGD_STEPS):
            leaf = {k: v.clone().requires_grad_(True)
                    for k, v in current.items()}
            step_loss = torch_loss(leaf)
            step_grads = torch.autograd.grad(step_loss, list(leaf.values()))
            current = {k: (v - LR * g).detach()
                       for (k, v), g in zip(leaf.items(), step_grads)}
            if step == 0:
                after_sgd = current
            losses.append(torch_loss(current).item())

        # onnxruntime must agree with the PyTorch spelling on the forward.
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        (ort_loss,) = session.run(["loss"], dict(self.inputs))
        per_branch = {}
        for tag, x_name, y, forward in self.branches:
            extra = onnx.ModelProto()
            extra.CopyFrom(model)
            extra.graph.output.append(helper.make_tensor_value_info(
                y, TensorProto.FLOAT, None))
            s = ort.InferenceSession(extra.SerializeToString(),
                                     providers=["CPUExecutionProvider"])
            (got,) = s.run([y], dict(self.inputs))
            with torch.no_grad():
                t = torch.from_numpy(self.inputs[x_name]) + params[tag + ".P"]
                want = forward(t, params).numpy()
            err = float(np.max(np.abs(got - want)))
            per_branch[tag] = err
            assert got.shape == want.shape and err < 1e-5, (tag, err)
        assert abs(float(ort_loss) - loss.item()) < 1e-4 * (1 + abs(loss.item()))

        out = os.path.join(OUT, self.name)
        os.makedirs(out, exist_ok=True)
        onnx.save(model, os.path.join(out, "model.onnx"))
        np.savez_compressed(os.path.join(out, "inputs.npz"), **self.inputs)
        expected = {"loss": np.float32(loss.item())}
        for name, g in zip(params, grads):
            expected["grad." + name] = g.numpy().astype(np.float32)
        for name, v in after_sgd.items():
            expected["after_sgd." + name] = v.numpy().astype(np.float32)
        expected["losses_sgd"] = np.array(losses, np.float32)
        expected["loss_step3"] = np.float32(losses[SGD_STEPS])
        expected["trainable_initializers"] = np.array(list(params))
        np.savez_compressed(os.path.join(out, "expected.npz"), **expected)
        meta = {"case": self.name, "description": self.description,
                "generator": "scripts/make_cnn_op_cases.py",
                "torch": torch.__version__, "onnxruntime": ort.__version__,
                "branches": [b[0] for b in self.branches],
                "onnxruntime_vs_torch_max_abs": per_branch,
                "loss": loss.item(), "losses_sgd": losses}
        with open(os.path.join(out, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1, sort_keys=True)
            f.write("\n")
        print("%s: loss %.6f, %d branches, %d parameters" % (
            self.name, loss.item(), len(self.branches), len(params)))


def conv_branch(case, tag, x_shape, out_channels, kernel, group=1,
                strides=None, pads=None, dilations=None, auto_pad=None,
                bias=True):
    n = len(kernel)
    in_channels = x_shape[1]
    w_name, b_name = tag + ".W", tag + ".B"
    case.param(w_name, rand(out_channels, in_channels // group, *kernel,
                            scale=0.3))
    if bias:
        case.param(b_name, rand(out_channels, scale=0.3))
    strides = strides or [1] * n
    dilations = dilations or [1] * n
    attrs = {"kernel_shape": list(kernel), "group": group}
    if strides != [1] * n:
        attrs["strides"] = strides
    if dilations != [1] * n:
        attrs["dilations"] = dilations
    if auto_pad:
        attrs["auto_pad"] = auto_pad
        explicit = ([0] * 2 * n if auto_pad == "VALID" else
                    same_pads(x_shape[2:], kernel, strides, dilations,
                              auto_pad == "SAME_UPPER"))
    else:
        explicit = pads or [0] * 2 * n
        if pads:
            attrs["pads"] = pads

    def build(t):
        y = tag + ".y"
        case.nodes.append(helper.make_node(
            "Conv", [t, w_name] + ([b_name] if bias else []), [y],
            name="/%s/Conv" % tag, **attrs))
        return y

    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]

    def forward(t, p):
        return conv(torch_pad(t, explicit, 0.0), p[w_name],
                    p[b_name] if bias else None, stride=strides,
                    dilation=dilations, groups=group)

    return case.branch(tag, x_shape, build, forward)


def pool_branch(case, tag, x_shape, op, kernel, strides=None, pads=None,
                dilations=None, ceil_mode=0, count_include_pad=None, p=None):
    n = len(kernel)
    strides = strides or [1] * n
    pads = pads or [0] * 2 * n
    attrs = {"kernel_shape": list(kernel), "strides": strides}
    if any(pads):
        attrs["pads"] = pads
    if dilations:
        attrs["dilations"] = dilations
    if ceil_mode:
        attrs["ceil_mode"] = 1
    if count_include_pad is not None:
        attrs["count_include_pad"] = count_include_pad
    symmetric = pads[:n] == pads[n:]

    def build(t):
        y = tag + ".y"
        case.nodes.append(helper.make_node(op, [t], [y],
                                           name="/%s/%s" % (tag, op), **attrs))
        return y

    def forward(t, _):
        if op == "MaxPool":
            pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[n]
            if not symmetric:
                t = torch_pad(t, pads, float("-inf"))
            return pool(t, kernel, strides,
                        padding=pads[:n] if symmetric else 0,
                        dilation=dilations or 1, ceil_mode=bool(ceil_mode))
        pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[n]
        assert symmetric
        return pool(t, kernel, strides, padding=pads[:n],
                    ceil_mode=bool(ceil_mode),
                    count_include_pad=bool(count_include_pad))

    return case.branch(tag, x_shape, build, forward, p=p)


def global_branch(case, tag, x_shape, op):
    def build(t):
        y = tag + ".y"
        case.nodes.append(helper.make_node(op, [t], [y],
                                           name="/%s/%s" % (tag, op)))
        return y

    axes = tuple(range(2, len(x_shape)))

    def forward(t, _):
        if op == "GlobalAveragePool":
            return t.mean(dim=axes, keepdim=True)
        # A max pool over the whole extent routes to the first maximum.
        return F.max_pool2d(t, x_shape[2:])

    # Distinct values: GlobalMaxPool's gradient at ties is not ONNX's.
    return case.branch(tag, x_shape, build, forward,
                       p=rand(*x_shape) if op == "GlobalMaxPool" else None)


def conv_case():
    case = Case("cnn_ops_conv", "Conv attribute variants: strides, "
                "asymmetric pads, dilations, groups (depthwise too), no "
                "bias, auto_pad SAME_UPPER/SAME_LOWER/VALID, 1-D and 3-D")
    totals = [
        conv_branch(case, "c_strided", [1, 4, 9, 8], 6, [3, 3],
                    strides=[2, 1], pads=[1, 0, 2, 1], dilations=[1, 2]),
        conv_branch(case, "c_grouped", [1, 4, 9, 8], 6, [2, 3], group=2,
                    bias=False),
        conv_branch(case, "c_depthwise", [1, 4, 9, 8], 8, [3, 3], group=4,
                    strides=[2, 2], auto_pad="SAME_UPPER"),
        conv_branch(case, "c_same_lower", [1, 4, 9, 8], 3, [4, 2],
                    auto_pad="SAME_LOWER"),
        conv_branch(case, "c_valid", [1, 4, 9, 8], 2, [3, 3],
                    dilations=[2, 2], auto_pad="VALID"),
        conv_branch(case, "c_1d", [1, 4, 21], 6, [5], group=2, strides=[3],
                    pads=[2, 2]),
        conv_branch(case, "c_3d", [1, 2, 3, 4, 7], 3, [2, 2, 3],
                    strides=[1, 1, 2], pads=[1, 0, 1, 1, 0, 1]),
    ]
    case.write(totals)


def pool_case():
    case = Case("cnn_ops_pool", "MaxPool (overlapping windows over ties, "
                "ceil_mode, dilations, asymmetric pads, 1-D), AveragePool "
                "(count_include_pad 0 and 1, ceil_mode), GlobalAveragePool, "
                "GlobalMaxPool")
    shape = [1, 3, 9, 9]
    totals = [
        pool_branch(case, "m_overlap", shape, "MaxPool", [3, 3], [2, 2],
                    [1, 1, 1, 1]),
        pool_branch(case, "m_ceil", shape, "MaxPool", [2, 2], [2, 2],
                    ceil_mode=1),
        pool_branch(case, "m_dilated", shape, "MaxPool", [3, 2], [1, 2],
                    pads=[0, 1, 1, 0], dilations=[2, 1]),
        pool_branch(case, "m_1d", [1, 3, 11], "MaxPool", [3], [2]),
        pool_branch(case, "a_include_pad", shape, "AveragePool", [3, 3],
                    [2, 2], [1, 1, 1, 1], count_include_pad=1),
        pool_branch(case, "a_exclude_pad", shape, "AveragePool", [3, 3],
                    [2, 2], [1, 1, 1, 1], count_include_pad=0),
        pool_branch(case, "a_ceil", shape, "AveragePool", [2, 2], [2, 2],
                    ceil_mode=1, count_include_pad=0),
        pool_branch(case, "a_1d", [1, 3, 11], "AveragePool", [4], [3],
                    [1, 1], count_include_pad=1),
        global_branch(case, "g_avg", shape, "GlobalAveragePool"),
        global_branch(case, "g_max", shape, "GlobalMaxPool"),
        # ceil_mode with the padding counted (positions past the trailing
        # pads are not). A window that would start in the trailing padding
        # is dropped as PyTorch and onnxruntime do; onnx's checker counts it
        # and rejects such a model, so no branch shows it.
        pool_branch(case, "a_ceil_include_pad", [1, 3, 8, 8], "AveragePool",
                    [3, 3], [2, 2], [1, 1, 1, 1], ceil_mode=1,
                    count_include_pad=1),
    ]
    case.write(totals)


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    conv_case()
    pool_case()


if __name__ == "__main__":
    main()
