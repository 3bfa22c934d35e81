#!/usr/bin/env python3
"""Runs ONNX's backend node tests (exported by
scripts/export_onnx_node_tests.py) through pipecc, forward only.

Each case is compiled with `pipecc model.onnx --inference` for one CPU rank,
run with `launch --data <inputs> --outputs <dir>`, and every output compared
with ONNX's expected array as ONNX's backend test does: floating point with
the case's rtol and atol (1e-3 and 1e-7), NaN equal to NaN; integers and
booleans exactly; shapes and dtypes must match.

A case that fails must be listed in the expected-failures file (default
Inputs/onnx-node-tests-xfail.txt: `case<TAB>reason` lines); a listed case that passes is an
error too, so the list stays true. Exit status 0 when every outcome is as
expected.

    onnx_node_tests.py --pipecc build/bin/pipecc                 # all cases
    onnx_node_tests.py --pipecc ... --per-op 1                   # a subset
    onnx_node_tests.py --pipecc ... --table docs/onnx-node-tests.md
    onnx_node_tests.py --pipecc ... --write-xfail                # relist
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_DATA = os.path.join(HERE, "Inputs", "onnx-node-tests")
SAFE = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
           b"0123456789_.-")


def data_file_name(name):
    """pipecc::rt::dataFileName: the .npy file of an input or output."""
    raw = name.encode()
    if not raw:
        return "%.npy"
    text = "".join(chr(b) if b in SAFE else "%%%02X" % b for b in raw)
    if text.startswith("."):
        text = "%2E" + text[1:]
    return text + ".npy"


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[-1] if lines else "(no message)"


def compare(name, actual, expected, rtol, atol):
    """None when `actual` matches, else what differs."""
    if actual.dtype != expected.dtype:
        return "output '%s' is %s, expected %s" % (name, actual.dtype,
                                                    expected.dtype)
    if actual.shape != expected.shape:
        return "output '%s' has shape %s, expected %s" % (
            name, list(actual.shape), list(expected.shape))
    if np.issubdtype(expected.dtype, np.floating):
        close = np.isclose(actual, expected, rtol=rtol, atol=atol,
                           equal_nan=True)
    else:
        close = actual == expected
    if np.all(close):
        return None
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0])
    return "output '%s': %d of %d elements differ, first at %s: %r vs %r" % (
        name, len(bad), close.size, list(first), actual[first].item(),
        expected[first].item())


def compile_and_run(pipecc, model_path, inputs, outputs, scratch, timeout):
    """Compiles `model_path` with --inference, runs it on `inputs` (name ->
    array) and returns (error message or None, output name -> array)."""
    out = os.path.join(scratch, "out")
    data_dir = os.path.join(scratch, "inputs")
    results = os.path.join(scratch, "results")
    os.makedirs(data_dir)
    for name, array in inputs.items():
        np.save(os.path.join(data_dir, data_file_name(name)), array)
    try:
        compiled = subprocess.run(
            [pipecc, model_path, "--inference", "-O1", "-o", out],
            capture_output=True, text=True, timeout=timeout)
        if compiled.returncode != 0:
            # The message names the model by its path; the case says which.
            return "compile: " + first_error(compiled.stderr).replace(
                "'%s': " % model_path, ""), {}
        ran = subprocess.run(
            [os.path.join(out, "launch"), "--data", data_dir, "--outputs",
             results, "--quiet"], capture_output=True, text=True,
            timeout=timeout)
        if ran.returncode != 0:
            return "run: " + first_error(ran.stderr + ran.stdout), {}
    except subprocess.TimeoutExpired:
        return "timed out after %d s" % timeout, {}
    arrays = {}
    for name in outputs:
        path = os.path.join(results, data_file_name(name))
        if os.path.exists(path):
            arrays[name] = np.load(path)
    return None, arrays


def check_outputs(case, data, arrays, rename=lambda name: name):
    """(passed, message) of one case's outputs."""
    for name in case["outputs"]:
        if rename(name) not in arrays:
            return False, "output '%s' was not written" % name
        problem = compare(name, arrays[rename(name)], data["output/" + name],
                          case["rtol"], case["atol"])
        if problem:
            return False, "mismatch: " + problem
    return True, ""


def run_case(pipecc, case, data_dir, work, timeout):
    """(passed, message) for one case."""
    folder = os.path.join(data_dir, case["case"])
    scratch = os.path.join(work, case["case"])
    data = np.load(os.path.join(folder, "data.npz"))
    error, arrays = compile_and_run(
        pipecc, os.path.join(folder, "model.onnx"),
        {name: data["input/" + name] for name in case["inputs"]},
        case["outputs"], scratch, timeout)
    if error:
        return False, error
    result = check_outputs(case, data, arrays)
    if result[0]:
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def batch_key(model):
    """Cases can share one model when their opsets agree."""
    return tuple(sorted((o.domain, o.version) for o in model.opset_import))


def batchable(model):
    """No sub-graphs and no local functions: renaming stays simple."""
    return not model.functions and not any(
        attr.type in (attr.GRAPH, attr.GRAPHS)
        for node in model.graph.node for attr in node.attribute)


def run_batch(pipecc, cases, models, data_dir, work, timeout):
    """Compiles several cases as one model (each case's names prefixed
    "c<k>_"; the graphs stay independent) and runs it once: the fixed cost
    of a compile and a run (the link, MPI start-up) is paid once. A batch
    that does not compile or run yields None: run its cases one by one."""
    import onnx
    merged = onnx.ModelProto()
    merged.CopyFrom(models[0])
    merged.graph.ClearField("node")
    merged.graph.ClearField("input")
    merged.graph.ClearField("output")
    merged.graph.ClearField("initializer")
    merged.graph.ClearField("value_info")
    merged.graph.name = "batch"
    inputs = {}
    datasets = []
    for k, (case, model) in enumerate(zip(cases, models)):
        prefix = "c%d_" % k
        fix = lambda name: prefix + name if name else name
        merged.ir_version = max(merged.ir_version, model.ir_version)
        graph = model.graph
        for node in graph.node:
            copy = merged.graph.node.add()
            copy.CopyFrom(node)
            copy.name = prefix + (node.name or "node")
            copy.input[:] = [fix(n) for n in node.input]
            copy.output[:] = [fix(n) for n in node.output]
        for field in ("input", "output", "value_info"):
            for value in getattr(graph, field):
                copy = getattr(merged.graph, field).add()
                copy.CopyFrom(value)
                copy.name = fix(value.name)
        for tensor in graph.initializer:
            copy = merged.graph.initializer.add()
            copy.CopyFrom(tensor)
            copy.name = fix(tensor.name)
        data = np.load(os.path.join(data_dir, case["case"], "data.npz"))
        datasets.append(data)
        for name in case["inputs"]:
            inputs[fix(name)] = data["input/" + name]
    scratch = os.path.join(work, "batch-" + cases[0]["case"])
    os.makedirs(scratch)
    model_path = os.path.join(scratch, "model.onnx")
    onnx.save(merged, model_path)
    error, arrays = compile_and_run(
        pipecc, model_path, inputs, [v.name for v in merged.graph.output],
        scratch, timeout)
    if error:
        return None
    shutil.rmtree(scratch, ignore_errors=True)
    return [check_outputs(case, data, arrays,
                          lambda name, k=k: "c%d_%s" % (k, name))
            for k, (case, data) in enumerate(zip(cases, datasets))]


def run_all(pipecc, cases, listed, data_dir, work, timeout, jobs,
            batch_size):
    """case name -> (passed, message). Cases not expected to fail run in
    batches; a batch that fails as a whole, a case failing in its batch
    and the expected failures run alone, so every failure is the case's
    own."""
    outcome = {}
    alone = []
    groups = collections.OrderedDict()
    models = {}
    if batch_size > 1:
        import onnx
        for case in cases:
            model = onnx.load(os.path.join(data_dir, case["case"],
                                           "model.onnx"))
            if case["case"] in listed or not batchable(model):
                alone.append(case)
                continue
            models[case["case"]] = model
            groups.setdefault(batch_key(model), []).append(case)
    else:
        alone = list(cases)
    batches = []
    for group in groups.values():
        for i in range(0, len(group), batch_size):
            batches.append(group[i:i + batch_size])
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = {pool.submit(run_batch, pipecc, batch,
                               [models[c["case"]] for c in batch], data_dir,
                               work, timeout): batch for batch in batches}
        for future in concurrent.futures.as_completed(futures):
            batch = futures[future]
            results = future.result()
            if results is None:
                alone.extend(batch)
                continue
            for case, result in zip(batch, results):
                if result[0]:
                    outcome[case["case"]] = result
                else:
                    alone.append(case)
        print("%d cases in %d batches, %d alone" % (
            len(cases) - len(alone), len(batches), len(alone)))
        futures = {pool.submit(run_case, pipecc, case, data_dir, work,
                               timeout): case for case in alone}
        for future in concurrent.futures.as_completed(futures):
            outcome[futures[future]["case"]] = future.result()
    return outcome


# Known causes behind pipecc's messages, for the expected-failure list.
EXPLANATIONS = [
    (re.compile(r"input '(\w+)' must be a constant integer tensor"),
     "the test feeds '{0}' as a run-time graph input; pipecc compiles "
     "static shapes, so it must be a constant or initializer"),
]


def explain(message):
    """The failure message, with its known cause in front."""
    for pattern, text in EXPLANATIONS:
        match = pattern.search(message)
        if match:
            return text.format(*match.groups()) + " (" + message + ")"
    return message


def read_xfail(path):
    listed = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    name, _, reason = line.rstrip("\n").partition("\t")
                    listed[name] = reason
    return listed


def subset(cases, per_op, listed):
    """The first `per_op` cases of every op that are not expected failures,
    in name order."""
    taken = collections.Counter()
    chosen = []
    for case in cases:
        if case["case"] in listed:
            continue
        if taken[case["op"]] < per_op:
            taken[case["op"]] += 1
            chosen.append(case)
    return chosen


def write_table(path, onnx_version, cases, outcome, excluded_count,
                data_dir):
    per_op = collections.OrderedDict()
    for case in sorted(cases, key=lambda c: (c["op"], c["case"])):
        row = per_op.setdefault(case["op"], [0, 0])
        row[0] += 1
        row[1] += outcome[case["case"]][0]
    passed = sum(ok for ok, _ in outcome.values())
    lines = [
        "<!-- Generated by test/E2E/onnx_node_tests.py --table; do not edit."
        " -->",
        "# ONNX backend node tests",
        "",
        "ONNX %s carries its backend node tests in "
        "`onnx.backend.test.case.node.collect_testcases()`. "
        "`scripts/export_onnx_node_tests.py` writes those whose ops pipecc "
        "imports and whose tensors are small to "
        "`test/E2E/Inputs/onnx-node-tests/` (%d cases; the %d others are "
        "listed with the reason in `excluded.txt` there: op or dtype "
        "unsupported, empty or large tensors, sequences; integer inputs "
        "that fix a shape, such as Reshape's shape or Slice's bounds, are "
        "made initializers). "
        "`test/E2E/onnx_node_tests.py` compiles each with `pipecc "
        "--inference` for one CPU rank, runs it and compares every output "
        "(rtol 1e-3, atol 1e-7, NaN equal to NaN; integers and booleans "
        "exactly). See [testing](testing.md) for the commands." % (
            onnx_version, len(cases), excluded_count),
        "",
        "**%d of %d cases pass.**" % (passed, len(cases)),
        "",
        "| op | cases | pass | fail |",
        "|---|---:|---:|---:|",
    ]
    for op, (total, ok) in per_op.items():
        lines.append("| %s | %d | %d | %d |" % (op, total, ok, total - ok))
    lines += ["", "## Failures and their reasons", ""]
    failures = [(c["op"], c["case"], explain(outcome[c["case"]][1]))
                for c in cases if not outcome[c["case"]][0]]
    if not failures:
        lines.append("None.")
    for op, name, reason in sorted(failures):
        lines.append("- `%s` (%s): %s" % (name, op,
                                          reason.replace("|", "\\|")))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pipecc", required=True)
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--xfail", default=os.path.join(
        HERE, "Inputs", "onnx-node-tests-xfail.txt"))
    parser.add_argument("--per-op", type=int, default=0,
                        help="run only the first N cases of each op")
    parser.add_argument("--cases", nargs="*", help="run only these cases")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--batch", type=int, default=24,
                        help="cases compiled together (1: one by one)")
    parser.add_argument("--table", help="write the per-op table here")
    parser.add_argument("--write-xfail", action="store_true",
                        help="list this run's failures as the expected ones")
    args = parser.parse_args()
    xfail_path = args.xfail

    with open(os.path.join(args.data, "cases.json")) as f:
        manifest = json.load(f)
    cases = manifest["cases"]
    if args.cases:
        cases = [c for c in cases if c["case"] in set(args.cases)]
    listed = read_xfail(xfail_path)
    if args.per_op:
        cases = subset(cases, args.per_op, listed)

    with tempfile.TemporaryDirectory(prefix="onnx-node-tests-") as work:
        outcome = run_all(args.pipecc, cases, listed, args.data, work,
                          args.timeout, args.jobs, args.batch)

    unexpected = 0
    per_op = collections.defaultdict(collections.Counter)
    for case in cases:
        name = case["case"]
        ok, message = outcome[name]
        if ok and name in listed:
            status = "XPASS"
            unexpected += 1
        elif ok:
            status = "PASS"
        elif name in listed:
            status = "XFAIL"
        else:
            status = "FAIL"
            unexpected += 1
        per_op[case["op"]][status] += 1
        print("%s: %s (%s)%s" % (status, name, case["op"],
                                 ": " + message if message else ""))
    for op in sorted(per_op):
        counts = per_op[op]
        print("op %s: %s" % (op, ", ".join(
            "%d %s" % (counts[s], s)
            for s in ("PASS", "XFAIL", "FAIL", "XPASS") if counts[s])))
    total = collections.Counter()
    for counts in per_op.values():
        total.update(counts)
    print("total: %d cases, %d pass, %d expected failures, %d unexpected" % (
        len(cases), total["PASS"] + total["XPASS"], total["XFAIL"],
        unexpected))

    if args.write_xfail:
        with open(xfail_path, "w") as f:
            f.write("# Expected failures of the ONNX node tests (case, "
                    "reason); written by onnx_node_tests.py --write-xfail "
                    "from the observed failure\n")
            for case in manifest["cases"]:
                name = case["case"]
                if name in outcome and not outcome[name][0]:
                    f.write("%s\t%s\n" % (name, explain(outcome[name][1])))
                elif name not in outcome and name in listed:
                    f.write("%s\t%s\n" % (name, listed[name]))
    if args.table:
        excluded = sum(1 for line in open(os.path.join(args.data,
                                                       "excluded.txt"))
                       if not line.startswith("#"))
        write_table(args.table, manifest["onnx_version"], cases, outcome,
                    excluded, args.data)
    return 0 if unexpected == 0 or args.write_xfail else 1


if __name__ == "__main__":
    sys.exit(main())
