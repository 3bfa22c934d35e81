#!/usr/bin/env python3
"""Checks the per-step lines `out/launch --timers` prints (docs/cli.md,
"Timers"):

  timers rank R step S step_ms T compute_ms C post_ms P wait_ms W
      optimizer_ms O other_ms X [sgemm_calls N sgemm_ms G sgemm_gflops F
      [sgemm_cpu_ms U sgemm_cpu_gflops V]]
  timers rank R mean steps K ...     (over steps 2..N; all steps when N = 1)
  timers rank R median steps K ...

For every rank: one line per step, then the mean and the median; every
part non-negative and the named parts (compute + post + wait + optimizer)
within the step, so that `other` (the rest) is a small share of the
step in at least one step after the first; each rank computed something;
the sgemm CPU time (a rank sharing its CPU) no more than the sgemm wall
time and more than none where there were calls; the mean and median lines are
the mean and median of the step lines. Prints one summary line; exits 1
(printing every problem) otherwise.
Usage: check_timers.py OUTPUT --ranks P --steps N
"""
import argparse
import statistics
import sys

PARTS = ["step_ms", "compute_ms", "post_ms", "wait_ms", "optimizer_ms",
         "other_ms"]
# Values are printed with 3 decimals.
ROUNDING_MS = 0.003


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--steps", type=int, required=True)
    args = parser.parse_args()

    problems = []
    steps, summaries = {}, {}
    with open(args.output) as f:
        for line in f:
            words = line.split()
            if len(words) < 4 or words[0] != "timers" or words[1] != "rank":
                continue
            rank = int(words[2])
            if words[3] == "blas":
                continue
            if words[3] == "step":
                start, key = 5, (rank, int(words[4]))
            elif words[3] in ("mean", "median") and words[4] == "steps":
                start, key = 6, (rank, words[3])
            else:
                problems.append("unknown line: %s" % line.strip())
                continue
            fields = words[start:]
            if len(fields) % 2:
                problems.append("odd key/value list: %s" % line.strip())
                continue
            values = dict(zip(fields[0::2], map(float, fields[1::2])))
            missing = [p for p in PARTS if p not in values]
            if missing:
                problems.append("%s lacks %s" % (line.strip(), missing))
                continue
            (steps if isinstance(key[1], int) else summaries)[key] = values

    for rank in range(args.ranks):
        lines = [steps.get((rank, s)) for s in range(1, args.steps + 1)]
        if None in lines:
            problems.append("rank %d: %d of %d step lines" % (
                rank, sum(v is not None for v in lines), args.steps))
            continue
        for step, v in enumerate(lines, 1):
            named = sum(v[p] for p in PARTS[1:5])
            if any(v[p] < 0 for p in PARTS[:5]):
                problems.append("rank %d step %d: a negative time" % (
                    rank, step))
            if abs(named + v["other_ms"] - v["step_ms"]) > 2 * ROUNDING_MS:
                problems.append("rank %d step %d: the parts add to %.3f ms, "
                                "the step took %.3f" % (
                                    rank, step, named + v["other_ms"],
                                    v["step_ms"]))
            if v["other_ms"] < -ROUNDING_MS:
                problems.append("rank %d step %d: other %.3f ms" % (
                    rank, step, v["other_ms"]))
            if v["compute_ms"] <= 0:
                problems.append("rank %d step %d: no compute" % (rank, step))
            if "sgemm_cpu_ms" in v and (
                    v["sgemm_cpu_ms"] > v["sgemm_ms"] + ROUNDING_MS or
                    (v["sgemm_calls"] > 0) != (v["sgemm_cpu_ms"] > 0)):
                problems.append("rank %d step %d: sgemm CPU time %.3f ms, "
                                "wall %.3f ms, %d calls" % (
                                    rank, step, v["sgemm_cpu_ms"],
                                    v["sgemm_ms"], v["sgemm_calls"]))
        measured = lines[1:] if len(lines) > 1 else lines
        # Time the runtime leaves untimed shows in every step. A time slice
        # the machine gave another process lands in whichever part it
        # interrupted, and under `lit -j2` it hit most of a 4 ms step's
        # steps (a median other of 1.7 ms of 3.8), so the bound holds for
        # the step with the least `other`.
        least = min(measured,
                    key=lambda v: v["other_ms"] - 0.2 * v["step_ms"])
        if least["other_ms"] > 0.2 * least["step_ms"] + 0.1:
            problems.append("rank %d: other %.3f ms of a %.3f ms step, the "
                            "least of the steps" % (rank, least["other_ms"],
                                                    least["step_ms"]))
        for kind, combine in (("mean", statistics.mean),
                              ("median", statistics.median)):
            got = summaries.get((rank, kind))
            if got is None:
                problems.append("rank %d: no %s line" % (rank, kind))
                continue
            for part in PARTS[:5]:
                want = combine([v[part] for v in measured])
                if abs(got[part] - want) > 2 * ROUNDING_MS:
                    problems.append("rank %d: %s %s %.3f, the steps give "
                                    "%.3f" % (rank, kind, part, got[part],
                                              want))
    if problems:
        for problem in problems:
            print("FAIL " + problem)
        return 1
    print("timers ok: %d ranks, %d steps" % (args.ranks, args.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
