"""Checks a device profile from `pipecc profile` and writes variants of it.

Usage: check_profile.py PROFILE.json OUTDIR

Asserts the structure (docs/cli.md, "Device profile files") and that every
measured rate and time is positive, never how fast this machine is. Writes
OUTDIR/one-core.json (the profile with cores = 1), OUTDIR/no-gemm.json
(without its gemm member) and OUTDIR/bad-rate.json (a negative rate).
"""
import copy
import json
import math
import os
import sys

path, outdir = sys.argv[1:3]
profile = json.load(open(path))


def positive(value, what):
    assert isinstance(value, (int, float)) and math.isfinite(value) and \
        value > 0, "%s: %r is not a positive number" % (what, value)


assert profile["format"] == "pipecc-device-profile", profile["format"]
assert profile["version"] == 1
assert isinstance(profile["cores"], int) and profile["cores"] >= 1
positive(profile["memory_bytes"], "memory_bytes")
positive(profile["flops_per_s"], "flops_per_s")
positive(profile["transcendentals_per_s"], "transcendentals_per_s")
for key in ("bytes_per_s", "reduction_bytes_per_s", "stream_bytes_per_s",
            "accumulate_bytes_per_s"):
    positive(profile["elementwise"][key], "elementwise." + key)
for key in ("stage_call_s", "runtime_call_s"):
    positive(profile["calls"][key], "calls." + key)
transports = [link["transport"] for link in profile["links"]]
assert transports[0] == "socket", transports
for link in profile["links"]:
    positive(link["latency_s"], "latency_s")
    positive(link["bytes_per_s"], "bytes_per_s")
# Measured beside a busy process per core. No order against the idle
# latency is asserted: on a virtual machine an idle core is halted and a
# woken receiver waits for the hypervisor, so the busy figure has come out
# below the idle one (14 against 21 us, AMD EPYC VM, 2026-12-02).
positive(profile["links"][0]["busy_latency_s"], "busy_latency_s")
# Posting: one time per size, sizes increasing; a late receive's copy may
# read 0 at the smallest size on a coarse clock, a send's never.
post = profile["links"][0]["post"]
assert post["bytes"] == sorted(set(post["bytes"])) and post["bytes"][0] > 0
for key in ("send_s", "late_receive_s"):
    assert len(post[key]) == len(post["bytes"]), key
for seconds in post["send_s"]:
    positive(seconds, "post.send_s")
for seconds in post["late_receive_s"]:
    assert seconds >= 0 and math.isfinite(seconds), seconds
gemm = profile["gemm"]
points = len(gemm["m"]) * len(gemm["n"]) * len(gemm["k"])
for axis in "mnk":
    assert gemm[axis] == sorted(set(gemm[axis])) and gemm[axis][0] > 0
kinds = set()
for table in gemm["tables"]:
    kinds.add((table["transpose"], table["beta"]))
    assert len(table["flops_per_s"]) == points
    for rate in table["flops_per_s"]:
        positive(rate, "gemm rate")
    # The best rate of the file is the best of its tables.
    assert max(table["flops_per_s"]) <= profile["flops_per_s"]
assert kinds >= {("nn", 0), ("nt", 0), ("tn", 0), ("nn", 1), ("nt", 1),
                 ("tn", 1)}, kinds


def check_weights(grid, what):
    """pipecc_rt_sgemm_weight's tables (B a parameter, packed): nn and nt
    with beta 0, over the same grid, and the packing rate."""
    weights = grid["weight_tables"]
    assert [(t["transpose"], t["beta"]) for t in weights] == \
        [("nn", 0), ("nt", 0)], weights
    for table in weights:
        assert len(table["flops_per_s"]) == points
        for rate in table["flops_per_s"]:
            positive(rate, what + " weight rate")
    positive(grid["pack_bytes_per_s"], what + ".pack_bytes_per_s")
    # The weight gradient on each path (pipecc-matmul-to-blas picks the
    # faster): tn with beta 1, over the same grid.
    for key in ("blas_tables", "engine_tables"):
        assert [(t["transpose"], t["beta"]) for t in grid[key]] == \
            [("tn", 1)], (what, key, grid[key])
        assert len(grid[key][0]["flops_per_s"]) == points
        for rate in grid[key][0]["flops_per_s"]:
            positive(rate, "%s.%s rate" % (what, key))


check_weights(gemm, "gemm")
print("profile ok: %d cores, %d gemm points x %d tables (+%d weight tables, "
      "+%d path tables), links %s" % (
          profile["cores"], points, len(gemm["tables"]),
          len(gemm["weight_tables"]),
          len(gemm["blas_tables"]) + len(gemm["engine_tables"]),
          ", ".join(transports)))
# With two or more cores the grid is measured again while the other cores
# run matmuls too: the same grid and tables.
shared = profile.get("gemm_shared")
assert (shared is not None) == (profile["cores"] > 1), profile["cores"]
if shared is None:
    print("gemm_shared: none, one core")
else:
    for axis in "mnk":
        assert shared[axis] == gemm[axis], axis
    assert [(t["transpose"], t["beta"]) for t in shared["tables"]] == \
        [(t["transpose"], t["beta"]) for t in gemm["tables"]]
    for table in shared["tables"]:
        assert len(table["flops_per_s"]) == points
        for rate in table["flops_per_s"]:
            positive(rate, "gemm_shared rate")
    check_weights(shared, "gemm_shared")
    print("gemm_shared: %d points x %d tables" % (points,
                                                  len(shared["tables"])))

one = copy.deepcopy(profile)
one["cores"] = 1
json.dump(one, open(os.path.join(outdir, "one-core.json"), "w"))
missing = copy.deepcopy(profile)
del missing["gemm"]
json.dump(missing, open(os.path.join(outdir, "no-gemm.json"), "w"))
bad = copy.deepcopy(profile)
bad["gemm"]["tables"][1]["flops_per_s"][2] = -1
json.dump(bad, open(os.path.join(outdir, "bad-rate.json"), "w"))
