"""Checks pipeline.json's memory plan against what the compiler emitted.

Usage: check_memory_plan.py OUT_DIR LOWER_MLIR
- the buffers the plan marks in_table are the rank's buffer table, by name
  and in order (the pipecc_buffer_name_<i> globals of --emit=lower), and
  the rank module's pipeline.memory_plan (what the host program reads)
  holds their slots and offsets and the arena size;
- every weight's bytes are its size in rank<k>.safetensors;
- offsets are 64-byte aligned, every copy lies inside the arena, and no
  buffer shares a byte with a weight, gradient or optimizer state (alive for
  the whole run);
- the totals per category are the sums of slots * bytes;
- the micro-batches in flight are the schedule simulator's
  peak_live_microbatches of the rank's virtual stages (the most of any).
Prints, per rank, the most copies of any activation, for FileCheck.
"""
import json
import re
import struct
import sys

out_dir, lower_path = sys.argv[1], sys.argv[2]
manifest = json.load(open(f"{out_dir}/pipeline.json"))
plan = manifest["memory_plan"]
simulated = manifest["prediction"]["peak_live_microbatches"]

tables = {}
attached = {}
rank = None
for line in open(lower_path):
    m = re.match(r'module attributes \{.*pipeline.rank = (\d+)', line)
    if m:
        rank = int(m.group(1))
        tables[rank] = []
        # The plan handed to the host program (pipeline.memory_plan).
        arena = re.search(r'pipeline.memory_plan = \{arena_bytes = (\d+)',
                          line)
        entries = re.findall(r'\{name = "([^"]*)", offset = (-?\d+) : i64, '
                             r'slots = (\d+) : i64\}', line)
        attached[rank] = (int(arena.group(1)) if arena else None,
                          [(n, int(o), int(s)) for n, o, s in entries])
    m = re.search(r'@pipecc_buffer_name_(\d+)\("(.*)\\00"\)', line)
    if m:
        assert int(m.group(1)) == len(tables[rank]), line
        tables[rank].append(m.group(2))

CATEGORIES = {
    "weights": ("weight", "weight-copy"),
    "gradients": ("gradient",),
    "optimizer_state": ("optimizer-state",),
    "activations": ("activation",),
    "transfers": ("transfer",),
    "data": ("data-input", "output"),
    "workspace": ("workspace",),
}
WHOLE_RUN = ("weight", "weight-copy", "gradient", "optimizer-state")

def fail(message):
    print("FAIL: " + message)
    sys.exit(1)

def align(n):
    return (n + 63) // 64 * 64

assert sorted(tables) == [r["rank"] for r in plan["ranks"]], tables.keys()
for r in plan["ranks"]:
    k = r["rank"]
    buffers = r["buffers"]
    names = [b["name"] for b in buffers if b["in_table"]]
    if names != tables[k]:
        fail(f"rank {k}: plan {names} != table {tables[k]}")
    in_table = [(b["name"], b["offset"], b["slots"]) for b in buffers
                if b["in_table"]]
    if attached[k] != (r["arena_bytes"], in_table):
        fail(f"rank {k}: pipeline.memory_plan {attached[k]} != manifest "
             f"{(r['arena_bytes'], in_table)}")
    with open(f"{out_dir}/rank{k}.safetensors", "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    for b in buffers:
        if b["kind"] == "weight":
            begin, end = header[b["name"]]["data_offsets"]
            if b["bytes"] != end - begin:
                fail(f"rank {k}: {b['name']} is {b['bytes']} bytes in the "
                     f"plan, {end - begin} in the weights file")
    spans = []
    for b in buffers:
        if b["offset"] % 64:
            fail(f"rank {k}: {b['name']} at unaligned offset {b['offset']}")
        end = b["offset"] + b["slots"] * align(b["bytes"])
        if end > r["arena_bytes"]:
            fail(f"rank {k}: {b['name']} ends at {end}, past the arena")
        spans.append((b["offset"], end, b))
    for begin, end, b in spans:
        if b["kind"] not in WHOLE_RUN:
            continue
        for begin2, end2, other in spans:
            if other is not b and begin < end2 and begin2 < end:
                fail(f"rank {k}: {b['name']} shares bytes with {other['name']}")
    for category, kinds in CATEGORIES.items():
        total = sum(b["slots"] * b["bytes"] for b in buffers
                    if b["kind"] in kinds)
        if r["bytes"][category] != total:
            fail(f"rank {k}: {category} {r['bytes'][category]} != {total}")
    slots = max(b["slots"] for b in buffers if b["kind"] == "activation")
    # The schedule simulator counts the same thing its own way.
    expected = max(simulated[q] for q in r["stages"])
    if r["microbatches_in_flight"] != expected:
        fail(f"rank {k}: {r['microbatches_in_flight']} micro-batches in "
             f"flight, the simulator says {expected}")
    print(f"rank {k}: {len(names)} table buffers, activation slots {slots}, "
          f"in flight {r['microbatches_in_flight']}")
print(f"precision {plan['precision']}: ok")
