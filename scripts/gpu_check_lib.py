#!/usr/bin/env python3
"""The parts of scripts/gpu-check.sh that read files: the bundle's plan,
its validation (--dry-run), the ELF files' needed libraries, and the
benchmark's report. Python 3 standard library only (numpy is not needed
here), so it runs on the bare GPU machine.

  gpu_check_lib.py plan DIR            one line per step
  gpu_check_lib.py validate DIR        the bundle's contents; exit 1 if bad
  gpu_check_lib.py needed FILE...      FILE: its DT_NEEDED libraries
  gpu_check_lib.py bench-report LOG FLOPS_PER_SAMPLE WARMUP PEAK_TFLOPS
                                       samples/s, TFLOP/s, MFU as JSON
  gpu_check_lib.py timers-report LOG  each rank's median step from
                                       `launch --timers`, one line
  gpu_check_lib.py kernel-summary NCU_OUTPUT STEPS TOP
                                       ncu's per-kernel summary (metric
                                       gpu__time_duration.sum) as a table
                                       of the TOP kernels by total time,
                                       per step of STEPS profiled
  gpu_check_lib.py describe-weights OUTDIR OUT.json
                                       the names, dtypes and shapes of a
                                       compiled output's rank*.safetensors
                                       (for make_weights.py; gpu-bundle.sh)

plan prints, separated by "|":
  probe     PATH
  kernels   PATH
  check     NAME DIR STAGES TRANSPORT_ENV DATA REFERENCE TOLERANCE
  bench     NAME DIR STAGES TRANSPORT_ENV WEIGHTS STEPS WARMUP
            FLOPS_PER_SAMPLE PEAK_TFLOPS
"""
import hashlib
import json
import os
import re
import statistics
import struct
import sys

# What a bundle's executables may need from the GPU machine: glibc, the
# driver, the CUDA and NCCL libraries, and the C++ runtime (bundled as a
# fallback in lib/fallback/). Anything else must be in the bundle's lib/.
PROVIDED = re.compile(
    r"^(ld-linux-x86-64|libc|libm|libdl|libpthread|librt|libresolv|libcuda|"
    r"libnvidia-[a-z-]+|libcudart|libcublas|libcublasLt|libnccl|"
    r"libnvJitLink|libnvrtc|libstdc\+\+|libgcc_s)\.so")
FORBIDDEN = re.compile(r"^(libopenblas|libscipy_openblas|libblas|libcblas|"
                       r"liblapack|libmpi|libopen-rte|libopen-pal|libLLVM|"
                       r"libMLIR|libgtest|libgmock)")
BUNDLE_SIZE_LIMIT = 60 * 1024 * 1024


def load_bundle(root):
    with open(os.path.join(root, "bundle.json")) as f:
        bundle = json.load(f)
    if bundle.get("format") != 1:
        raise ValueError("bundle.json: unknown format %r" %
                         bundle.get("format"))
    return bundle


def elf_needed(path):
    """DT_NEEDED entries of a 64-bit little-endian ELF file; None if the
    file is not one."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    segments = [struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
                for i in range(phnum)]
    dynamic = [s for s in segments if s[0] == 2]  # PT_DYNAMIC
    if not dynamic:
        return []  # Statically linked.
    loads = [s for s in segments if s[0] == 1]  # PT_LOAD

    def file_offset(vaddr):
        for _, _, offset, seg_vaddr, _, filesz, _, _ in loads:
            if seg_vaddr <= vaddr < seg_vaddr + filesz:
                return offset + vaddr - seg_vaddr
        raise ValueError("%s: address %#x outside the file" % (path, vaddr))

    _, _, dyn_offset, _, _, dyn_size, _, _ = dynamic[0]
    entries = [struct.unpack_from("<qQ", data, dyn_offset + i)
               for i in range(0, dyn_size, 16)]
    strtab = next(v for tag, v in entries if tag == 5)  # DT_STRTAB
    strtab_offset = file_offset(strtab)
    names = []
    for tag, value in entries:
        if tag == 0:
            break
        if tag == 1:  # DT_NEEDED
            start = strtab_offset + value
            names.append(data[start:data.index(b"\0", start)].decode())
    return names


def plan(root):
    bundle = load_bundle(root)
    transports = bundle["transports"]
    lines = [["probe", bundle["probe"]], ["kernels", bundle["kernel_tests"]]]
    for check in bundle["checks"]:
        lines.append(["check", check["name"], check["dir"],
                      str(check["stages"]), transports[check["transport"]],
                      check["data"], check["reference"],
                      check.get("tolerance", "fp32")])
    for bench in bundle["bench"]:
        lines.append(["bench", bench["name"], bench["dir"],
                      str(bench["stages"]), transports[bench["transport"]],
                      bench["weights"], str(bench["steps"]),
                      str(bench["warmup_steps"]),
                      repr(float(bench["model_flops"]["flops_per_sample"])),
                      str(bundle["peak_tflops"])])
    for line in lines:
        print("|".join(line))


def validate(root):
    """Checks everything gpu-check.sh will use, without a GPU."""
    problems, notes = [], []
    try:
        bundle = load_bundle(root)
    except (OSError, ValueError) as error:
        print("FAIL bundle.json: %s" % error)
        return 1

    # Integrity: the manifest's hashes, and nothing unlisted.
    manifest = os.path.join(root, "MANIFEST.sha256")
    listed = set()
    try:
        with open(manifest) as f:
            for line in f:
                digest, name = line.rstrip("\n").split("  ", 1)
                listed.add(name)
                path = os.path.join(root, name)
                if not os.path.isfile(path):
                    problems.append("%s is listed in MANIFEST.sha256 but "
                                    "missing" % name)
                    continue
                with open(path, "rb") as g:
                    if hashlib.sha256(g.read()).hexdigest() != digest:
                        problems.append("%s differs from MANIFEST.sha256" %
                                        name)
    except (OSError, ValueError) as error:
        problems.append("MANIFEST.sha256: %s" % error)
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            total += os.path.getsize(path)
            rel = os.path.relpath(path, root)
            if rel != "MANIFEST.sha256" and listed and rel not in listed:
                problems.append("%s is not in MANIFEST.sha256" % rel)
    if total > BUNDLE_SIZE_LIMIT:
        problems.append("the bundle is %.1f MiB, over 60 MiB" %
                        (total / 1048576))

    def need_file(rel, executable=False):
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            problems.append("missing %s" % rel)
            return False
        if executable and not os.access(path, os.X_OK):
            problems.append("%s is not executable" % rel)
            return False
        return True

    executables = []
    need_file("gpu-check.sh", executable=True)
    for rel in [bundle["probe"], bundle["kernel_tests"]]:
        if need_file(rel, executable=True):
            executables.append(rel)
    for rel in ["scripts/compare_grads.py", "scripts/make_weights.py",
                "scripts/gpu_check_lib.py"]:
        need_file(rel)
    transports = bundle.get("transports", {})
    for run in bundle["checks"] + bundle["bench"]:
        if run["transport"] not in transports:
            problems.append("%s: unknown transport %s" % (run["name"],
                                                          run["transport"]))
        need_file(os.path.join(run["dir"], "launch"), executable=True)
        if need_file(os.path.join(run["dir"], "pipeline.json")):
            # Ranks compiled for this machine's CPU refuse to start on
            # another one (the GPU machine's): they must be generic.
            with open(os.path.join(root, run["dir"], "pipeline.json")) as f:
                features = json.load(f).get("target_cpu", {}).get(
                    "required_features", [])
            if features:
                problems.append("%s: its ranks need CPU features %s (compile "
                                "with --target-cpu generic)" %
                                (run["name"], ", ".join(features[:4]) +
                                 (", ..." if len(features) > 4 else "")))
        for rank in range(run["stages"]):
            rel = os.path.join(run["dir"], "rank%d" % rank)
            if need_file(rel, executable=True):
                executables.append(rel)
    for check in bundle["checks"]:
        if need_file(check["reference"]):
            with open(os.path.join(root, check["reference"]), "rb") as f:
                (length,) = struct.unpack("<Q", f.read(8))
                header = json.loads(f.read(length))
            if "loss" not in header or not any(
                    k.startswith("grad.") for k in header):
                problems.append("%s holds no loss or gradients" %
                                check["reference"])
        data = os.path.join(root, check["data"])
        if not os.path.isdir(data) or not any(
                n.endswith(".npy") for n in os.listdir(data)):
            problems.append("%s: no .npy data in %s" % (check["name"],
                                                       check["data"]))
    for bench in bundle["bench"]:
        if need_file(bench["weights"]):
            with open(os.path.join(root, bench["weights"])) as f:
                tensors = json.load(f).get("tensors", {})
            if not tensors:
                problems.append("%s lists no tensors" % bench["weights"])
        flops = bench.get("model_flops", {}).get("flops_per_sample", 0)
        if not flops > 0:
            problems.append("%s: no model FLOPs per sample" % bench["name"])

    # Libraries: what the GPU machine provides, or the bundle's lib/.
    bundled = set(os.listdir(os.path.join(root, "lib"))) if os.path.isdir(
        os.path.join(root, "lib")) else set()
    for rel in executables:
        needed = elf_needed(os.path.join(root, rel))
        if needed is None:
            problems.append("%s is not a 64-bit ELF file" % rel)
            continue
        for lib in needed:
            if FORBIDDEN.match(lib):
                problems.append("%s needs %s, which GPU machines lack" %
                                (rel, lib))
            elif not PROVIDED.match(lib) and lib not in bundled:
                problems.append("%s needs %s, which is not in lib/" %
                                (rel, lib))
        notes.append("%s: needs %s" % (rel, ", ".join(needed) or "nothing"))

    for note in notes:
        print("     %s" % note)
    for problem in problems:
        print("FAIL %s" % problem)
    print("dry run: %d executables, %d checks, %d benchmark runs, %.1f MiB: "
          "%s" % (len(executables), len(bundle["checks"]),
                  len(bundle["bench"]), total / 1048576,
                  "bundle OK" if not problems else
                  "%d problems" % len(problems)))
    return 1 if problems else 0


def bench_report(log, flops_per_sample, warmup, peak_tflops):
    steps = [(int(m.group(1)), float(m.group(2)), float(m.group(3)))
             for m in re.finditer(r"^step (\d+) loss (\S+) samples/s (\S+)",
                                  open(log).read(), re.MULTILINE)]
    timed = [s for s in steps if s[0] > warmup]
    if not timed:
        raise SystemExit("bench-report: no step after the %d warm-up steps "
                         "in %s" % (warmup, log))
    rate = statistics.median(s[2] for s in timed)
    tflops = rate * flops_per_sample / 1e12
    json.dump({"samples_per_s": rate, "tflops": tflops,
               "mfu": tflops / peak_tflops, "peak_tflops": peak_tflops,
               "flops_per_sample": flops_per_sample,
               "timed_steps": [timed[0][0], timed[-1][0]],
               "first_loss": steps[0][1], "last_loss": steps[-1][1]},
              sys.stdout)
    print()


def timers_report(log):
    """One line of each rank's median step (`timers rank R median ...`)."""
    parts = []
    pattern = re.compile(r"^timers rank (\d+) median steps \d+ (.*)$",
                         re.MULTILINE)
    for match in pattern.finditer(open(log).read()):
        fields = dict(re.findall(r"(\w+)_ms (-?[0-9.]+)", match.group(2)))
        if "step" not in fields:
            continue
        parts.append("rank %s step %.2f ms (compute %.2f, wait %.2f, "
                     "optimizer %.2f)" % (
                         match.group(1), float(fields["step"]),
                         float(fields.get("compute", 0)),
                         float(fields.get("wait", 0)),
                         float(fields.get("optimizer", 0))))
    if not parts:
        raise SystemExit("timers-report: no `timers rank R median` line in "
                         "%s" % log)
    print("; ".join(parts))


# ncu --print-summary per-kernel: a kernel's heading, then its metric line.
KERNEL_HEADING = re.compile(
    r"^\s+(\S.*?) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\)"
    r".*Invocations (\d+)")
TIME_UNITS = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0,
              "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}


def kernel_summary(path, steps, top):
    """The kernels by total time from ncu's per-kernel summary."""
    rows, heading = [], None
    for line in open(path, errors="replace"):
        match = KERNEL_HEADING.match(line)
        if match:
            heading = match
            continue
        fields = line.split()
        if heading and fields and fields[0] == "gpu__time_duration.sum":
            try:
                average = float(fields[-1].replace(",", "")) * \
                    TIME_UNITS[fields[1]]
            except (KeyError, ValueError):
                continue
            calls = int(heading.group(8))
            grid = "grid %s,%s,%s x %s" % heading.group(2, 3, 4, 5)
            rows.append((average * calls, calls, average,
                         heading.group(1), grid))
            heading = None
    if not rows:
        raise SystemExit("kernel-summary: no kernel times in %s (ncu "
                         "--metrics gpu__time_duration.sum --print-summary "
                         "per-kernel)" % path)
    rows.sort(key=lambda row: -row[0])
    total = sum(row[0] for row in rows)
    print("%.2f ms of kernels per step, %d launches per step, %d kernels" % (
        total / 1e3 / steps, sum(row[1] for row in rows) // steps,
        len(rows)))
    print("share  ms/step  calls/step  us/call  kernel")
    for row in rows[:top]:
        print("%4.1f%% %8.3f %11.1f %8.1f  %s (%s)" % (
            100 * row[0] / total, row[0] / 1e3 / steps, row[1] / steps,
            row[2], row[3][:80], row[4]))


def describe_weights(outdir, path):
    tensors = {}
    for name in sorted(os.listdir(outdir)):
        if not re.fullmatch(r"rank\d+\.safetensors", name):
            continue
        with open(os.path.join(outdir, name), "rb") as f:
            (length,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(length))
        for tensor, info in header.items():
            if tensor != "__metadata__":
                tensors[tensor] = {"dtype": info["dtype"],
                                   "shape": info["shape"]}
    if not tensors:
        raise SystemExit("describe-weights: no rank*.safetensors in %s" %
                         outdir)
    with open(path, "w") as f:
        json.dump({"tensors": tensors}, f, indent=1, sort_keys=True)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "plan":
        plan(sys.argv[2])
        return 0
    if len(sys.argv) >= 3 and sys.argv[1] == "validate":
        return validate(sys.argv[2])
    if len(sys.argv) >= 3 and sys.argv[1] == "needed":
        for path in sys.argv[2:]:
            print("%s: %s" % (path, " ".join(elf_needed(path) or [])))
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "describe-weights":
        describe_weights(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "timers-report":
        timers_report(sys.argv[2])
        return 0
    if len(sys.argv) == 5 and sys.argv[1] == "kernel-summary":
        kernel_summary(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return 0
    if len(sys.argv) == 6 and sys.argv[1] == "bench-report":
        bench_report(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]),
                     float(sys.argv[5]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
