#!/usr/bin/env python3
"""Checks that the stored reference models (Inputs/models/<name>/, written by
scripts/make_reference_models.py) are what train_case.py and check.py assume,
without torch:

  * meta.json's sizes and SHA-256 match the files;
  * every stored model passes onnx.checker, takes the inputs of inputs.npz in
    their order with the same static shapes and dtypes (labels last) and
    returns one scalar `loss`;
  * every trainable initializer of expected.npz is an initializer of every
    stored model, with grad.* and after_sgd.* of its shape, and after_sgd is
    one SGD step (w - 0.1 * grad) from the stored weights;
  * losses_sgd starts at `loss` and ends at `loss_step3`;
  * a tied parameter's one initializer is read by several nodes.

Prints one line per model folder; exits 1 on any problem.
"""
import hashlib
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ONNX_DTYPES = {onnx.TensorProto.FLOAT: np.float32,
               onnx.TensorProto.INT64: np.int64}


def check_case(folder, problems):
    def expect(ok, what):
        if not ok:
            problems.append("%s: %s" % (os.path.basename(folder), what))
        return ok

    with open(os.path.join(folder, "meta.json")) as f:
        meta = json.load(f)
    for name, info in meta["files"].items():
        path = os.path.join(folder, name)
        with open(path, "rb") as f:
            data = f.read()
        expect(len(data) == info["bytes"] and
               hashlib.sha256(data).hexdigest() == info["sha256"],
               "%s differs from meta.json's size or SHA-256" % name)
    inputs = np.load(os.path.join(folder, "inputs.npz"))
    expected = np.load(os.path.join(folder, "expected.npz"))
    trainable = [str(n) for n in expected["trainable_initializers"]]
    expect(inputs.files[-1] == "labels", "the last input is not labels")
    expect(float(expected["losses_sgd"][0]) == float(expected["loss"]) and
           float(expected["losses_sgd"][-1]) == float(expected["loss_step3"]),
           "losses_sgd does not run from loss to loss_step3")
    models = sorted(n for n in os.listdir(folder) if n.endswith(".onnx"))
    for name in models:
        model = onnx.load(os.path.join(folder, name))
        onnx.checker.check_model(model)
        graph = model.graph
        got = [(i.name, ONNX_DTYPES.get(i.type.tensor_type.elem_type),
                [d.dim_value for d in i.type.tensor_type.shape.dim])
               for i in graph.input]
        want = [(k, inputs[k].dtype.type, list(inputs[k].shape))
                for k in inputs.files]
        expect(got == want, "%s inputs %s, inputs.npz %s" % (name, got, want))
        expect([o.name for o in graph.output] == ["loss"],
               "%s outputs are not [loss]" % name)
        inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
        for init in trainable:
            weight = inits.get(init)
            grad = expected["grad." + init]
            after = expected["after_sgd." + init]
            if not expect(weight is not None, "%s lacks initializer %s" %
                          (name, init)):
                continue
            expect(weight.dtype == np.float32 and
                   weight.shape == grad.shape == after.shape,
                   "%s: %s, its gradient and after_sgd differ in shape" %
                   (name, init))
            step = weight - np.float32(0.1) * grad
            expect(np.allclose(after, step, rtol=1e-6, atol=1e-7),
                   "after_sgd.%s is not one SGD step from %s" % (init, name))
        for tied in meta["tied_parameters"]:
            readers = sum(n.input[:].count(tied["initializer"])
                          for n in graph.node)
            expect(readers >= 2, "%s: tied %s is read by %d node(s)" % (
                name, tied["initializer"], readers))
    print("%s: %s, %d trainable initializers, %d tied" % (
        os.path.basename(folder), " ".join(models), len(trainable),
        len(meta["tied_parameters"])))


def main():
    root = sys.argv[1]
    problems = []
    for name in sorted(os.listdir(root)):
        meta = os.path.join(root, name, "meta.json")
        if not os.path.isfile(meta):
            continue
        # Only the reference models; other cases in the folder (the CNN op
        # cases) come from their own generators with their own meta.json.
        with open(meta) as f:
            if json.load(f).get("generator") != "scripts/make_reference_models.py":
                continue
        check_case(os.path.join(root, name), problems)
    for problem in problems:
        print("FAIL " + problem)
    print("%d problem(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
