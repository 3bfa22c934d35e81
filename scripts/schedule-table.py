#!/usr/bin/env python3
"""Writes docs/schedules.md: makespan, bubble and peak activation memory of
every schedule pipecc knows, from `pipecc schedule` (no model involved).

Usage: scripts/schedule-table.py [--pipecc build/bin/pipecc]
           [-o docs/schedules.md] [--stages 4,8] [--microbatches 8,16,32]

For each cost set (uneven: F = 1, B = 0.976, W = 0.504, 0.05 s per message;
unit: F = B = W = 1, free messages), each P and M, every schedule runs at
its chunk count (2 for the interleaved and V schedules). Fixed schedules do
not look at the memory limit, so each runs once and the table marks whether
its peak fits limits of P and 2P micro-batches of activations; `auto` takes
the limit and runs once per limit. A schedule that refuses a shape says why.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

# (name, description, (F, B, W) of a rank's share of the model, seconds per
# message).
COSTS = [
    ("uneven", "F = 1, B = 0.976, W = 0.504, 0.05 per message",
     (1, 0.976, 0.504), 0.05),
    ("unit", "F = B = W = 1, free messages", (1, 1, 1), 0),
]


def cost_args(costs, comm, chunks):
    """The model's costs per rank spread over its `chunks` virtual stages:
    the same model cut finer, each message still costing `comm`."""
    forward, backward_input, backward_weight = (c / chunks for c in costs)
    return ["--forward", repr(forward), "--backward-input",
            repr(backward_input), "--backward-weight", repr(backward_weight),
            "--comm", repr(comm)]

# Schedules that place more than one chunk per rank, and how many they take.
CHUNKS = {"interleaved-1f1b": 2, "zb-v": 2}


def run(pipecc, args):
    """(otherData of the trace, None) or (None, the error line)."""
    with tempfile.TemporaryDirectory() as folder:
        trace = os.path.join(folder, "trace.json")
        result = subprocess.run([pipecc, "schedule", *args, "--trace", trace],
                                capture_output=True, text=True)
        if result.returncode != 0:
            message = result.stderr.strip().splitlines()
            message = message[-1] if message else "exit %d" % result.returncode
            return None, message.removeprefix("pipecc: error: ")
        with open(trace) as f:
            return json.load(f)["otherData"], None


def fits(peak, limit):
    return "yes" if peak <= limit + 1e-9 else "**no**"


def number(value):
    return "%.4g" % value


def table(pipecc, schedules, stages, microbatches, out):
    for name, description, costs, comm in COSTS:
        out.append("")
        out.append("## %s costs (%s)" % (name.capitalize(), description))
        out.append("")
        out.append("| P | M | schedule | v | makespan | bubble | "
                   "peak activations | fits P | fits 2P |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for p in stages:
            for m in microbatches:
                for schedule in schedules:
                    v = CHUNKS.get(schedule, 1)
                    base = ["--stages", str(p), "--microbatches", str(m),
                            "--chunks", str(v), "--schedule", schedule,
                            *cost_args(costs, comm, v)]
                    # auto searches under the limit: one row per limit.
                    limits = [p, 2 * p] if schedule == "auto" else [None]
                    for limit in limits:
                        args = base + (["--memory-limit", str(limit)]
                                       if limit is not None else [])
                        label = schedule if limit is None else \
                            "auto (limit %d)" % limit
                        data, error = run(pipecc, args)
                        if error:
                            out.append("| %d | %d | %s | %d | refused: %s "
                                       "| | | | |" % (p, m, label, v,
                                                      error.replace("|", "\\|")))
                            continue
                        peak = max(data.get("peak_activation_microbatches",
                                            [0]))
                        out.append("| %d | %d | %s | %d | %s | %.4f | %s | %s "
                                   "| %s |" % (p, m, label, v,
                                               number(data["makespan_s"]),
                                               data["bubble"], number(peak),
                                               fits(peak, p),
                                               fits(peak, 2 * p)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipecc", default="build/bin/pipecc")
    parser.add_argument("-o", "--output", default="docs/schedules.md")
    parser.add_argument("--stages", default="4,8")
    parser.add_argument("--microbatches", default="8,16,32")
    args = parser.parse_args()
    stages = [int(x) for x in args.stages.split(",")]
    microbatches = [int(x) for x in args.microbatches.split(",")]
    listed = subprocess.run([args.pipecc, "schedule", "--list"],
                            capture_output=True, text=True, check=True)
    schedules = listed.stdout.split()

    out = [
        "# Schedules compared",
        "",
        "Generated by `scripts/schedule-table.py` from `pipecc schedule` "
        "(docs/cli.md); do not edit by hand. Times are in units of the "
        "forward of one rank's share of the model; with v chunks per rank "
        "each virtual stage costs 1/v of the rank's share (the same model "
        "cut finer) while a message costs the same. A fused backward (BW) takes B + W. *Bubble* is the mean "
        "over ranks of the idle fraction of the makespan, counted from the "
        "step's start (so the last rank's wait for its first input is "
        "bubble too, and zero-bubble schedules keep (P-1)/makespan of it). "
        "Messages are blocking rendezvous, as the CPU runtime sends. *Peak "
        "activations* is the most micro-batches of activations a rank "
        "holds (forward done, backward not complete: until W, which still "
        "reads them, when B and W are apart), in micro-batches "
        "of that rank's virtual stages, on the rank that holds most: "
        "1F1B's is P, GPipe's M. *fits P* / *fits 2P* say whether that "
        "peak is within a memory limit of P or 2P; `auto` searches under "
        "each limit. Schedules: " + ", ".join(schedules) + ".",
    ]
    table(args.pipecc, schedules, stages, microbatches, out)
    text = "\n".join(out) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
