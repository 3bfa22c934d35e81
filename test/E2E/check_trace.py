#!/usr/bin/env python3
"""Checks a measured timeline written by `out/launch --trace FILE` (the Chrome
trace format of docs/cli.md, "Timelines") against what the run must have
done:

  * the JSON parses; otherData says source "measured", the schedule, ranks,
    chunks and micro-batches asked for, and a positive makespan;
  * one thread (thread_name metadata) per rank;
  * for every (virtual stage, micro-batch): exactly one F and one backward
    (BW, or B and W), all on the rank the placement gives the stage;
  * the events of a rank do not overlap, and lie within the makespan;
  * each backward (B or BW) starts after the F of the same stage and
    micro-batch ended, and each W after its B;
  * each posted message (send/recv) is waited for once on its rank
    ("wait send a12 m3"), after its post.

Prints one summary line; exits 1 (printing every problem) otherwise.
Usage: check_trace.py TRACE.json --schedule S --ranks P --microbatches M
                      [--chunks v] [--placement r0,r1,...]
"""
import argparse
import collections
import json
import sys

# Timestamps are printed in microseconds with 3 decimals.
EPSILON_US = 0.002


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("trace")
    parser.add_argument("--schedule", required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--microbatches", type=int, required=True)
    parser.add_argument("--chunks", type=int, default=1)
    parser.add_argument("--placement",
                        help="rank of each virtual stage (default q -> q)")
    args = parser.parse_args()
    stages = args.ranks * args.chunks
    placement = ([int(r) for r in args.placement.split(",")]
                 if args.placement else list(range(stages)))

    with open(args.trace) as f:
        trace = json.load(f)
    problems = []
    other = trace.get("otherData", {})
    expected = {"source": "measured", "schedule": args.schedule,
                "ranks": args.ranks, "chunks": args.chunks,
                "microbatches": args.microbatches}
    for key, value in expected.items():
        if other.get(key) != value:
            problems.append("otherData.%s is %r, expected %r" % (
                key, other.get(key), value))
    makespan_us = float(other.get("makespan_s", 0)) * 1e6
    if not makespan_us > 0:
        problems.append("makespan_s is not positive")

    events = trace["traceEvents"]
    threads = sorted(e["tid"] for e in events
                     if e.get("ph") == "M" and e.get("name") == "thread_name")
    if threads != list(range(args.ranks)):
        problems.append("thread_name metadata for tids %s, expected 0..%d" % (
            threads, args.ranks - 1))

    spans = [e for e in events if e.get("ph") == "X"]
    by_rank = collections.defaultdict(list)
    compute = collections.defaultdict(list)  # (cat, stage, mb) -> events
    for e in spans:
        by_rank[e["tid"]].append(e)
        if e["cat"] in ("F", "B", "W", "BW"):
            a = e["args"]
            # A grouped W runs micro-batches m .. m + n - 1 in one call.
            count = a.get("microbatches", 1)
            for m in range(a["microbatch"], a["microbatch"] + count):
                compute[(e["cat"], a["stage"], m)].append(e)
            name = "%s%d" % (e["cat"], a["microbatch"])
            if count > 1:
                name += "-%d" % (a["microbatch"] + count - 1)
            if e["name"] != name:
                problems.append("event named %r for %s of micro-batch %d" % (
                    e["name"], e["cat"], a["microbatch"]))
    # Every (stage, micro-batch) once forward and once backward, in order.
    split = any(key[0] == "B" for key in compute)
    for q in range(stages):
        for m in range(args.microbatches):
            kinds = ["F"] + (["B", "W"] if split else ["BW"])
            found = {}
            for kind in kinds:
                got = compute.get((kind, q, m), [])
                if len(got) != 1:
                    problems.append("%d %s events of stage %d micro-batch %d" %
                                    (len(got), kind, q, m))
                    continue
                if got[0]["tid"] != placement[q]:
                    problems.append("%s of stage %d micro-batch %d on rank %d,"
                                    " expected rank %d" % (
                                        kind, q, m, got[0]["tid"],
                                        placement[q]))
                found[kind] = got[0]
            for before, after in (("F", "B"), ("F", "BW"), ("B", "W")):
                if before in found and after in found:
                    end = found[before]["ts"] + found[before]["dur"]
                    if found[after]["ts"] + EPSILON_US < end:
                        problems.append(
                            "%s of stage %d micro-batch %d starts at %.3f us,"
                            " before its %s ends at %.3f us" % (
                                after, q, m, found[after]["ts"], before, end))
    stray = [key for key in compute
             if not (0 <= key[1] < stages and 0 <= key[2] < args.microbatches)]
    if stray:
        problems.append("compute events of unknown stages or micro-batches: "
                        "%s" % stray)
    # One action at a time per rank, inside the step.
    for rank, rank_events in sorted(by_rank.items()):
        rank_events.sort(key=lambda e: e["ts"])
        for a, b in zip(rank_events, rank_events[1:]):
            if a["ts"] + a["dur"] > b["ts"] + EPSILON_US:
                problems.append("rank %d: %r (%.3f + %.3f us) overlaps %r "
                                "(%.3f us)" % (rank, a["name"], a["ts"],
                                               a["dur"], b["name"], b["ts"]))
        for e in rank_events:
            if e["ts"] < 0 or e["ts"] + e["dur"] > makespan_us + EPSILON_US:
                problems.append("rank %d: %r lies outside [0, makespan]" % (
                    rank, e["name"]))

    # Every message is posted (send/recv) and waited for once ("wait send
    # a12 m3"), on one rank, the wait after the post.
    for rank, rank_events in sorted(by_rank.items()):
        posts = {e["name"]: e for e in rank_events
                 if e["cat"] in ("send", "recv")}
        waited = collections.Counter()
        for e in rank_events:
            if e["cat"] != "wait":
                continue
            post = posts.get(e["name"][len("wait "):])
            if post is None:
                problems.append("rank %d: %r waits for no posted message" % (
                    rank, e["name"]))
                continue
            waited[post["name"]] += 1
            if e["ts"] + EPSILON_US < post["ts"] + post["dur"]:
                problems.append("rank %d: %r starts before its post ends" % (
                    rank, e["name"]))
        for name in posts:
            if waited[name] != 1:
                problems.append("rank %d: %r waited for %d times" % (
                    rank, name, waited[name]))

    if problems:
        for problem in problems:
            print("FAIL " + problem)
        return 1
    counts = collections.Counter(e["cat"] for e in spans)
    print("trace ok: %d ranks, makespan %.3f ms, %s" % (
        args.ranks, makespan_us / 1e3,
        ", ".join("%d %s" % (counts[c], c) for c in sorted(counts))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
